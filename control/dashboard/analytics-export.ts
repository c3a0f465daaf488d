/**
 * The CSV downloads of the analytics pages: the same streamed exports as GET /api/v1/links/{slug}/clicks.csv and
 * /api/v1/clicks.csv (control/stats/csv.ts), behind the dashboard's session instead of a key. A range the export
 * refuses (only a hand-edited address has one) is an error page in plain words.
 */
import type { RawQuery } from "../stats/query.ts";
import { exportAccountClicks, exportLinkClicks } from "../stats/csv.ts";
import { isQuestionProblem, rangeProblems } from "./analytics-query.ts";
import { errorPage } from "./layout.ts";
import type { SignedInCtx } from "./session.ts";

/** The query string as the API's routes hand it over: a repeated parameter as an array. */
function rawQueryOf(url: URL): RawQuery {
  const raw: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) raw[k] = k in raw ? [...[raw[k]!].flat(), v] : v;
  return raw;
}

async function download(ctx: SignedInCtx, run: (raw: RawQuery) => Promise<Response>): Promise<Response> {
  try {
    return await run(rawQueryOf(ctx.url));
  } catch (e) {
    if (!isQuestionProblem(e)) throw e;
    const words = rangeProblems(e).map((p) => p.text).join(" ");
    return errorPage(400, "These clicks cannot be downloaded", `${words} Go back to the page and use its Download CSV button.`, ctx.viewer);
  }
}

export const linkClicksCsv = (ctx: SignedInCtx) => download(ctx, (raw) => exportLinkClicks(ctx.deps, ctx.caller, ctx.params.slug ?? "", raw));
export const accountClicksCsv = (ctx: SignedInCtx) => download(ctx, (raw) => exportAccountClicks(ctx.deps, ctx.caller, raw));
