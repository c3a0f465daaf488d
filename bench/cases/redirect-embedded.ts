/**
 * Case 1: the embedded default (one process, SQLite + memory) redirecting a plain link, every click recorded.
 * Measured in the same rounds: the floor (bench/floor.ts), a bare server doing only the work any recorded
 * redirect needs; the case is judged against it (≥ 0.90× the floor, design §7 as issue #20 restates it), and
 * the floor's own figure tells how much of the gap to the bare 302 is the price of a click.
 */
import { createLink, probe, startEmbedded } from "../lib/app.ts";
import { throughputFigure } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { clickCheck, clinkContender, judgeAgainstFloor, measureWithFloor } from "./shared.ts";

export async function redirectEmbedded(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-plain");
  try {
    const slug = "bench-plain";
    await createLink(app, { url: "https://example.com/landing", slug });
    const p = await probe(`${app.redirect.url}/${slug}`);
    if (p.status !== 302 || p.location !== "https://example.com/landing") throw new Error(`probe: ${p.status} ${p.location}`);

    const c = ctx.opts.connections;
    const variants = [{ path: `/${slug}` }];
    const m = await measureWithFloor(ctx, "floor-embedded", [slug], variants, clinkContender(ctx, app, "embedded redirect", variants, "3xx", c));
    const clicks = await clickCheck(app, [slug], m.cmp, 1, c);
    const bare = throughputFigure(
      { id: "redirect-embedded", caseNo: 1, title: "Embedded default: plain link, click recorded", notes: clicks.notes },
      m.cmp,
      { subject: "clink embedded", reference: "bare Bun.serve 302" },
      c,
      false,
    );
    const figure = judgeAgainstFloor(bare, m, { op: ">=", value: 0.9 });
    if (!clicks.ok) figure.verdict = "fail";
    const floorFigure = throughputFigure(
      {
        id: "redirect-floor", caseNo: 1, title: "Floor for case 1: least work a recorded redirect needs",
        notes: [
          "No clink code: a Map lookup by slug, the User-Agent and Referer headers, the visitor's address (server.requestIP, a getpeername(2) call per request), a 302 with Cache-Control, and each 1,024 clicks posted to a worker thread that drops them.",
          "Cases 1, 2 and 3 are judged against the floor measured beside each of them (this one is case 1's): the bare 302 cannot be reached by any implementation that records the click with its address.",
        ],
      },
      m.floorCmp,
      { subject: "floor", reference: "bare Bun.serve 302" },
      c,
      false,
    );
    return [figure, floorFigure];
  } finally {
    await app.stop();
  }
}
