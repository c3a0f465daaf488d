/**
 * The analytics engine: a StatsQuery and the store's reads in, an Analytics answer out. It does no I/O of its
 * own; the reads are async iterables, so a test hands it cells made by hand and the service the store's streams.
 *
 * Plan: a query without dimension filters reads settled totals for the whole settled UTC days inside its range
 * (link totals for the series and link groupings; for the breakdowns, rows per dimension of the range's whole
 * months and weeks and day rows for the rest, coverDays) and cells only for
 * the rest (range edges, days not settled yet); a query with filters reads cells throughout, since settled totals
 * count one dimension at a time. Both give the same answer.
 *
 * Link totals come from the hourly rows, unless the series is by UTC day, week or month: then from the rows of
 * `via` (every click has one value of each dimension, so a dimension's rows sum to the bucket's total, and via has
 * the fewest values), a 24th of the rows for a long range over many links; a series by week or month reads its
 * whole weeks' or months' rows.
 */
import { grainNext, grainStart, type CellSumRow, type ClickCell, type SettledGrain, type SettledTotal } from "../../shared/ports/clicks.ts";
import { DIMENSION_NAMES, isDimension, type Dimension } from "../../shared/clicks/dimensions.ts";
import {
  ACCOUNT_GROUPINGS, type Analytics, type Breakdown, type BreakdownRow, type Counts, type Grouping, type StatsQuery,
} from "./analytics-types.ts";
import { dimensionFilters, linkFilters } from "./query.ts";
import { ceilDay, ceilHour, DAY, floorDay, floorHour, zoneOf } from "./zone-time.ts";
import { topLinkTotals, type RankedReads } from "./top-links.ts";

/** What the engine needs of a link for the account's link, tag and folder groupings and filters. */
export interface LinkLabel {
  slug: string;
  domain: string;
  shortUrl: string;
  tags: string[];
  folder: string | null;
}

export interface AnalyticsReads {
  /** The scope's cells in UTC hours [fromHour, toHour). */
  cells(fromHour: number, toHour: number): AsyncIterable<ClickCell>;
  /** The scope's settled totals of `dimension` (null: hourly link totals) with bucket in [from, to); a dimension's of `grain` (day). */
  settled(dimension: Dimension | null, from: number, to: number, grain?: SettledGrain): AsyncIterable<SettledTotal>;
  /** The start of the first UTC day not settled yet. */
  settledBefore: number;
  /** The start of the first hour not settled (settledBefore, or later: hours of the next day have hourly rows). */
  settledHoursBefore: number;
  /**
   * Account scope only: the account's links by id, all of them or those of `ids`. All are loaded (once) only when
   * a tag or folder breakdown or a link filter needs them (there may be 100,000); top links need only their rows'.
   */
  links?: (ids?: string[]) => Promise<Map<string, LinkLabel>>;
  /**
   * Link scope only: a dimension's settled totals summed per value over runs of buckets, one row per value (a
   * breakdown over 90 days of a busy link: about 100 countries, not 100 per bucket).
   */
  settledSums?: (dimension: Dimension, runs: { grain: SettledGrain; from: number; to: number }[], bots: readonly boolean[]) => AsyncIterable<SettledTotal>;
  /** Link scope only: its cells in hours [fromHour, toHour) summed per hour, bot and value of one dimension. */
  cellSums?: (fromHour: number, toHour: number, dimension: Dimension) => Promise<CellSumRow[]>;
  /** Account scope only: its day totals and ranked link totals, for top links without every link's rows (top-links.ts). */
  ranked?: RankedReads;
}

type Tallies = Map<string | null, Counts>;

const add = (into: Counts, c: Counts) => {
  into.clicks += c.clicks;
  into.visitors += c.visitors;
};
const zero = (): Counts => ({ clicks: 0, visitors: 0 });

function bump(t: Tallies, value: string | null, c: Counts) {
  const have = t.get(value);
  if (have) add(have, c);
  else t.set(value, { clicks: c.clicks, visitors: c.visitors });
}

