/**
 * Case 7: memory under sustained load. A plain link redirected at full speed for 60 s (5 s in --quick), with
 * VmRSS sampled from /proc every 250 ms and the kernel's own peak (VmHWM) read at the end.
 *
 * - The embedded process (redirector, control plane and click writer in one): its peak, for information. Clicks
 *   the writer thread has not stored yet live in this memory, so a writer that falls behind shows up here.
 * - The Redis-mode redirector (run from redis-redirect.ts, whose servers are up): the target that its
 *   RSS stays flat, within ±10%. "Warm" is after the first fifth of the run (JIT, buffers and pools reach their
 *   working size); the level at the end (median of the last tenth) must be within 10% of the level once warm
 *   (median of the tenth after the first fifth). The sawtooth of single samples is reported too.
 */
import { createLink, startEmbedded, type Clink } from "../lib/app.ts";
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { generatorCheck, describeGenerator } from "../lib/compare.ts";
import type { LoadResult } from "../lib/load.ts";
import { processMemory, waitIdle } from "../lib/procfs.ts";
import { median } from "../lib/stats.ts";

interface RssRun {
  run: LoadResult;
  idleRssMb: number;
  vmHwmMb: number;
  afterRssMb: number;
  drainMs: number;
  samples: { t: number; rssMb: number }[];
}

/** Full-speed load on `slug` for ctx.opts.rssS seconds while sampling the RSS of `pid`. */
async function sampleRss(ctx: Ctx, app: Clink, slug: string, pid: number): Promise<RssRun> {
  await waitIdle(app.processes.map((p) => p.pid));
  const idle = processMemory(pid)!;
  const samples: { t: number; rssMb: number }[] = [];
  const t0 = performance.now();
  const sampler = setInterval(() => {
    const m = processMemory(pid);
    if (m) samples.push({ t: Math.round(performance.now() - t0), rssMb: Math.round(m.rssMb * 10) / 10 });
  }, 250);
  const c = ctx.opts.connections;
  const run = await ctx.load(
    { baseUrl: app.redirect.url, variants: [{ path: `/${slug}` }], expect: "3xx", durationS: ctx.opts.rssS, connections: c, serverPids: [pid] },
    ctx.redirectGenerator,
  );
  const loadEnd = Math.round(performance.now() - t0);
  const drain = await waitIdle(app.processes.map((p) => p.pid), { timeoutMs: 120_000 });
  clearInterval(sampler);
  const after = processMemory(pid)!;
  return { run, idleRssMb: idle.rssMb, vmHwmMb: after.peakRssMb, afterRssMb: after.rssMb, drainMs: drain.ms, samples: samples.filter((s) => s.t <= loadEnd) };
}

/**
 * RSS once warm (after the first fifth of the run): `reference` is the median of the next tenth, `end` the
 * median of the last tenth relative to it (the drift), `high`/`low` the extreme single samples relative to it
 * (garbage collection makes RSS a sawtooth of a few MiB around its level).
 */
export function rssDrift(samples: { t: number; rssMb: number }[], runMs: number): { reference: number; end: number; high: number; low: number } {
  const warm = samples.filter((s) => s.t >= runMs * 0.2);
  // A short run (--smoke: 2 s of 250 ms samples) may have no sample in a tenth: the nearest one stands in.
  const window = (inside: typeof warm, nearest: typeof warm) => median((inside.length ? inside : nearest).map((s) => s.rssMb));
  const ref = window(warm.filter((s) => s.t < runMs * 0.3), warm.slice(0, 1));
  const end = window(warm.filter((s) => s.t >= runMs * 0.9), warm.slice(-1));
  const values = warm.map((s) => s.rssMb);
  return { reference: ref, end: end / ref, high: Math.max(...values) / ref, low: Math.min(...values) / ref };
}

