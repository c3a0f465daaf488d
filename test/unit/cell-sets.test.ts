/**
 * Postgres cell sets (shared/adapters/postgres/cell-sets.ts): whatever path a click takes (the click before's cell,
 * a set's cells compared in turn, or looked up by key once a set holds many), the sets hold each cell's sums once.
 */
import { expect, test } from "bun:test";
import { decodeDims, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { cellSets } from "../../shared/adapters/postgres/cell-sets.ts";
import type { StoredClick } from "../../shared/ports.ts";

const HOUR = 3_600_000;
const T = Date.UTC(2030, 0, 1, 12);
const dims = (country: string, device: string): ClickDims => ({
  country, region: null, city: null, device, browser: "Chrome", os: null, referrer: null, variant: null, rule: null, via: "link",
});

/** What the sets say, as `link|hour|bot|dims json` -> [clicks, visitors]. */
function decoded(sets: ReturnType<typeof cellSets>["sets"]): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const s of sets) {
    for (const cell of s.cells.split("\u0003")) {
      const [clicks, visitors, bot, key] = cell.split("\u0002");
      const k = `${s.linkId}|${s.hour}|${bot}|${JSON.stringify(decodeDims(key!))}`;
      expect(out.has(k)).toBe(false); // each cell once
      out.set(k, [Number(clicks), Number(visitors)]);
    }
  }
  return out;
}

test("every click is counted once in its link's, hour's and dimensions' cell, busy sets and quiet ones alike", () => {
  const clicks: StoredClick[] = [];
  const want = new Map<string, [number, number]>();
  let seed = 7;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  for (let i = 0; i < 3_000; i++) {
    // "busy" gets 40 distinct cells an hour (past the compare-in-turn limit), "quiet" a few; equal dims as new objects.
    const linkId = random() < 0.8 ? "busy" : "quiet";
    const d = dims(`C${Math.floor(random() * (linkId === "busy" ? 20 : 2))}`, random() < 0.5 ? "mobile" : "desktop");
    const c: StoredClick = {
      batch: "b", linkId, ts: T + Math.floor(random() * 2 * HOUR), dims: d, bot: random() < 0.1, firstVisit: random() < 0.3, referrerUrl: null,
    };
    clicks.push(c);
    if (i % 3 === 0) clicks.push({ ...c, firstVisit: false }); // a run: the click before's cell
    for (const x of i % 3 === 0 ? [c, { ...c, firstVisit: false }] : [c]) {
      const k = `${x.linkId}|${Math.floor(x.ts / HOUR) * HOUR}|${x.bot ? 1 : 0}|${JSON.stringify(x.dims)}`;
      const sum = want.get(k) ?? [0, 0];
      want.set(k, [sum[0] + 1, sum[1] + (x.firstVisit ? 1 : 0)]);
    }
  }
  const { sets, hits } = cellSets(clicks);
  expect(decoded(sets)).toEqual(want);
  expect(sets.length).toBe(4); // two links, two hours
  expect(hits).toEqual(new Map([["busy", clicks.filter((c) => c.linkId === "busy").length], ["quiet", clicks.filter((c) => c.linkId === "quiet").length]]));
});
