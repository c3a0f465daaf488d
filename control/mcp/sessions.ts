/**
 * MCP sessions (Streamable HTTP `Mcp-Session-Id`) kept in this process: one SDK transport + server per session,
 * bound to the account that opened it, dropped after 30 idle minutes, and bounded in number so that opening
 * sessions cannot exhaust memory (the least recently used one is closed first).
 *
 * A session holds no data of its own (every tool call reads the store), so losing one (restart, eviction, expiry)
 * costs a client only a new `initialize`: the transport spec tells clients to start over on 404.
 */
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Caller } from "../deps.ts";

export interface SessionLimits {
  /** Sessions kept in the whole process. */
  maxSessions: number;
  /** Sessions kept per account; a further one closes that account's least recently used session. */
  maxPerAccount: number;
  /** A session unused for this long is gone. */
  idleMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { maxSessions: 1000, maxPerAccount: 20, idleMs: 30 * 60_000 };

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  accountId: string;
  lastUsed: number;
}

export class McpSessions {
  /** Insertion order is use order: `touch` moves a session to the end, so the first entries are the idlest. */
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly now: () => number,
    private readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Creates a transport for an `initialize` request whose session is registered, bound to `caller`'s account, the
   * moment the SDK assigns its id. The caller hands the initialize request to the returned transport.
   */
  open(caller: Caller, server: Server): WebStandardStreamableHTTPServerTransport {
    this.sweep();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      // Our tools answer at once and the server never talks first, so plain JSON answers suffice (no SSE).
      enableJsonResponse: true,
      onsessioninitialized: (id): void => this.add(id, { transport, server, accountId: caller.accountId, lastUsed: this.now() }),
      onsessionclosed: (id) => void this.sessions.delete(id),
    });
    return transport;
  }

  /**
   * The live session `id` of `accountId`, marked as used; undefined when it is unknown, expired or belongs to
   * another account (all answered alike, so session ids of other accounts cannot be probed).
   */
  get(id: string, accountId: string): Session | undefined {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (this.now() - s.lastUsed > this.limits.idleMs) {
      this.close(id, s);
      return undefined;
    }
    if (s.accountId !== accountId) return undefined;
    this.sessions.delete(id);
    s.lastUsed = this.now();
    this.sessions.set(id, s);
    return s;
  }

  /** Closes every session (shutdown, tests). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions].map(([id, s]) => this.close(id, s)));
  }

  private add(id: string, s: Session): void {
    const own = [...this.sessions].filter(([, o]) => o.accountId === s.accountId);
    if (own.length >= this.limits.maxPerAccount) void this.close(own[0][0], own[0][1]);
    if (this.sessions.size >= this.limits.maxSessions) {
      const [oldestId, oldest] = this.sessions.entries().next().value!;
      void this.close(oldestId, oldest);
    }
    this.sessions.set(id, s);
  }

  /** Drops sessions idle for too long; they sit at the front of the map, so this stops at the first live one. */
  private sweep(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) {
      if (now - s.lastUsed <= this.limits.idleMs) break;
      void this.close(id, s);
    }
  }

  private async close(id: string, s: Session): Promise<void> {
    this.sessions.delete(id);
    await s.server.close().catch(() => {});
  }
}
