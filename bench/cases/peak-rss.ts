/**
 * Case 7: the redirector's memory under sustained load: the embedded process (redirector, control plane and
 * click writer in one) redirecting a plain link at full speed for 60 s (10 s in --quick), with VmRSS sampled
 * from /proc every 250 ms and the kernel's own peak (VmHWM) read at the end. Queued clicks the writer has not
 * yet stored live in this memory, so a writer that falls behind shows up here. For comparison: the bare
 * baseline's peak over everything it served in this benchmark. No §7 target: reported for information.
 */
import { createLink, startEmbedded } from "../lib/app.ts";
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { generatorCheck, describeGenerator } from "../lib/compare.ts";
import { processMemory, waitIdle } from "../lib/procfs.ts";

export async function peakRss(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-rss");
  try {
    const slug = "bench-rss";
    await createLink(app, { url: "https://example.com/landing", slug });
    const pid = app.redirect.pid;
    await waitIdle([pid]);
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
    const drain = await waitIdle([pid], { timeoutMs: 120_000 });
    clearInterval(sampler);
    const after = processMemory(pid)!;
    const sampledPeak = Math.max(...samples.map((s) => s.rssMb));
    const baseline = processMemory(ctx.baseline.pid);
    ctx.log(`  peak RSS ${after.peakRssMb.toFixed(0)} MiB (idle ${idle.rssMb.toFixed(0)} MiB) at ${Math.round(run.rps)} redirects/s`);
    return [
      {
        id: "peak-rss",
        caseNo: 7,
        title: `Embedded: peak RSS over a ${ctx.opts.rssS} s full-speed redirect run`,
        verdict: run.errors || run.unexpected ? "fail" : "info",
        generator: describeGenerator(run.generator, c, false),
        subject: { label: "clink embedded", peakRssMb: after.peakRssMb, rps: run.rps, p50Ms: run.p50Ms, p99Ms: run.p99Ms },
        reference: baseline ? { label: "bare Bun.serve 302 (peak over the whole benchmark)", peakRssMb: baseline.peakRssMb } : undefined,
        ratio: baseline ? after.peakRssMb / baseline.peakRssMb : undefined,
        ratioUnit: "× bare",
        generatorCheck: generatorCheck([run]),
        notes: [
          `RSS idle before the run ${idle.rssMb.toFixed(1)} MiB; highest 250 ms sample ${sampledPeak.toFixed(1)} MiB; VmHWM ${after.peakRssMb.toFixed(1)} MiB; ` +
            `${after.rssMb.toFixed(1)} MiB after the clicks were written (${(drain.ms / 1000).toFixed(1)} s after the run).`,
          `${run.requests.toLocaleString("en")} redirects in ${run.durationS.toFixed(0)} s.`,
        ],
        rounds: [{ run, idleRssMb: idle.rssMb, vmHwmMb: after.peakRssMb, afterRssMb: after.rssMb, drainMs: drain.ms, samples }],
      },
    ];
  } finally {
    await app.stop();
  }
}