export async function peakRss(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-rss");
  try {
    const slug = "bench-rss";
    await createLink(app, { url: "https://example.com/landing", slug });
    const r = await sampleRss(ctx, app, slug, app.redirect.pid);
    const sampledPeak = Math.max(...r.samples.map((s) => s.rssMb));
    const drift = rssDrift(r.samples, r.run.durationS * 1000);
    const baseline = processMemory(ctx.baseline.pid);
    ctx.log(`  peak RSS ${r.vmHwmMb.toFixed(0)} MiB (idle ${r.idleRssMb.toFixed(0)} MiB) at ${Math.round(r.run.rps)} redirects/s`);
    const c = ctx.opts.connections;
    return [
      {
        id: "peak-rss",
        caseNo: 7,
        title: `Embedded: peak RSS over a ${ctx.opts.rssS} s full-speed redirect run`,
        verdict: r.run.errors || r.run.unexpected ? "fail" : "info",
        generator: describeGenerator(r.run.generator, c, false),
        subject: { label: "clink embedded", peakRssMb: r.vmHwmMb, rps: r.run.rps, p50Ms: r.run.p50Ms, p99Ms: r.run.p99Ms },
        reference: baseline ? { label: "bare Bun.serve 302 (peak over the whole benchmark)", peakRssMb: baseline.peakRssMb } : undefined,
        ratio: baseline ? r.vmHwmMb / baseline.peakRssMb : undefined,
        ratioUnit: "× bare",
        generatorCheck: generatorCheck([r.run]),
        notes: [
          `RSS idle before the run ${r.idleRssMb.toFixed(1)} MiB; highest 250 ms sample ${sampledPeak.toFixed(1)} MiB; VmHWM ${r.vmHwmMb.toFixed(1)} MiB; ` +
            `${r.afterRssMb.toFixed(1)} MiB after the clicks were written (${(r.drainMs / 1000).toFixed(1)} s after the run).`,
          `Once warm (after the first fifth of the run) RSS ended at ${(drift.end * 100).toFixed(0)}% of its warm level of ${drift.reference.toFixed(1)} MiB; single samples ranged from ${(drift.low * 100).toFixed(0)}% to ${(drift.high * 100).toFixed(0)}%.`,
          `${r.run.requests.toLocaleString("en")} redirects in ${r.run.durationS.toFixed(0)} s.`,
        ],
        rounds: [r],
      },
    ];
  } finally {
    await app.stop();
  }
}

/**
 * The Redis-mode redirector's RSS over a full-speed run: it must stay flat, within ±10% (issue target), read as
 * its level at the end of the run against its level once warm (medians of a tenth of the run each). Single
 * samples swing with garbage collection; their range is reported beside it.
 */
export async function redisRedirectorRss(ctx: Ctx, app: Clink, slug: string): Promise<Figure> {
  const r = await sampleRss(ctx, app, slug, app.redirect.pid);
  const drift = rssDrift(r.samples, r.run.durationS * 1000);
  const flat = drift.end <= 1.1 && drift.end >= 0.9;
  ctx.log(`  redirector RSS at the end ${(drift.end * 100).toFixed(0)}% of ${drift.reference.toFixed(0)} MiB once warm (samples ${(drift.low * 100).toFixed(0)}-${(drift.high * 100).toFixed(0)}%)`);
  const c = ctx.opts.connections;
  return {
    id: "rss-redis",
    caseNo: 7,
    title: `Redis mode: redirector RSS over a ${ctx.opts.rssS} s full-speed run (level at the end ÷ level once warm)`,
    verdict: r.run.errors || r.run.unexpected || !flat ? "fail" : "pass",
    generator: describeGenerator(r.run.generator, c, false),
    subject: { label: "RSS at the end (median of the last 10% of the run)", peakRssMb: drift.reference * drift.end, rps: r.run.rps, p50Ms: r.run.p50Ms, p99Ms: r.run.p99Ms },
    reference: { label: "RSS once warm (median of the 10% after the first 20%)", peakRssMb: drift.reference },
    ratio: drift.end,
    ratioUnit: "× warm RSS",
    target: { op: "<=", value: 1.1 },
    generatorCheck: generatorCheck([r.run]),
    notes: [
      `RSS ended at ${(drift.end * 100).toFixed(1)}% of its warm level of ${drift.reference.toFixed(1)} MiB (target: 90-110%); single 250 ms samples ranged from ` +
        `${(drift.low * 100).toFixed(1)}% to ${(drift.high * 100).toFixed(1)}% of it (garbage-collection sawtooth). ` +
        `Idle before the run ${r.idleRssMb.toFixed(1)} MiB; VmHWM ${r.vmHwmMb.toFixed(1)} MiB; ${r.afterRssMb.toFixed(1)} MiB after the run.`,
      `${r.run.requests.toLocaleString("en")} redirects in ${r.run.durationS.toFixed(0)} s, every click queued in the Redis stream.`,
    ],
    rounds: [r],
  };
}
