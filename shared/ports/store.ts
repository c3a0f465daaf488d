/**
 * The store (design §2): the source of truth, one port per role. Each adapter (SQLite, Postgres) implements
 * all of them as one `Store`; code that needs only a role is typed with that role.
 */
import type { AccountStore } from "./accounts.ts";
import type { AdminStore } from "./admin.ts";
import type { ClickStore } from "./clicks.ts";
import type { ImportStore } from "./imports.ts";
import type { EventWebhookStore } from "./event-webhooks.ts";
import type { KeyStore } from "./keys.ts";
import type { LinkStore } from "./links.ts";
import type { OAuthStore } from "./oauth.ts";
import type { DomainStore } from "./domains.ts";
import type { WorkspaceStore } from "./workspaces.ts";
import type { AuditStore } from "./audit.ts";

export type Store = AccountStore & KeyStore & LinkStore & ClickStore & AdminStore & EventWebhookStore & ImportStore & OAuthStore & DomainStore & WorkspaceStore & AuditStore;
