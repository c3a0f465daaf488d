/**
 * The account overview (/dashboard/analytics): the same range picker, chart and dimension cards as a link's page,
 * over every link of the account, with its top links, tags and folders, and the CSV of all its clicks. Answers
 * come from getAccountAnalytics, the service behind GET /api/v1/stats.
 */
import { ACCOUNT_GROUPINGS, type AccountGrouping, type Analytics } from "../stats/analytics-types.ts";
import { groupingsOf } from "../stats/query.ts";
import { getAccountAnalytics } from "../stats/service.ts";
import { defaultValueLabel, groupCard } from "./analytics-cards.ts";
import { serviceQuery } from "./analytics-query.ts";
import { analyticsSection } from "./analytics-section.ts";
import { htmlResponse } from "./http.ts";
import { layout } from "./layout.ts";
import type { SignedInCtx } from "./session.ts";

export const OVERVIEW_PATH = "/dashboard/analytics";

export async function overviewPage(ctx: SignedInCtx): Promise<Response> {
  const ask = (raw: Record<string, string | string[]>) => getAccountAnalytics(ctx.deps, ctx.caller, raw);
  const section = await analyticsSection({
    path: OVERVIEW_PATH,
    csvPath: `${OVERVIEW_PATH}/clicks.csv`,
    url: ctx.url,
    now: ctx.deps.now(),
    ask,
    labelOf: defaultValueLabel,
    baseDomain: ctx.deps.config.defaultDomain,
    groupings: groupingsOf("account"),
    // Top links, tags and folders: from the answer when it has them, else one grouped question each.
    extraCards: async (cards, range, main) => {
      const grouped = async (g: AccountGrouping): Promise<[AccountGrouping, Analytics["breakdowns"][AccountGrouping]]> =>
        [g, main.breakdowns[g] ?? (await ask(serviceQuery(cards.q, range, { groupBy: g }))).breakdowns[g]];
      const groups = await Promise.all(ACCOUNT_GROUPINGS.map(grouped));
      return `<div class="charts">${groups.map(([g, b]) => groupCard(cards, g, b)).join("\n")}</div>`;
    },
  });
  const body = `<h1>Analytics <span class="hint">all links</span></h1>${section.html}`;
  return htmlResponse(section.status, layout({ title: "Analytics", body, viewer: ctx.viewer, current: "analytics" }));
}
