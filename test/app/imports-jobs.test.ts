/**
 * Import jobs as the control process runs them: one at a time per account (a second job of the account starts
 * only once the first has ended, while another account's job need not wait), and a restart marks the jobs a
 * stopped process left under way as interrupted.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import type { ImportJob } from "../../shared/ports/imports.ts";
import { startImport } from "../../control/imports/service.ts";
import { jsonOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
beforeAll(async () => (cp = await startControlPlane()));
afterAll(() => cp.close());

const csv = (prefix: string, n: number) => `long_url,link\n${Array.from({ length: n }, (_, i) => `https://example.com/${prefix}/${i},https://bit.ly/${prefix}-${i}`).join("\n")}\n`;

test("an account's jobs run one after the other; the steps they save show the second starting after the first ended", async () => {
  const a = await cp.createKey("queue-a@example.com");
  const store = cp.deps.store;
  const save = store.saveImportJob;
  const steps: string[] = [];
  store.saveImportJob = async (job: ImportJob) => {
    steps.push(`${job.id} ${job.status}`);
    return save.call(store, job);
  };
  try {
    const bytes = (s: string) => new TextEncoder().encode(s);
    const first = await startImport(cp.deps, a.caller, bytes(csv("first", 1200)), { format: "bitly" });
    const second = await startImport(cp.deps, a.caller, bytes(csv("second", 10)), { format: "bitly" });
    await Promise.all([first.done, second.done]);
    const firstDone = steps.indexOf(`${first.job.id} done`);
    const secondStarts = steps.indexOf(`${second.job.id} validating`);
    expect(firstDone).toBeGreaterThanOrEqual(0);
    expect(secondStarts).toBeGreaterThan(firstDone);
    expect(steps.filter((s) => s.startsWith(first.job.id)).length).toBeGreaterThan(3); // writing saved per 500 rows
  } finally {
    store.saveImportJob = save;
  }
});

test("a restart marks the jobs left under way as interrupted; the ended ones stay as they were", async () => {
  const { key, account } = await cp.createKey("restart@example.com");
  const at = cp.clock.now();
  const job = (id: string, status: ImportJob["status"]): ImportJob => ({
    id, accountId: account.id, format: "bitly", onConflict: "skip", fileName: "x.csv", status, totalRows: 10, progress: 0.5,
    counts: { created: 5, skipped: 0, renamed: 0, failed: 0 }, rows: [], error: null, createdAt: at, updatedAt: at, finishedAt: null,
  });
  await cp.deps.store.createImportJob(job("imp_leftover", "writing"));
  await cp.deps.store.createImportJob({ ...job("imp_ended", "done"), finishedAt: at });
  // A second control plane on the same database: the process starting again.
  const again = await startControlPlane({ store: new SqliteStore(join(cp.deps.config.dataDir, "clink.sqlite")), now: at + 1000 });
  try {
    const leftover = await jsonOf(await again.request("GET", "/api/v1/imports/imp_leftover", { key }));
    expect(leftover).toMatchObject({ status: "interrupted", counts: { created: 5 }, error: { code: "interrupted" } });
    expect(leftover.error.message).toContain("send the same file again");
    expect((await jsonOf(await again.request("GET", "/api/v1/imports/imp_ended", { key }))).status).toBe("done");
  } finally {
    await again.close();
  }
});