/** The groupings an answer has breakdowns for. */
export const groupingsAnswered = (q: StatsQuery, account: boolean): Grouping[] =>
  q.groupBy ? [q.groupBy] : [...DIMENSION_NAMES, ...(account ? ACCOUNT_GROUPINGS : [])];

/** Running sums of one query: totals, one slot per series point, one tally per grouping. */
class Tally {
  readonly totals = zero();
  readonly series: Counts[];
  readonly groups = new Map<Grouping, Tallies>();
  private readonly bucketOfHour = new Map<number, number>();
  private readonly linkOk = new Map<string, boolean>();
  private readonly dimFilters: [Dimension, Set<string | null>][];
  private readonly linkFilters: [string, Set<string | null>][];
  /** The groups split once by kind, so a cell's loop does not ask which each one is. */
  private readonly dimGroups: [Dimension, Tallies][] = [];
  private readonly linkGroups: [Grouping, Tallies][] = [];

  /** With `links`, clicks of links not in it are not counted. */
  constructor(readonly q: StatsQuery, readonly starts: number[], readonly links: Map<string, LinkLabel> | undefined, groupings: Grouping[]) {
    this.series = starts.map(zero);
    for (const g of groupings) {
      const t: Tallies = new Map();
      this.groups.set(g, t);
      if (isDimension(g)) this.dimGroups.push([g, t]);
      else this.linkGroups.push([g, t]);
    }
    this.dimFilters = dimensionFilters(q).map(([d, vs]) => [d, new Set(vs)]);
    this.linkFilters = linkFilters(q).map(([g, vs]) => [g, new Set(vs)]);
  }

  botOk(bot: boolean) {
    return this.q.bots === "include" || (this.q.bots === "only") === bot;
  }

  /** Whether the link's clicks count: it is one of the account's (when known) and passes link/tag/folder filters. */
  linkCounts(linkId: string): boolean {
    if (!this.links) return true;
    let ok = this.linkOk.get(linkId);
    if (ok === undefined) {
      const link = this.links.get(linkId);
      ok = !!link && this.linkFilters.every(([g, vs]) => labelValues(g, linkId, link).some((v) => vs.has(v)));
      this.linkOk.set(linkId, ok);
    }
    return ok;
  }

  /** The series slot of a UTC hour: the interval its start falls in (the first one for hours before it). */
  slot(hour: number): number {
    let i = this.bucketOfHour.get(hour);
    if (i === undefined) {
      let lo = 0;
      let hi = this.starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (this.starts[mid]! <= hour) lo = mid;
        else hi = mid - 1;
      }
      i = lo;
      this.bucketOfHour.set(hour, i);
    }
    return i;
  }

  cell(c: ClickCell) {
    if (!this.botOk(c.bot) || !this.linkCounts(c.linkId)) return;
    for (const [d, vs] of this.dimFilters) if (!vs.has(c.dims[d])) return;
    add(this.totals, c);
    if (this.series.length) add(this.series[this.slot(c.hour)]!, c);
    for (const [d, t] of this.dimGroups) bump(t, c.dims[d], c);
    this.byLink(c.linkId, c);
  }

  /** A link's cells of an hour, bot flag and value of `d`, summed (its only grouping, no filters). */
  cellSum(d: Dimension, r: CellSumRow) {
    if (!this.botOk(r.bot)) return;
    add(this.totals, r);
    if (this.series.length) add(this.series[this.slot(r.hour)]!, r);
    bump(this.groups.get(d)!, r.value, r);
  }

  /** The link groupings' share of a count. */
  private byLink(linkId: string, c: Counts) {
    for (const [g, t] of this.linkGroups) for (const v of labelValues(g, linkId, this.links?.get(linkId))) bump(t, v, c);
  }

  /** A settled link total (an hour's, or a day's for one dimension value): totals, series, link groupings. */
  linkTotal(s: SettledTotal) {
    if (!this.botOk(s.bot) || !this.linkCounts(s.linkId)) return;
    add(this.totals, s);
    if (this.series.length) add(this.series[this.slot(s.bucket)]!, s);
    this.byLink(s.linkId, s);
  }

  /** An account's settled day: totals and series. */
  accountDay(s: { bucket: number; bot: boolean; clicks: number; visitors: number }) {
    if (!this.botOk(s.bot)) return;
    add(this.totals, s);
    if (this.series.length) add(this.series[this.slot(s.bucket)]!, s);
  }

  /** A settled day (week, month) row of one dimension: that dimension's breakdown only. */
  dayTotal(s: SettledTotal) {
    if (!this.botOk(s.bot) || !this.linkCounts(s.linkId)) return;
    bump(this.groups.get(s.dimension!)!, s.value, s);
  }
}

