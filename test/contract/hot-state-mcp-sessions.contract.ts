/** The McpSessionStore contract (HotState role): run against every adapter by hot-state.contract.ts. */
import { describe, expect, test } from "bun:test";
import type { McpSessionStore } from "../../shared/ports.ts";
import { instances, uid } from "./hot-state-harness.ts";

const MINUTE = 60_000;

export function runMcpSessionsContract(make: () => Promise<McpSessionStore>) {
  describe("MCP sessions", () => {
    const instance = instances(make);

    test("a session opened by one process is live for another, for its own account only", async () => {
      const [a, b] = [await instance(), await instance()];
      const [account, other, id] = [`acct-${uid()}`, `acct-${uid()}`, crypto.randomUUID()];
      await a.openMcpSession(account, id, 30 * MINUTE, 20);
      expect(await b.touchMcpSession(account, id, 30 * MINUTE)).toBe(true);
      expect(await b.touchMcpSession(other, id, 30 * MINUTE)).toBe(false);
      expect(await a.touchMcpSession(account, crypto.randomUUID(), 30 * MINUTE)).toBe(false);
    });

    test("ending a session in one process ends it in every other; ending it again finds nothing", async () => {
      const [a, b] = [await instance(), await instance()];
      const [account, id] = [`acct-${uid()}`, crypto.randomUUID()];
      await a.openMcpSession(account, id, 30 * MINUTE, 20);
      expect(await b.endMcpSession(`acct-${uid()}`, id)).toBe(false);
      expect(await b.endMcpSession(account, id)).toBe(true);
      expect(await a.touchMcpSession(account, id, 30 * MINUTE)).toBe(false);
      expect(await a.endMcpSession(account, id)).toBe(false);
    });

    test("an account past its limit loses its least recently used session; other accounts keep theirs", async () => {
      const [a, b] = [await instance(), await instance()];
      const [account, other] = [`acct-${uid()}`, `acct-${uid()}`];
      const [s1, s2, s3, o1] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
      await a.openMcpSession(other, o1, 30 * MINUTE, 2);
      await a.openMcpSession(account, s1, 30 * MINUTE, 2);
      await Bun.sleep(5); // Redis orders by expiry in milliseconds: s2's use must come later than s1's
      await b.openMcpSession(account, s2, 30 * MINUTE, 2);
      await Bun.sleep(5);
      expect(await a.touchMcpSession(account, s1, 30 * MINUTE)).toBe(true); // s2 is now the least recently used
      await Bun.sleep(5);
      await b.openMcpSession(account, s3, 30 * MINUTE, 2);
      const live = await Promise.all([s1, s2, s3].map((id) => a.touchMcpSession(account, id, 30 * MINUTE)));
      expect(live).toEqual([true, false, true]);
      expect(await b.touchMcpSession(other, o1, 30 * MINUTE)).toBe(true);
    });

    test("a session unused for idleMs is gone; each use restarts its clock", async () => {
      const h = await instance();
      const account = `acct-${uid()}`;
      const [idle, used] = [crypto.randomUUID(), crypto.randomUUID()];
      // Margins that a busy machine cannot eat: sleeping longer only makes the idle one more surely gone, and the
      // used one is touched every 250 ms against a 1.5 s idle limit, twice that limit in all.
      await h.openMcpSession(account, idle, 300, 20);
      await h.openMcpSession(account, used, 1_500, 20);
      await Bun.sleep(400);
      expect(await h.touchMcpSession(account, idle, 300)).toBe(false);
      for (let i = 0; i < 12; i++) {
        await Bun.sleep(250);
        expect(await h.touchMcpSession(account, used, 1_500)).toBe(true);
      }
      expect(await h.endMcpSession(account, idle)).toBe(false);
    });
  });
}
