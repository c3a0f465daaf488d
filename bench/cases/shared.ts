/** Pieces several cases share: the baseline as a contender, and the check that every served click was recorded. */
import { type Clink, waitForClicks } from "../lib/app.ts";
import type { Comparison, Contender } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import type { Expect, RequestVariant } from "../lib/load.ts";
import { sum } from "../lib/stats.ts";

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
