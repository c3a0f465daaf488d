/**
 * McpSessionStore in process memory (embedded default: one control process). Each account's sessions in a Map
 * whose insertion order is use order (a touch moves a session to the end), so the first entry is the least
 * recently used, ended first when the account opens one too many.
 */
import type { McpSessionStore } from "../../ports.ts";

export class MemoryMcpSessions implements McpSessionStore {
  /** accountId -> session id -> when it expires unused. */
  private readonly accounts = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  async openMcpSession(accountId: string, id: string, idleMs: number, maxPerAccount: number): Promise<void> {
    const own = this.live(accountId) ?? new Map<string, number>();
    while (own.size >= maxPerAccount) own.delete(own.keys().next().value!);
    own.set(id, this.now() + idleMs);
    this.accounts.set(accountId, own);
  }

  async touchMcpSession(accountId: string, id: string, idleMs: number): Promise<boolean> {
    const own = this.live(accountId);
    if (!own?.has(id)) return false;
    own.delete(id);
    own.set(id, this.now() + idleMs);
    return true;
  }

  async endMcpSession(accountId: string, id: string): Promise<boolean> {
    return this.live(accountId)?.delete(id) ?? false;
  }

  /** Drops expired sessions and accounts left without any (called by MemoryHotState's sweep timer). */
  sweep(): void {
    for (const accountId of [...this.accounts.keys()]) this.live(accountId);
  }

  /** The account's sessions with the expired ones removed: they sit at the front, so this stops at the first live one. */
  private live(accountId: string): Map<string, number> | undefined {
    const own = this.accounts.get(accountId);
    if (!own) return undefined;
    const now = this.now();
    for (const [id, expires] of own) {
      if (expires > now) break;
      own.delete(id);
    }
    if (own.size === 0) this.accounts.delete(accountId);
    return own;
  }
}
