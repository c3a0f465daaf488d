/** Case 1: the embedded default (one process, SQLite + memory) redirecting a plain link, every click recorded. */
import { createLink, probe, startEmbedded } from "../lib/app.ts";
import { interleave, throughputFigure } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { baselineContender, clickCheck, clinkContender } from "./shared.ts";

export async function redirectEmbedded(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-plain");
  try {
    const slug = "bench-plain";
    await createLink(app, { url: "https://example.com/landing", slug });
    const p = await probe(`${app.redirect.url}/${slug}`);
    if (p.status !== 302 || p.location !== "https://example.com/landing") throw new Error(`probe: ${p.status} ${p.location}`);

    const c = ctx.opts.connections;
    const variants = [{ path: `/${slug}` }];
    const cmp = await interleave(ctx, ctx.redirectGenerator, baselineContender(ctx, c, variants), clinkContender(ctx, app, "embedded redirect", variants, "3xx", c));
    const clicks = await clickCheck(app, [slug], cmp, 1, c);
    const figure = throughputFigure(
      { id: "redirect-embedded", caseNo: 1, title: "Embedded default: plain link, click recorded", target: { op: ">=", value: 0.85 }, notes: clicks.notes },
      cmp,
      { subject: "clink embedded", reference: "bare Bun.serve 302" },
      c,
      false,
    );
    if (!clicks.ok) figure.verdict = "fail";
    return [figure];
  } finally {
    await app.stop();
  }
}
