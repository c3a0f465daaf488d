/**
 * The imports role of the Store (shared/ports/imports.ts), run against both adapters by imports-sqlite.test.ts and
 * imports-postgres.test.ts: jobs round-trip and stay inside their account, restarts interrupt only stale jobs, and
 * the batched look-ups and the history write an import plans with.
 */
import { describe, expect, test } from "bun:test";
import type { ImportJob } from "../../shared/ports/imports.ts";
import type { Store } from "../../shared/ports.ts";
import { DOMAIN, linkFor, storeContext, T0, uid, uniqueSlug } from "./store-harness.ts";

function jobFor(accountId: string, over: Partial<ImportJob> = {}): ImportJob {
  return {
    id: uid(), accountId, format: "bitly", onConflict: "skip", fileName: "links ünï.csv", status: "queued",
    totalRows: 0, progress: 0, counts: { created: 0, skipped: 0, renamed: 0, failed: 0 }, rows: [], error: null,
    createdAt: T0, updatedAt: T0, finishedAt: null, ...over,
  };
}

export function runImportsContract(name: string, make: () => Promise<Store>, cleanup?: () => Promise<void>): void {
  describe(`Store contract, imports: ${name}`, () => {
    const ctx = storeContext(make, cleanup);

    test("a job round-trips, is saved as it runs, and only its account sees it", async () => {
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const job = jobFor(a);
      await ctx.store.createImportJob(job);
      expect(await ctx.store.getImportJob(a, job.id)).toEqual(job);
      expect(await ctx.store.getImportJob(b, job.id)).toBeNull();
      const done: ImportJob = {
        ...job, status: "done", totalRows: 3, progress: 1, counts: { created: 1, skipped: 1, renamed: 0, failed: 1 },
        rows: [{ row: 3, outcome: "failed", code: "invalid_url", message: "must use http or https", slug: "=cmd|' /C calc'!A0" }],
        error: null, updatedAt: T0 + 5, finishedAt: T0 + 5,
      };
      await ctx.store.saveImportJob(done);
      expect(await ctx.store.getImportJob(a, job.id)).toEqual(done);
    });

    test("jobs are listed newest first, per account, up to the limit", async () => {
      const a = await ctx.newAccount();
      const jobs = [0, 1, 2].map((i) => jobFor(a, { createdAt: T0 + i }));
      for (const j of jobs) await ctx.store.createImportJob(j);
      await ctx.store.createImportJob(jobFor(await ctx.newAccount()));
      expect((await ctx.store.listImportJobs(a, 2)).map((j) => j.id)).toEqual([jobs[2].id, jobs[1].id]);
    });

    test("interrupting marks only jobs under way whose last step is older than the bound", async () => {
      const a = await ctx.newAccount();
      const stale = jobFor(a, { status: "writing", updatedAt: T0 - 1 });
      const fresh = jobFor(a, { status: "validating", updatedAt: T0 + 1 });
      const finished = jobFor(a, { status: "done", updatedAt: T0 - 1, finishedAt: T0 - 1 });
      for (const j of [stale, fresh, finished]) await ctx.store.createImportJob(j);
      expect(await ctx.store.interruptImportJobs(T0, T0 + 10)).toBeGreaterThanOrEqual(1);
      const after = await ctx.store.getImportJob(a, stale.id);
      expect(after?.status).toBe("interrupted");
      expect(after?.error?.code).toBe("interrupted");
      expect(after?.finishedAt).toBe(T0 + 10);
      expect((await ctx.store.getImportJob(a, fresh.id))?.status).toBe("validating");
      expect((await ctx.store.getImportJob(a, finished.id))?.status).toBe("done");
    });

    test("taken slugs and externalIds are found many at a time (past one IN list), externalIds per account", async () => {
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const links = Array.from({ length: 600 }, (_, i) => linkFor(a, { externalId: `bitly:${uid()}`, slug: uniqueSlug(`i${i}`) }));
      await ctx.insertOk(links);
      const free = uniqueSlug("free");
      const slugs = [...links.map((l) => l.slug), free];
      expect(await ctx.store.takenSlugs(DOMAIN, slugs)).toEqual(new Set(links.map((l) => l.slug)));
      expect((await ctx.store.takenSlugs("other.test", slugs)).size).toBe(0);
      const ids = [...links.map((l) => l.externalId!), "bitly:none"];
      expect(await ctx.store.takenExternalIds(a, ids)).toEqual(new Set(links.map((l) => l.externalId!)));
      expect((await ctx.store.takenExternalIds(b, ids)).size).toBe(0);
      expect((await ctx.store.takenSlugs(DOMAIN, [])).size).toBe(0);
    });

    test("imported history sets the creation date and raises hits, never lowers them, and only in the account", async () => {
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const [l1, l2, l3] = [linkFor(a, { externalId: "x:1" }), linkFor(a, { externalId: "x:2", hits: 50 }), linkFor(b, { externalId: "x:1" })];
      await ctx.insertOk([l1, l2, l3]);
      const history = [
        { externalId: "x:1", createdAt: T0 - 1000, clicks: 42 },
        { externalId: "x:2", createdAt: null, clicks: 7 },
      ];
      await ctx.store.applyImportedHistory(a, history);
      await ctx.store.applyImportedHistory(a, history); // idempotent
      const [r1, r2, r3] = await Promise.all([l1, l2, l3].map((l) => ctx.store.getLinkById(l.id)));
      expect([r1?.createdAt, r1?.hits]).toEqual([T0 - 1000, 42]);
      expect([r2?.createdAt, r2?.hits]).toEqual([T0, 50]);
      expect([r3?.createdAt, r3?.hits]).toEqual([T0, 0]);
    });
  });
}
