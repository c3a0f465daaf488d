/**
 * Audit-log retention (control/audit/retention.ts) on the in-process control plane's real SQLite store and test
 * clock: entries older than AUDIT_RETENTION_DAYS go, the newer stay, in bounded batches; 0 keeps everything; the
 * setting's parsing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditPruneBound, pruneAuditLog } from "../../control/audit/retention.ts";
import { recordAudit } from "../../control/audit/service.ts";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { startControlPlane, START_TIME, type InProcessControlPlane } from "../helpers/in-process.ts";

const DAY = 86_400_000;
let cp: InProcessControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
});
afterAll(async () => {
  await cp?.close();
});

/** Records `n` entries in a fresh workspace at the clock's time; returns the workspace. */
async function recordAt(at: number, n: number, workspaceId = crypto.randomUUID()): Promise<string> {
  cp.clock.set(at);
  for (let i = 0; i < n; i++) await recordAudit(cp.deps, { workspaceId, accountId: null }, "link.created", { type: "link", id: `l${i}` });
  return workspaceId;
}
const count = async (workspaceId: string) => (await cp.deps.store.listAudit(workspaceId, { limit: 1_000 })).length;

describe("pruning", () => {
  test("entries older than the retention go when the clock passes it; younger ones and those at the bound stay", async () => {
    const old = await recordAt(START_TIME, 3);
    const young = await recordAt(START_TIME + 10 * DAY, 2);
    const retention = { store: cp.deps.store, retentionDays: 365, now: cp.clock.now, onError: (e: unknown) => { throw e; } };
    cp.clock.set(START_TIME + 365 * DAY); // exactly a year after the old entries: not older than it yet
    expect(await pruneAuditLog(retention)).toBe(0);
    cp.clock.advance(1);
    expect(await pruneAuditLog(retention)).toBe(3);
    expect([await count(old), await count(young)]).toEqual([0, 2]);
    cp.clock.advance(10 * DAY);
    expect(await pruneAuditLog(retention)).toBe(2);
    expect(await count(young)).toBe(0);
  });

  test("a round deletes in batches of the size given until one comes back short", async () => {
    const ws = await recordAt(START_TIME - 1_000 * DAY, 7);
    const sizes: number[] = [];
    const store = { pruneAudit: async (before: number, max: number) => {
      const n = await cp.deps.store.pruneAudit(before, max);
      sizes.push(n);
      return n;
    } };
    cp.clock.set(START_TIME);
    expect(await pruneAuditLog({ store, retentionDays: 30, now: cp.clock.now, onError: () => {} }, 3)).toBe(7);
    expect(sizes).toEqual([3, 3, 1]);
    expect(await count(ws)).toBe(0);
  });

  test("AUDIT_RETENTION_DAYS=0 keeps entries for ever", async () => {
    const ws = await recordAt(START_TIME - 5_000 * DAY, 1);
    cp.clock.set(START_TIME);
    expect(auditPruneBound(cp.clock.now(), 0)).toBeNull();
    expect(await pruneAuditLog({ store: cp.deps.store, retentionDays: 0, now: cp.clock.now, onError: () => {} })).toBe(0);
    expect(await count(ws)).toBe(1);
  });
});

describe("AUDIT_RETENTION_DAYS", () => {
  test("defaults to 365; takes whole days, 0 included", () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: "30" }).auditRetentionDays).toBe(30);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: "0" }).auditRetentionDays).toBe(0);
  });

  test.each(["-1", "1.5", "a year", "1e3"])("%p is refused, naming the variable", (bad) => {
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: bad })).toThrow(/AUDIT_RETENTION_DAYS/);
  });
});