/** A link's values for a link grouping: its id, each of its tags (null: none), its folder. */
function labelValues(g: string, linkId: string, link: LinkLabel | undefined): (string | null)[] {
  if (g === "link") return [linkId];
  if (!link) return [null];
  if (g === "tag") return link.tags.length ? link.tags : [null];
  return [link.folder];
}

/** Filter values of the link grouping name links by slug; the tally compares ids. */
function linkFilterBySlug(q: StatsQuery, links: Map<string, LinkLabel> | undefined): StatsQuery {
  const slugs = q.filters.link;
  if (!slugs || !links) return q;
  const wanted = new Set(slugs);
  const ids = [...links].filter(([, l]) => wanted.has(l.slug)).map(([id]) => id);
  return { ...q, filters: { ...q.filters, link: ids } };
}

/** Top `limit` rows by clicks, then value (unknown last); the rest summed in `other`. */
export function topRows(t: Tallies, limit: number): Breakdown {
  const rows = [...t].filter(([, c]) => c.clicks > 0 || c.visitors > 0).sort(([va, a], [vb, b]) =>
    b.clicks - a.clicks || (va === null ? 1 : vb === null ? -1 : va < vb ? -1 : va > vb ? 1 : 0));
  const other = zero();
  for (const [, c] of rows.slice(limit)) add(other, c);
  return {
    rows: rows.slice(0, limit).map(([value, c]): BreakdownRow => ({ value, clicks: c.clicks, visitors: c.visitors })),
    other,
  };
}

/** Coarsest first: a breakdown takes any bucket inside the range; a series only buckets inside one of its intervals. */
const BREAKDOWN_GRAINS: SettledGrain[] = ["month", "week", "day"];
const SERIES_GRAINS: Record<StatsQuery["interval"], SettledGrain[]> = { hour: ["day"], day: ["day"], week: ["week", "day"], month: ["month", "day"] };

/** Buckets of one grain with starts in [from, to). */
type Run = [SettledGrain, number, number];

/**
 * The part [from, to) of the hours [fromHour, toHour) that settled totals answer, as whole settled days [from, days)
 * and then hours [days, to) settled by settleHours; cells answer the rest. Without whole days inside, the span starts
 * at the first hour-settled hour inside, if any. `partialDay`: the span holds every settled hour of the first day
 * not settled, whose day (week, month) rows hold exactly those, so they count as one more settled day.
 */
export function settledSpan(fromHour: number, toHour: number, s: Pick<AnalyticsReads, "settledBefore" | "settledHoursBefore">) {
  const dayEnd = floorDay(s.settledBefore);
  let from = ceilDay(fromHour);
  let days = Math.min(floorDay(toHour), dayEnd);
  if (days <= from) from = days = Math.min(Math.max(fromHour, dayEnd), toHour);
  const to = days >= dayEnd ? Math.max(days, Math.min(toHour, s.settledHoursBefore)) : days;
  const partialDay = to > dayEnd && days === dayEnd && to === s.settledHoursBefore;
  // The end up to which week and month rows hold settled days only (none when hours of the next day are in them).
  const daysOnlyTo = s.settledHoursBefore > dayEnd ? Infinity : dayEnd;
  return { from, days, to, partialDay, daysOnlyTo };
}

/**
 * A span's runs of rows for `grains` (coarsest first): its days covered by coverDays, then its settled hours, by the
 * hour or, when the span has all of them, as that day's rows. The week and month rows of the span's last day count
 * whole when no settled day or hour of theirs lies after the span.
 */
