/**
 * The storage ports (design §2). Each has two adapters and one contract test suite run against both:
 * Store (SQLite, Postgres; its roles in ports/) is the source of truth; HotState (memory, Redis) holds what the hot path reads.
 */
export * from "./ports/accounts.ts";
export * from "./ports/keys.ts";
export * from "./ports/links.ts";
export * from "./ports/clicks.ts";
export * from "./ports/admin.ts";
export * from "./ports/visitors.ts";
export * from "./ports/event-webhooks.ts";
export * from "./ports/domains.ts";
export * from "./ports/workspaces.ts";
export * from "./ports/audit.ts";
export * from "./ports/store.ts";

export * from "./ports/click-queue.ts";
export * from "./ports/hot-state.ts";
