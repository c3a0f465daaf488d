/**
 * Analytics operations, one function each, used by REST, MCP and the dashboard: a link's analytics, the
 * account's, and the original per-link stats (design §3.4) that a stats request without parameters still gets.
 */
import { shortUrlOf } from "../../shared/domain.ts";
import type { LinkRecord } from "../../shared/link.ts";
import type { ClickScope } from "../../shared/ports/clicks.ts";
import type { LinkStats } from "../../shared/schemas.ts";
import type { Caller, Deps } from "../deps.ts";
import { findOwnLink } from "../links/service.ts";
import type { Analytics, Breakdown, StatsQuery } from "./analytics-types.ts";
import { answer, type AnalyticsReads, type LinkLabel } from "./engine.ts";
import { parseStatsQuery, type RawQuery } from "./query.ts";
import type { RankedReads } from "./top-links.ts";
import { HOUR } from "./zone-time.ts";

/** Links read per store call while loading an account's links (there may be 100,000). */
const LINK_PAGE = 1_000;

const labelOf = (deps: Deps, l: LinkRecord): LinkLabel =>
  ({ slug: l.slug, domain: l.domain, shortUrl: shortUrlOf(deps.config, l.domain, l.slug), tags: l.tags, folder: l.folder });

/** The account's links by id, with what groupings, filters and CSV rows need of them. */
export async function accountLinks(deps: Deps, accountId: string): Promise<Map<string, LinkLabel>> {
  const links = new Map<string, LinkLabel>();
  let cursor: string | undefined;
  do {
    const page = await deps.store.listLinks(accountId, { limit: LINK_PAGE, cursor });
    for (const l of page.links) {
      links.set(l.id, labelOf(deps, l));
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return links;
}

/** Some of the account's links by id (those of another account, or gone, are left out). */
async function linksById(deps: Deps, accountId: string, ids: string[]): Promise<Map<string, LinkLabel>> {
  const links = new Map<string, LinkLabel>();
  for (const l of await Promise.all(ids.map((id) => deps.store.getLinkById(id)))) {
    if (l && l.accountId === accountId) links.set(l.id, labelOf(deps, l));
  }
  return links;
}

async function readsOf(deps: Deps, scope: ClickScope, links?: AnalyticsReads["links"]): Promise<AnalyticsReads> {
  return {
    cells: (fromHour, toHour) => deps.store.readCells(scope, fromHour, toHour),
    settled: (dimension, from, to, grain) => deps.store.readSettled(scope, dimension, from, to, grain),
    settledBefore: await deps.store.settledBefore(),
    settledHoursBefore: await deps.store.settledHoursBefore(),
    links,
  };
}

export async function getLinkAnalytics(deps: Deps, caller: Caller, slug: string, rawQuery: RawQuery, domain?: unknown): Promise<Analytics> {
  const link = await findOwnLink(deps, caller, slug, domain);
  const query = parseStatsQuery(rawQuery, deps.now(), "link");
  const reads = await readsOf(deps, { linkId: link.id });
  reads.settledSums = (dimension, runs, bots) => deps.store.readSettledSums(link.id, dimension, runs, bots);
  reads.cellSums = (fromHour, toHour, dimension) => deps.store.readCellSums(link.id, fromHour, toHour, dimension);
  return { slug: link.slug, ...(await answer(query, reads)) };
}

export async function getAccountAnalytics(deps: Deps, caller: Caller, rawQuery: RawQuery): Promise<Analytics> {
  const query = parseStatsQuery(rawQuery, deps.now(), "account");
  const links = (ids?: string[]) => (ids ? linksById(deps, caller.workspaceId, ids) : accountLinks(deps, caller.workspaceId));
  const accountId = caller.workspaceId;
  const ranked: RankedReads = {
    accountTotals: (from, to) => deps.store.readAccountTotals(accountId, from, to),
    rankedLinks: (grain, bucket, bot, offset, limit) => deps.store.readRankedLinks(accountId, grain, bucket, bot, offset, limit),
    sumLinks: (ids, runs, bots) => deps.store.sumLinkTotals(accountId, ids, runs, bots),
    recentLinks: (fromHour, toHour) => deps.store.readRecentLinkTotals(accountId, fromHour, toHour),
  };
  return answer(query, { ...(await readsOf(deps, { accountId }, links)), ranked });
}

/** How the original stats spell an unknown value (byCountry's "unknown"). */
const UNKNOWN = "unknown";

/** A breakdown as the original stats' object: every value, unknown as "unknown" (or left out). */
function countsByValue(b: Breakdown | undefined, keepUnknown: boolean): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of b?.rows ?? []) {
    if (r.clicks > 0 && (r.value !== null || keepUnknown)) out[r.value ?? UNKNOWN] = r.clicks;
  }
  return out;
}

/**
 * The original per-link stats: all-time totals by device, browser, country and A/B variant (only clicks served
 * a variant) and the last 24 hours by UTC hour, bots included, as before analytics had bots to leave out.
 */
export async function getLinkStats(deps: Deps, caller: Caller, slug: string, domain?: unknown): Promise<LinkStats> {
  const link = await findOwnLink(deps, caller, slug, domain);
  const now = deps.now();
  const currentHour = now - (now % HOUR);
  const reads = await readsOf(deps, { linkId: link.id });
  const base = { tz: "UTC", filters: {}, bots: "include", limit: Number.MAX_SAFE_INTEGER } as const;
  const allTime: StatsQuery = { ...base, from: 0, to: currentHour + HOUR, interval: "month", groupBy: null };
  const recent: StatsQuery = { ...base, from: currentHour - 23 * HOUR, to: currentHour + HOUR, interval: "hour", groupBy: null };
  const [all, day] = await Promise.all([answer(allTime, reads, ["device", "browser", "country", "variant"]), answer(recent, reads, [])]);
  return {
    slug: link.slug,
    totalClicks: all.totals.clicks,
    byDevice: countsByValue(all.breakdowns.device, true),
    byBrowser: countsByValue(all.breakdowns.browser, true),
    byCountry: countsByValue(all.breakdowns.country, true),
    byVariant: countsByValue(all.breakdowns.variant, false),
    last24h: day.series.map((p) => ({ hour: new Date(p.start.replace("+00:00", "Z")).toISOString(), clicks: p.clicks })),
  };
}

/** The stats route's answer: the original stats without parameters, analytics with any. */
/** `domain` in the query names the link's domain (findOwnLink); the rest are the analytics' parameters. */
export function getLinkStatsOrAnalytics(deps: Deps, caller: Caller, slug: string, rawQuery: RawQuery): Promise<LinkStats | Analytics> {
  const { domain, ...query } = rawQuery;
  return Object.keys(query).length === 0 ? getLinkStats(deps, caller, slug, domain) : getLinkAnalytics(deps, caller, slug, query, domain);
}
