/**
 * Server-rendered SVG charts for the analytics pages: no library, no CDN, no script, works offline. The bars are
 * SVG stretched to the available width; the words (axis ticks, labels, counts) are HTML beside them, so they stay
 * readable at every width instead of shrinking with the drawing. Every chart carries its figures as text too
 * (an accessible name, a table), because a picture of bars tells a screen reader nothing. Labels can carry
 * visitor-controlled text (referrers, browser names), so every label is escaped.
 */
import type { Interval, SeriesPoint } from "../stats/analytics-types.ts";
import { esc } from "./layout.ts";

const fmt = (n: number) => n.toLocaleString("en-US");

/** A series point's start as a person reads it at this interval (the start carries the zone's offset already). */
export function pointLabel(start: string, interval: Interval): string {
  const date = start.slice(0, 10);
  if (interval === "hour") return `${date} ${start.slice(11, 16)}`;
  if (interval === "week") return `week of ${date}`;
  if (interval === "month") return start.slice(0, 7);
  return date;
}

/** An axis tick: short, since up to five share the width of a phone. */
function tickLabel(start: string, interval: Interval, first: boolean): string {
  if (interval === "hour") return first || start.slice(11, 16) === "00:00" ? `${start.slice(5, 10)} ${start.slice(11, 16)}` : start.slice(11, 16);
  if (interval === "month") return start.slice(0, 7);
  return start.slice(5, 10);
}

/** Indices of at most `k` evenly spread ticks, first and last included. */
function tickIndices(n: number, k = 5): number[] {
  if (n <= k) return Array.from({ length: n }, (_, i) => i);
  return [...new Set(Array.from({ length: k }, (_, i) => Math.round((i * (n - 1)) / (k - 1))))];
}

const UNIT: Record<Interval, string> = { hour: "hour", day: "day", week: "week", month: "month" };

/** One sentence with the series' figures, for the chart's accessible description. */
export function seriesSummary(points: SeriesPoint[], interval: Interval, tz: string): string {
  if (!points.length) return "No time in this range.";
  const clicks = points.reduce((s, p) => s + p.clicks, 0);
  const visitors = points.reduce((s, p) => s + p.visitors, 0);
  const span = `from ${pointLabel(points[0]!.start, interval)} to ${pointLabel(points.at(-1)!.start, interval)} (${tz})`;
  if (!clicks) return `No clicks ${span}.`;
  const peak = points.reduce((best, p) => (p.clicks > best.clicks ? p : best));
  return `${fmt(clicks)} clicks and ${fmt(visitors)} unique visitors ${span}; the busiest ${UNIT[interval]} was ${pointLabel(peak.start, interval)} with ${fmt(peak.clicks)} clicks.`;
}

/**
 * The time series: one bar of clicks per interval, the unique visitors drawn inside it (never more than the
 * clicks), a few ticks under it, and every figure in a table a click away.
 */
