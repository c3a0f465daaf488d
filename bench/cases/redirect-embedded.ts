/**
 * Case 1: the embedded default (one process, SQLite + memory) redirecting a plain link, every click recorded.
 * Measured in the same rounds: the floor (bench/floor.ts), a bare server doing only the work any recorded
 * redirect needs, so the report tells how much of the gap to the bare 302 is clink's and how much is the
 * price of a click.
 */
import { createLink, probe, startEmbedded } from "../lib/app.ts";
import { interleaveSubjects, throughputFigure } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { freePort, startServer } from "../lib/proc.ts";
import { median } from "../lib/stats.ts";
import { baselineContender, clickCheck, clinkContender } from "./shared.ts";

export async function redirectEmbedded(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-plain");
  const floor = await startServer({ name: "floor", entry: "bench/floor.ts", env: {}, port: await freePort(), logDir: ctx.opts.workDir, ready: "any" });
  try {
    const slug = "bench-plain";
    await createLink(app, { url: "https://example.com/landing", slug });
    const p = await probe(`${app.redirect.url}/${slug}`);
    if (p.status !== 302 || p.location !== "https://example.com/landing") throw new Error(`probe: ${p.status} ${p.location}`);

    const c = ctx.opts.connections;
    const variants = [{ path: `/${slug}` }];
    const floorContender = {
      label: "floor",
      spec: { baseUrl: floor.url, variants, expect: "3xx" as const, durationS: ctx.opts.durationS, connections: c, serverPids: [floor.pid] },
    };
    const [cmp, floorCmp] = await interleaveSubjects(ctx, ctx.redirectGenerator, baselineContender(ctx, c, variants), [
      clinkContender(ctx, app, "embedded redirect", variants, "3xx", c),
      floorContender,
    ]);
    const clicks = await clickCheck(app, [slug], cmp, 1, c);
    // Same rounds, same reference runs: clink's ratio over the floor's is how close clink gets to the floor.
    const ofFloor = median(cmp.rounds.map((r, i) => r.subject.rps / floorCmp.rounds[i]!.subject.rps));
    const figure = throughputFigure(
      {
        id: "redirect-embedded", caseNo: 1, title: "Embedded default: plain link, click recorded", target: { op: ">=", value: 0.85 },
        notes: [...clicks.notes, `Against the floor measured in the same rounds (next figure): ${ofFloor.toFixed(2)}× the floor's requests/s (median of per-round ratios).`],
      },
      cmp,
      { subject: "clink embedded", reference: "bare Bun.serve 302" },
      c,
      false,
    );
    if (!clicks.ok) figure.verdict = "fail";
    const floorFigure = throughputFigure(
      {
        id: "redirect-floor", caseNo: 1, title: "Floor for case 1: least work a recorded redirect needs",
        notes: [
          "No clink code: a Map lookup by slug, the User-Agent and Referer headers, the visitor's address (server.requestIP, a getpeername(2) call per request), a 302 with Cache-Control, and each 1,024 clicks posted to a worker thread that drops them.",
          "A ratio below case 1's target here means the target cannot be met by any implementation that records the click with its address on this machine.",
        ],
      },
      floorCmp,
      { subject: "floor", reference: "bare Bun.serve 302" },
      c,
      false,
    );
    return [figure, floorFigure];
  } finally {
    await Promise.all([app.stop(), floor.stop()]);
  }
}
