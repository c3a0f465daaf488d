/**
 * An account's top links without reading every link's rows (docs/adr/0013-account-top-links.md): each settled
 * bucket of the range (whole months, then days) keeps its links' totals ranked by clicks, and the threshold
 * algorithm (Fagin, Lotem and Naor's TA) reads each bucket's list best first, a page at a time, sums the exact
 * range total of every link it meets (its rows in every bucket, plus its cells of the range's unsettled edges), and
 * stops once the limit-th best exact total is above the threshold: the sum of every list's last value read (no
 * link not met yet can have more in that list) and the best cell total of the links not met. So the answer is
 * exact, and what it reads follows the limit and how skewed the clicks are, not the account's number of links.
 */
import type { AccountDayTotal, LinkHourTotal, LinkTotal, RankGrain, RankRun } from "../../shared/ports/clicks.ts";
import { grainNext } from "../../shared/ports/clicks.ts";
import type { Counts } from "./analytics-types.ts";

/** The reads an account's ranked answer needs (ClickStore's, bound to the account). */
export interface RankedReads {
  accountTotals(from: number, to: number): AsyncIterable<AccountDayTotal>;
  rankedLinks(grain: RankGrain, bucket: number, bot: boolean, offset: number, limit: number): Promise<LinkTotal[]>;
  sumLinks(linkIds: string[], runs: RankRun[], bots: boolean[]): Promise<LinkTotal[]>;
  /** The account's unsettled hours [from, to) per link, hour and bot flag, at once; null: read them as cells. */
  recentLinks(fromHour: number, toHour: number): Promise<LinkHourTotal[] | null>;
}

/** One bucket's list, read best first. */
interface List {
  grain: RankGrain;
  bucket: number;
  bot: boolean;
  read: number;
  /** The last value read: no link not met yet has more in this list (0 once the list is read to its end). */
  bound: number;
  done: boolean;
}

/** Rows a list's first page reads beyond the limit; each later page is twice the one before. */
const FIRST_PAGE_EXTRA = 20;

/**
 * The exact range totals of enough links that the top `limit` of them are the account's top `limit`: `runs` are
 * the settled buckets of the range, `cells` the links' counts from cells (the range's edges not settled), `bots`
 * the bot flags counted. Links with no clicks in the range are never among them.
 */
export async function topLinkTotals(
  reads: RankedReads, runs: RankRun[], bots: boolean[], cells: Map<string | null, Counts>, limit: number, firstPage = limit + FIRST_PAGE_EXTRA,
): Promise<Map<string, Counts>> {
  const lists: List[] = [];
  for (const run of runs) {
    for (let b = run.from; b < run.to; b = grainNext(run.grain, b)) {
      for (const bot of bots) lists.push({ grain: run.grain, bucket: b, bot, read: 0, bound: Infinity, done: false });
    }
  }
  const byCells = [...cells].filter(([id, c]) => id !== null && c.clicks > 0).sort(([, a], [, b]) => b.clicks - a.clicks) as [string, Counts][];
  let cellsRead = 0;
  const exact = new Map<string, Counts>();
  let page = firstPage;
  for (;;) {
    const met = new Set<string>();
    const pages = await Promise.all(lists.map(async (l) => (l.done ? [] : await reads.rankedLinks(l.grain, l.bucket, l.bot, l.read, page))));
    pages.forEach((rows, i) => {
      const l = lists[i]!;
      if (l.done) return;
      l.read += rows.length;
      if (rows.length < page) {
        l.done = true;
        l.bound = 0;
      } else l.bound = rows[rows.length - 1]!.clicks;
      for (const r of rows) if (!exact.has(r.linkId)) met.add(r.linkId);
    });
    for (const [id] of byCells.slice(cellsRead, cellsRead + page)) if (!exact.has(id)) met.add(id);
    cellsRead = Math.min(byCells.length, cellsRead + page);

    const ids = [...met];
    for (const id of ids) exact.set(id, { clicks: cells.get(id)?.clicks ?? 0, visitors: cells.get(id)?.visitors ?? 0 });
    for (const s of await reads.sumLinks(ids, runs, bots)) {
      const e = exact.get(s.linkId)!;
      e.clicks += s.clicks;
      e.visitors += s.visitors;
    }

    const cellBound = cellsRead < byCells.length ? byCells[cellsRead]![1].clicks : 0;
    const threshold = lists.reduce((n, l) => n + l.bound, 0) + cellBound;
    if (threshold === 0) return exact;
    const totals = [...exact.values()].map((c) => c.clicks).sort((a, b) => b - a);
    if (totals.length >= limit && totals[limit - 1]! > threshold) return exact;
    page *= 2;
  }
}