export function seriesChart(points: SeriesPoint[], interval: Interval, tz: string): string {
  const n = Math.max(1, points.length);
  const max = Math.max(1, ...points.map((p) => p.clicks));
  const H = 100;
  const height = (v: number) => (v === 0 ? 0 : Math.max(1.5, (v / max) * (H - 2)));
  const bars = points.map((p, i) => {
    const c = height(p.clicks);
    const v = height(p.visitors);
    const tip = `${pointLabel(p.start, interval)}: ${fmt(p.clicks)} clicks, ${fmt(p.visitors)} unique visitors`;
    return `<g><title>${esc(tip)}</title><rect class="${p.clicks ? "bar" : "bar-zero"}" x="${i * 10 + 1}" y="${(H - (c || 0.8)).toFixed(2)}" width="8" height="${(c || 0.8).toFixed(2)}"/>${
      v ? `<rect class="bar-visitors" x="${i * 10 + 2.5}" y="${(H - v).toFixed(2)}" width="5" height="${v.toFixed(2)}"/>` : ""}</g>`;
  });
  const ticks = tickIndices(points.length).map((i) => `<span>${esc(tickLabel(points[i]!.start, interval, i === 0))}</span>`);
  const summary = seriesSummary(points, interval, tz);
  const rows = points.map((p) => `<tr><th scope="row">${esc(pointLabel(p.start, interval))}</th><td>${fmt(p.clicks)}</td><td>${fmt(p.visitors)}</td></tr>`).join("");
  return `<div class="series">
<div class="legend small"><span class="key key-clicks"></span> Clicks <span class="key key-visitors"></span> Unique visitors <span class="muted">· ${points.some((p) => p.clicks) ? `max ${fmt(max)} per ${UNIT[interval]}` : "no clicks in this range"}</span></div>
<svg viewBox="0 0 ${n * 10} ${H}" preserveAspectRatio="none" role="img" aria-labelledby="series-title" aria-describedby="series-desc">
<title id="series-title">${esc(`Clicks per ${UNIT[interval]} (${tz})`)}</title><desc id="series-desc">${esc(summary)}</desc>
<line x1="0" y1="${H - 0.25}" x2="${n * 10}" y2="${H - 0.25}" class="baseline" vector-effect="non-scaling-stroke"/>${bars.join("")}</svg>
<div class="ticks small muted">${ticks.join("")}</div>
<details class="figures"><summary>Show the figures</summary><div class="scroll" tabindex="0" role="region" aria-label="The figures of the chart"><table class="figures-table"><caption class="sr-only">${esc(summary)}</caption>
<thead><tr><th scope="col">${esc(UNIT[interval][0]!.toUpperCase() + UNIT[interval].slice(1))} (${esc(tz)})</th><th scope="col">Clicks</th><th scope="col">Unique visitors</th></tr></thead>
<tbody>${rows}</tbody></table></div></details></div>`;
}

/** One row of a breakdown table: what a label links to (null: not a link) and whether it is an active filter. */
export interface BarRow {
  label: string;
  href: string | null;
  clicks: number;
  visitors: number;
  active?: boolean;
}

/**
 * A breakdown as a table: the value (a link that filters the page by it), a bar of its clicks against the
 * biggest row, its clicks and unique visitors. A table reads out row by row with its headers, which a list of
 * bars does not.
 */
export function barTable(id: string, heading: string, rows: BarRow[], filterName = heading): string {
  const head = `<h3 id="${esc(id)}">${esc(heading)}</h3>`;
  if (!rows.length) return `<section class="card chart" aria-labelledby="${esc(id)}">${head}<p class="muted">No clicks in this range.</p></section>`;
  const max = Math.max(1, ...rows.map((r) => r.clicks));
  const body = rows.map((r) => {
    const name = r.href
      ? `<a href="${esc(r.href)}"${r.active ? ' class="active" aria-current="true"' : ""} title="${esc(r.active ? `Remove the filter ${filterName}: ${r.label}` : `Filter by ${filterName}: ${r.label}`)}">${esc(r.label)}</a>`
      : `<span title="${esc(r.label)}">${esc(r.label)}</span>`;
    const width = Math.max(0.5, (r.clicks / max) * 100).toFixed(2);
    return `<tr><th scope="row" class="blabel">${name}</th><td class="bbar"><svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect class="bar" x="0" y="0" width="${width}" height="10"/></svg></td><td class="bnum">${fmt(r.clicks)}</td><td class="bnum">${fmt(r.visitors)}</td></tr>`;
  });
  return `<section class="card chart" aria-labelledby="${esc(id)}">${head}<table class="bd"><thead><tr><th scope="col">${esc(heading)}</th><th scope="col"><span class="sr-only">Share of clicks</span></th><th scope="col">Clicks</th><th scope="col">Visitors</th></tr></thead><tbody>${body.join("")}</tbody></table></section>`;
}

