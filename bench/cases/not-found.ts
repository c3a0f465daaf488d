/**
 * Case 4: unknown slugs at a high rate, as a slug scanner sends them. With 1,000 slugs in rotation every slug
 * comes back within milliseconds, so nearly every answer comes from the negative cache; with 500,000 distinct
 * slugs (full run) a slug comes back only after seconds, when its negative entries (2 s in the redirector's
 * LRU, 5 s in HotState) have expired, so most requests go through the whole miss path down to SQLite: the two
 * figures bracket what a scan can cost. No §7 target: reported for information.
 */
import { probe, startEmbedded } from "../lib/app.ts";
import { interleave, throughputFigure } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { baselineContender, clinkContender } from "./shared.ts";

const slugs = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ path: `/${prefix}${i.toString(36).padStart(5, "0")}` }));

export async function notFound(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-404");
  const figures: Figure[] = [];
  try {
    const p = await probe(`${app.redirect.url}/nf-probe`);
    if (p.status !== 404) throw new Error(`unknown slug answered ${p.status}`);
    const c = ctx.opts.connections;
    const shapes = [{ id: "not-found-cached", n: 1_000, title: "Embedded: 404 for unknown slugs, 1,000 in rotation (negative cache)" }];
    if (ctx.opts.scanSlugs > 0) {
      shapes.push({ id: "not-found-scan", n: ctx.opts.scanSlugs, title: `Embedded: 404 for unknown slugs, ${ctx.opts.scanSlugs.toLocaleString("en")} distinct (slug scan)` });
    }
    for (const shape of shapes) {
      ctx.log(` ${shape.id}`);
      const variants = slugs(shape.n, shape.id === "not-found-cached" ? "nf-" : "scan-");
      const cmp = await interleave(ctx, ctx.redirectGenerator, baselineContender(ctx, c, variants), clinkContender(ctx, app, "404", variants, "404", c));
      const cycleS = shape.n / Math.max(1, cmp.rounds[0]?.subject.rps ?? 1);
      figures.push(
        throughputFigure(
          {
            id: shape.id,
            caseNo: 4,
            title: shape.title,
            notes: [
              "Reference: the bare server answering the same paths (with its 302).",
              `At the measured rate each slug came back every ${cycleS < 1 ? `${(cycleS * 1000).toFixed(0)} ms` : `${cycleS.toFixed(1)} s`}.`,
            ],
          },
          cmp,
          { subject: "clink 404", reference: "bare Bun.serve 302" },
          c,
          true,
        ),
      );
    }
    return figures;
  } finally {
    await app.stop();
  }
}
