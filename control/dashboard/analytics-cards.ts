/**
 * The figures of an Analytics answer as HTML: totals, the active filters as removable chips, the time series, a
 * breakdown card for every dimension (DIMENSIONS names and orders them: a new dimension gets its card with no
 * edit here) whose rows filter the page, and the account's top links, tags and folders. Pure functions of the
 * answer and the page's state, so they are tested with hand-made answers.
 */
import { DIMENSION_NAMES, DIMENSIONS, isDimension } from "../../shared/clicks/dimensions.ts";
import type { AccountGrouping, Analytics, Breakdown, BreakdownRow, Grouping } from "../stats/analytics-types.ts";
import { NONE } from "../stats/query.ts";
import { barTable, seriesChart, type BarRow } from "./charts.ts";
import { hasFilter, linkPageFilters, pageUrl, toggleFilter, type PageQuery } from "./analytics-query.ts";
import { esc } from "./layout.ts";
import { domainParams, linkName, linkPath } from "./link-paths.ts";

const fmt = (n: number) => n.toLocaleString("en-US");

/** How a value reads on a card and a chip (a link's page words variant and rule indices with its own settings). */
export type ValueLabel = (g: Grouping, value: string | null) => string;

/** The account's groupings' names; the dimensions' come from DIMENSIONS. */
const ACCOUNT_LABELS: Record<AccountGrouping, string> = { link: "Link", tag: "Tag", folder: "Folder" };
export const groupingLabel = (g: Grouping) => (isDimension(g) ? DIMENSIONS[g].label : ACCOUNT_LABELS[g]);

/** Unknown values by grouping: a referrer that is not known is a direct visit, a missing variant means none. */
const NULL_WORDS: Partial<Record<Grouping, string>> = { referrer: "Direct or unknown", variant: "None", rule: "No rule", tag: "No tag", folder: "No folder" };

export const defaultValueLabel: ValueLabel = (d, raw) => {
  const value = raw === NONE ? null : raw;
  if (value === null) return NULL_WORDS[d] ?? "Unknown";
  if (d === "variant" || d === "rule") return /^\d+$/.test(value) ? `${d === "variant" ? "Variant" : "Rule"} ${Number(value) + 1}` : value;
  if (d === "via") return value === "qr" ? "QR code" : value === "link" ? "Short address" : value;
  if (d === "device") return value.charAt(0).toUpperCase() + value.slice(1);
  return value;
};

/** Where the page's own address is, and how values read on it. */
export interface CardContext {
  path: string;
  q: PageQuery;
  labelOf: ValueLabel;
  /** The base domain: its links are named by slug alone, a custom domain's with the domain (link-paths.ts). */
  baseDomain: string;
}

/** A row that toggles its value (unknown as the API's `(none)`) as a filter of the page. */
function filterRow(ctx: CardContext, g: Grouping, r: BreakdownRow): BarRow {
  const value = r.value ?? NONE;
  return { label: ctx.labelOf(g, r.value), href: pageUrl(ctx.path, ctx.q, toggleFilter(ctx.q, g, value)), clicks: r.clicks, visitors: r.visitors, active: hasFilter(ctx.q, g, value) };
}

/** The rows of a breakdown plus its "other" bucket (which is no value, so no filter). */
function withOther(rows: BarRow[], b: Breakdown | undefined): BarRow[] {
  return b && b.other.clicks > 0 ? [...rows, { label: "Other", href: null, clicks: b.other.clicks, visitors: b.other.visitors }] : rows;
}

/** A card for every dimension, in declaration order; a dimension the answer lacks shows as empty. */
export function dimensionCards(ctx: CardContext, a: Analytics): string {
  const cards = DIMENSION_NAMES.map((d) => {
    const b = a.breakdowns[d] ?? { rows: [], other: { clicks: 0, visitors: 0 } };
    return barTable(`bd-${d}`, DIMENSIONS[d].label, withOther(b.rows.map((r) => filterRow(ctx, d, r)), b));
  });
  return `<div class="charts">${cards.join("\n")}</div>`;
}

const TOP_HEADINGS: Record<AccountGrouping, string> = { link: "Top links", tag: "Top tags", folder: "Top folders" };

/** A link's row goes to the link's own page (on its domain) over the same range (a deleted link's goes nowhere). */
function linkRow(ctx: CardContext, r: BreakdownRow): BarRow {
  const link = r.slug !== undefined && r.domain !== undefined ? { slug: r.slug, domain: r.domain } : null;
  if (!link) return { label: "A deleted link", href: null, clicks: r.clicks, visitors: r.visitors };
  const keep = Object.entries(domainParams(link, ctx.baseDomain));
  const href = pageUrl(linkPath(link.slug, "stats"), ctx.q, { ...linkPageFilters(ctx.q), keep });
  return { label: linkName(link, ctx.baseDomain), href, clicks: r.clicks, visitors: r.visitors };
}

/** The account's top links, tags and folders; tags and folders filter the page like a dimension's rows. */
export function groupCard(ctx: CardContext, g: AccountGrouping, b: Breakdown | undefined): string {
  const rows = (b?.rows ?? []).map((r) => (g === "link" ? linkRow(ctx, r) : filterRow(ctx, g, r)));
  return barTable(`top-${g}`, TOP_HEADINGS[g], withOther(rows, b), groupingLabel(g));
}

/** The active filters as chips, each a link to the page without it, and a link that clears them all. */
export function filterChips(ctx: CardContext): string {
  if (!ctx.q.filters.length) return "";
  const chips = ctx.q.filters.map(([d, v]) => {
    const text = `${groupingLabel(d)}: ${ctx.labelOf(d, v)}`;
    return `<li><a class="chip" href="${esc(pageUrl(ctx.path, ctx.q, toggleFilter(ctx.q, d, v)))}" aria-label="${esc(`Remove the filter ${text}`)}">${esc(text)} <span aria-hidden="true">×</span></a></li>`;
  });
  return `<div class="chips"><span class="small muted">Filtered by</span><ul aria-label="Active filters">${chips.join("")}</ul><a class="small" href="${esc(pageUrl(ctx.path, ctx.q, { filters: [] }))}">Clear all filters</a></div>`;
}

/** Clicks and unique visitors in the range (and `extra` tiles, e.g. a link's click limit). */
export function totalTiles(a: Analytics, extra: [string, string, string][] = []): string {
  const tile = (label: string, value: string, id: string) => `<div class="card"><div class="muted small">${esc(label)}</div><div class="num" id="${id}">${esc(value)}</div></div>`;
  const who = a.bots === "only" ? "bots" : a.bots === "include" ? "people and bots" : "people";
  return `<div class="totals">
${tile(`Clicks (${who})`, fmt(a.totals.clicks), "total-clicks")}
${tile("Unique visitors", fmt(a.totals.visitors), "total-visitors")}
${extra.map(([label, value, id]) => tile(label, value, id)).join("\n")}
</div>`;
}

/** The time series card. */
export function seriesCard(a: Analytics): string {
  return `<section class="card chart" aria-labelledby="series-heading"><h2 id="series-heading">Clicks over time <span class="hint">(per ${esc(a.interval)}, ${esc(a.tz)})</span></h2>${seriesChart(a.series, a.interval, a.tz)}</section>`;
}
