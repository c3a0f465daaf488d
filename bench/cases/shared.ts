/**
 * Pieces several cases share: the baseline as a contender, the floor every redirect is judged against, and the
 * check that every served click was recorded.
 */
import { type Clink, waitForClicks } from "../lib/app.ts";
import { interleaveSubjects, type Comparison, type Contender } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import { judge, type Figure, type Target } from "../lib/figures.ts";
import type { Expect, RequestVariant } from "../lib/load.ts";
import { freePort, startServer } from "../lib/proc.ts";
import { median, sum } from "../lib/stats.ts";

/**
 * The bare 302 server under the same requests as the case (same paths and headers, so the generator and the
 * HTTP parser do the same work on both sides): the ratio then isolates what clink does per request.
 */
export function baselineContender(ctx: Ctx, connections: number, variants: RequestVariant[]): Contender {
  return {
    label: "bare Bun.serve 302",
    spec: { baseUrl: ctx.baseline.url, variants, expect: "3xx", durationS: ctx.opts.durationS, connections, serverPids: [ctx.baseline.pid] },
  };
}

export function clinkContender(ctx: Ctx, app: Clink, label: string, variants: RequestVariant[], expect: Expect, connections: number): Contender {
  return {
    label,
    spec: { baseUrl: app.redirect.url, variants, expect, durationS: ctx.opts.durationS, connections, serverPids: app.processes.map((p) => p.pid) },
    processNames: app.processes.length > 1 ? app.processes.map((p) => p.name) : undefined,
  };
}

/**
 * Compares the clicks the stats API shows with the redirects the generator saw. A run's last requests may be
 * answered after the generator stopped counting, so up to `connections` more per run are fine; fewer is a loss.
 */
export async function clickCheck(app: Clink, slugs: string[], cmp: Comparison, probes: number, connections: number) {
  const runs = [cmp.warmup.subject, ...cmp.rounds.map((r) => r.subject)];
  const served = sum(runs.map((r) => r.requests)) + probes;
  const recorded = await waitForClicks(app, slugs, served);
  const slack = runs.length * connections;
  const ok = recorded >= served && recorded <= served + slack;
  const drains = cmp.rounds.map((r) => r.subjectDrainMs);
  const runSeconds = sum(cmp.rounds.map((r) => r.subject.durationS));
  const sustained = sum(cmp.rounds.map((r) => r.subject.requests)) / (runSeconds + sum(drains) / 1000);
  const notes = [
    ok
      ? `Clicks recorded: the stats API counts ${recorded.toLocaleString("en")} clicks for ${served.toLocaleString("en")} redirects served (in flight at a run's end: up to ${connections} per run).`
      : `CLICKS LOST OR DOUBLED: the stats API counts ${recorded.toLocaleString("en")} clicks for ${served.toLocaleString("en")} redirects served.`,
  ];
  if (sum(drains) > 500 * cmp.rounds.length) {
    notes.push(
      `The click writer lagged behind: after each ${cmp.rounds[0].subject.durationS.toFixed(0)} s run the server stayed busy for ` +
        `${drains.map((d) => (d / 1000).toFixed(1)).join(", ")} s writing queued clicks; counting that time, the sustained rate was ` +
        `${Math.round(sustained).toLocaleString("en")} redirects/s.`,
    );
  }
  return { ok, served, recorded, sustained, notes };
}

/** A redirect case's comparisons: the subject and the floor (bench/floor.ts), each against the same reference runs. */
export interface FloorComparison {
  cmp: Comparison;
  floorCmp: Comparison;
}

/**
 * Measures a redirect case in rounds of three (bare 302, clink, floor), the floor serving the case's own slugs
 * and requests, so every redirect figure can be stated against the floor measured beside it (design §7 as
 * issue #20 restates it) as well as against the bare 302.
 */
export async function measureWithFloor(ctx: Ctx, name: string, slugs: string[], variants: RequestVariant[], subject: Contender): Promise<FloorComparison> {
  const floor = await startServer({ name, entry: "bench/floor.ts", env: { FLOOR_SLUGS: slugs.join(",") }, port: await freePort(), logDir: ctx.opts.workDir, ready: "any" });
  try {
    const c = subject.spec.connections;
    const floorContender: Contender = {
      label: "floor",
      spec: { baseUrl: floor.url, variants, expect: "3xx", durationS: ctx.opts.durationS, connections: c, serverPids: [floor.pid] },
    };
    const [cmp, floorCmp] = await interleaveSubjects(ctx, ctx.redirectGenerator, baselineContender(ctx, c, variants), [subject, floorContender]);
    return { cmp: cmp!, floorCmp: floorCmp! };
  } finally {
    await floor.stop();
  }
}

/** Subject ÷ floor per round (both divided by the same reference run), median over rounds. */
export const floorRatio = (m: FloorComparison) => median(m.cmp.rounds.map((r, i) => r.subject.rps / m.floorCmp.rounds[i]!.subject.rps));

/**
 * Restates a redirect figure (ratio × bare, from throughputFigure) against the floor: its ratio becomes
 * subject ÷ floor and the target judges that; × bare stays beside it, and each round keeps the floor's req/s.
 */
export function judgeAgainstFloor(f: Figure, m: FloorComparison, target: Target): Figure {
  const ratio = floorRatio(m);
  const floorRps = median(m.floorCmp.rounds.map((r) => r.subject.rps));
  const floorOfBare = median(m.floorCmp.rounds.map((r) => r.ratio));
  const rounds = (f.rounds as Record<string, unknown>[] | undefined)?.map((r, i) => ({ ...r, floorRps: m.floorCmp.rounds[i]?.subject.rps }));
  // Server CPU per request moves far less than requests/s when other work shares the machine.
  const cpu = (c: Comparison) => median(c.rounds.map((r) => r.subjectCpuUsPerRequest));
  const note =
    `Against the floor measured in the same rounds (bench/floor.ts serving the same requests): ${ratio.toFixed(2)}× its requests/s ` +
    `(median of per-round ratios; the floor ${Math.round(floorRps).toLocaleString("en")} req/s, ${floorOfBare.toFixed(2)}× the bare 302), ` +
    `${(f.ratio ?? NaN).toFixed(2)}× the bare 302. Server CPU per request: ${cpu(m.cmp).toFixed(2)} µs against the floor's ${cpu(m.floorCmp).toFixed(2)} µs ` +
    `(CPU-time ratio ${(cpu(m.floorCmp) / cpu(m.cmp)).toFixed(2)}× the floor).`;
  return {
    ...f,
    ratio,
    ratioUnit: "× floor",
    bareRatio: f.ratio,
    target,
    verdict: f.verdict === "fail" || f.verdict === "error" ? f.verdict : judge(ratio, target),
    notes: [note, ...f.notes],
    rounds,
  };
}
