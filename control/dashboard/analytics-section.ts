/**
 * The analytics part of a page, shared by a link's page and the account overview: read the page's state from
 * its URL, ask the service (one call per answer the page needs), and render the controls and figures. A question
 * the service refuses comes back as the same page with the controls, a summary in words for people and status
 * 400, never as an error page: the person fixes the dates where they typed them.
 */
import type { Analytics, Grouping } from "../stats/analytics-types.ts";
import { dimensionCards, filterChips, seriesCard, totalTiles, type CardContext, type ValueLabel } from "./analytics-cards.ts";
import { isQuestionProblem, parsePageQuery, rangeProblems, resolveRange, serviceQuery, type PageQuery, type RangeProblem, type ResolvedRange } from "./analytics-query.ts";
import { csvHref, rangeControls } from "./analytics-range.ts";

/** How a page gets its answer: the service's raw query (the API's parameters) in, an Analytics out. */
export type AskAnalytics = (rawQuery: Record<string, string | string[]>) => Promise<Analytics>;

export interface SectionOptions {
  /** The page's own path (its links keep the state in their query). */
  path: string;
  /** The dashboard's CSV download for this page's clicks. */
  csvPath: string;
  url: URL;
  now: number;
  ask: AskAnalytics;
  labelOf: ValueLabel;
  /** The filters the page takes (default: the dimensions). */
  groupings?: readonly Grouping[];
  /** Parameters of the page's address kept in its links and forms (a link's `domain`). */
  keep?: readonly string[];
  /** The base domain (config.defaultDomain): the top links name a custom domain's link with its domain. */
  baseDomain: string;
  /** Tiles after clicks and visitors. */
  extraTiles?: (a: Analytics) => [string, string, string][];
  /** Cards before the dimensions' (the overview's top links, tags, folders), given the page's state and answer. */
  extraCards?: (ctx: CardContext, range: ResolvedRange, analytics: Analytics) => Promise<string>;
}

export interface Section {
  status: number;
  html: string;
  analytics: Analytics | null;
}

/** Answers the page's question, or the problems that refused it (anything else is thrown on). */
async function answer(q: PageQuery, o: SectionOptions): Promise<{ resolved: ResolvedRange | null; analytics: Analytics | null; problems: RangeProblem[] }> {
  let resolved: ResolvedRange | null = null;
  try {
    resolved = resolveRange(q, o.now);
    return { resolved, analytics: await o.ask(serviceQuery(q, resolved)), problems: [] };
  } catch (e) {
    if (!isQuestionProblem(e)) throw e;
    return { resolved, analytics: null, problems: rangeProblems(e) };
  }
}

export async function analyticsSection(o: SectionOptions): Promise<Section> {
  const q = parsePageQuery(o.url.searchParams, o.groupings, o.keep);
  const { resolved, analytics, problems } = await answer(q, o);
  const ctx: CardContext = { path: o.path, q, labelOf: o.labelOf, baseDomain: o.baseDomain };
  const controls = rangeControls({ path: o.path, q, resolved, problems, csvHref: analytics ? csvHref(o.csvPath, resolved, q.keep) : null });
  if (!analytics || !resolved) {
    return { status: 400, analytics: null, html: `${controls}${filterChips(ctx)}<p class="card muted">Nothing to show until the range is fixed.</p>` };
  }
  const extra = o.extraCards ? await o.extraCards(ctx, resolved, analytics) : "";
  const html = `${controls}${filterChips(ctx)}
${totalTiles(analytics, o.extraTiles?.(analytics) ?? [])}
${seriesCard(analytics)}
${extra}
<h2>Breakdowns <span class="hint">(click a row to filter by it)</span></h2>
${dimensionCards(ctx, analytics)}`;
  return { status: 200, analytics, html };
}