function spanRuns(span: ReturnType<typeof settledSpan>, grains: SettledGrain[]): Run[] {
  if (span.partialDay) return coverDays(span.from, span.days + DAY, grains, span.days + DAY);
  const hours: Run[] = span.to > span.days ? [["hour", span.days, span.to]] : [];
  return [...coverDays(span.from, span.days, grains, span.daysOnlyTo), ...hours];
}

/**
 * Whole UTC days [from, to) as runs of buckets, the coarsest of `grains` first: a 90-day range is two or three
 * whole months, a few whole weeks at each edge, and single days around those, about a dozen buckets. A range
 * ending at `settledEnd` (the first day not settled) ends with its week's and month's rows too: they hold only
 * the settled days, so "the last 90 days" reads a few days, then months.
 */
export function coverDays(from: number, to: number, grains: SettledGrain[], settledEnd = Infinity): Run[] {
  const [grain, ...finer] = grains;
  if (grain === undefined || from >= to) return [];
  if (grain === "day") return [["day", from, to]];
  let start = grainStart(grain, from);
  if (start < from) start = grainNext(grain, start);
  const end = to >= settledEnd ? to : grainStart(grain, to);
  if (end <= start) return coverDays(from, to, finer, settledEnd);
  return [...coverDays(from, start, finer, settledEnd), [grain, start, end], ...coverDays(end, to, finer, settledEnd)];
}

/** Hands `each` a dimension's settled rows over runs of buckets (null: link totals, hourly whatever the grain). */
async function eachSettled(reads: AnalyticsReads, d: Dimension | null, runs: Run[], each: (s: SettledTotal) => void): Promise<void> {
  for (const [grain, from, to] of runs) if (from < to) for await (const s of reads.settled(d, from, to, grain)) each(s);
}

/**
 * Whether ranked reads answer the query: top links alone (groupBy=link), no filters, UTC days (the account totals'
 * buckets) and a settled part that is whole days (the series by day, week or month): otherwise every link's rows.
 */
function rankable(q: StatsQuery, groupings: Grouping[], span: ReturnType<typeof settledSpan>): boolean {
  if (groupings.length !== 1 || groupings[0] !== "link" || Object.keys(q.filters).length > 0) return false;
  if (q.tz !== "UTC" || q.interval === "hour" || span.to <= span.from) return false;
  return [...spanRuns(span, ["day"]), ...spanRuns(span, ["month", "day"])].every(([grain]) => grain !== "hour");
}

