/**
 * MCP sessions (Streamable HTTP `Mcp-Session-Id`, 2025 protocol revisions): a random id, bound to the account that
 * opened it, kept in HotState (McpSessionStore: process memory when embedded, Redis in scale mode), so every control
 * process knows every session and no load balancer needs sticky routing. A session is dropped after 30 idle
 * minutes, and an account holds at most 20 (opening one more ends its least recently used).
 *
 * A session holds no data and no server: every request is served by a fresh MCP server (routes.ts), because every
 * tool answers at once and the server never sends on its own. Losing a session (expiry, eviction, DELETE) costs a
 * client only a new `initialize`: the transport spec tells clients to start over on 404.
 */
import { randomUUID } from "node:crypto";
import type { McpSessionStore } from "../../shared/ports.ts";

export interface SessionLimits {
  /** Sessions kept per account; a further one ends that account's least recently used session. */
  maxPerAccount: number;
  /** A session unused for this long is gone. */
  idleMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { maxPerAccount: 20, idleMs: 30 * 60_000 };

/** What `open` issues: anything else is no session of ours, answered without asking the store. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class McpSessions {
  constructor(
    private readonly store: McpSessionStore,
    private readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
  ) {}

  /** A new session of `accountId`; its id goes to the client in `Mcp-Session-Id`. */
  async open(accountId: string): Promise<string> {
    const id = randomUUID();
    await this.store.openMcpSession(accountId, id, this.limits.idleMs, this.limits.maxPerAccount);
    return id;
  }

  /**
   * Whether `id` is a live session of `accountId`, marking it used. Unknown, expired and other accounts' ids are
   * all false alike, so session ids of other accounts cannot be probed.
   */
  use(id: string, accountId: string): Promise<boolean> {
    if (!SESSION_ID.test(id)) return Promise.resolve(false);
    return this.store.touchMcpSession(accountId, id, this.limits.idleMs);
  }

  /** Ends session `id` of `accountId` on every process; false when there was no such live session. */
  end(id: string, accountId: string): Promise<boolean> {
    if (!SESSION_ID.test(id)) return Promise.resolve(false);
    return this.store.endMcpSession(accountId, id);
  }
}