/** `only`: answer just these breakdowns (the original stats need four of them, not every dimension's). */
export async function answer(query: StatsQuery, reads: AnalyticsReads, only?: Grouping[]): Promise<Analytics> {
  const zone = zoneOf(query.tz);
  const starts = zone.intervals(query.interval, query.from, query.to) ?? [];
  const groupings = only ?? groupingsAnswered(query, reads.links !== undefined);
  const needsAll = groupings.includes("tag") || groupings.includes("folder") || linkFilters(query).length > 0;
  const allLinks = needsAll ? await reads.links?.() : undefined;
  const tally = new Tally(linkFilterBySlug(query, allLinks), starts, allLinks, groupings);

  const fromHour = floorHour(query.from);
  const toHour = ceilHour(query.to);
  const span = settledSpan(fromHour, toHour, reads);
  const { from: settledFrom, to: settledTo } = span;
  // A breakdown by one dimension without filters reads a link's cells summed per hour, bot and value: a busy link's
  // current hour holds thousands of cells, one per combination of every dimension's values.
  const single = groupings.length === 1 && dimensionFilters(query).length === 0 ? groupings[0]! : undefined;
  const summedBy = single !== undefined && isDimension(single) ? single : undefined;
  // An empty range is not asked for: an account's read probes each of its links however few rows come back.
  const eachCell = async (from: number, to: number) => {
    if (from >= to) return;
    if (reads.cellSums && summedBy) {
      for (const r of await reads.cellSums(from, to, summedBy)) tally.cellSum(summedBy, r);
    } else for await (const c of reads.cells(from, to)) tally.cell(c);
  };
  const ranked = reads.ranked && rankable(query, groupings, span) ? reads.ranked : undefined;
  let topOther: Counts | undefined;
  if (ranked) {
    // Top links: the account's day totals for the series, its best links' exact totals (top-links.ts), cells
    // for the unsettled edges as below.
    await eachCell(fromHour, settledFrom);
    for (const [, from, to] of spanRuns(span, ["day"])) for await (const t of ranked.accountTotals(from, to)) tally.accountDay(t);
    // The unsettled hours as a row per active link (the store sums their cells), else as cells.
    const recent = settledTo < toHour ? await ranked.recentLinks(settledTo, toHour) : [];
    if (recent) for (const r of recent) tally.linkTotal({ ...r, bucket: r.hour, dimension: null, value: null });
    else await eachCell(settledTo, toHour);
    const runs = spanRuns(span, ["month", "day"]).map(([grain, from, to]) => ({ grain: grain as "month" | "day", from, to }));
    const bots = [false, true].filter((b) => tally.botOk(b));
    const byLink = tally.groups.get("link")!;
    const exact = await topLinkTotals(ranked, runs, bots, byLink, query.limit);
    byLink.clear();
    for (const [id, c] of exact) byLink.set(id, c);
    topOther = zero();
  } else if (dimensionFilters(query).length === 0 && settledTo > settledFrom) {
    await eachCell(fromHour, settledFrom);
    const totalsBy: Dimension | null = query.tz === "UTC" && query.interval !== "hour" ? "via" : null;
    const viaToo = totalsBy !== null && groupings.includes(totalsBy);
    const totalRuns: Run[] = totalsBy ? spanRuns(span, SERIES_GRAINS[query.interval]) : [["day", settledFrom, settledTo]];
    await eachSettled(reads, totalsBy, totalRuns, (s) => {
      tally.linkTotal(s);
      if (viaToo) tally.dayTotal(s);
    });
    const runs = spanRuns(span, BREAKDOWN_GRAINS);
    const sumRuns = runs.filter(([, from, to]) => from < to).map(([grain, from, to]) => ({ grain, from, to }));
    // Only the bot flags the query counts: a busy link has a bot row for most values of every bucket.
    const bots = [false, true].filter((b) => tally.botOk(b));
    for (const g of groupings) {
      if (!isDimension(g) || g === totalsBy) continue;
      if (reads.settledSums) {
        if (sumRuns.length > 0) for await (const s of reads.settledSums(g, sumRuns, bots)) tally.dayTotal(s);
      } else await eachSettled(reads, g, runs, (s) => tally.dayTotal(s));
    }
    await eachCell(settledTo, toHour);
  } else {
    await eachCell(fromHour, toHour);
  }

  const breakdowns: Analytics["breakdowns"] = {};
  for (const g of groupings) breakdowns[g] = topRows(tally.groups.get(g)!, query.limit);
  if (topOther && breakdowns.link) {
    // Only the best links were summed: the rest is the account's total less theirs.
    const { clicks, visitors } = tally.totals;
    breakdowns.link.other = breakdowns.link.rows.reduce((o, r) => ({ clicks: o.clicks - r.clicks, visitors: o.visitors - r.visitors }), { clicks, visitors });
  }
  const top = breakdowns.link;
  if (top?.rows.length && reads.links) {
    const labels = allLinks ?? (await reads.links(top.rows.map((r) => r.value!)));
    top.rows = top.rows.map(({ value, clicks, visitors }) => {
      const l = labels.get(value!);
      return l ? { value, slug: l.slug, domain: l.domain, shortUrl: l.shortUrl, clicks, visitors } : { value, clicks, visitors };
    });
  }
  return {
    from: zone.iso(query.from),
    to: zone.iso(query.to),
    interval: query.interval,
    tz: query.tz,
    bots: query.bots,
    filters: query.filters,
    totals: tally.totals,
    series: starts.map((s, i) => ({ start: zone.iso(s), ...tally.series[i]! })),
    breakdowns,
  };
}
