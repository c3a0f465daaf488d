/**
 * Server-rendered SVG charts for the stats page: no library, no CDN, no script, works offline. The bars are
 * SVG stretched to the available width; the words (axis ticks, labels, counts) are HTML beside them, so
 * they stay readable at every width instead of shrinking with the drawing. Labels can carry visitor-
 * controlled text (browser names come from User-Agents), so every label is escaped.
 */
import { esc } from "./layout.ts";

/** The 24-hour bar chart: one bar per hour, oldest first, current hour last (hours in UTC). */
export function hourlyChart(buckets: { hour: string; clicks: number }[]): string {
  const n = Math.max(1, buckets.length);
  const max = Math.max(1, ...buckets.map((b) => b.clicks));
  const total = buckets.reduce((s, b) => s + b.clicks, 0);
  const H = 100;
  const bars = buckets.map((b, i) => {
    const h = b.clicks === 0 ? 0.8 : Math.max(2, (b.clicks / max) * (H - 2));
    const label = `${b.hour.slice(0, 10)} ${b.hour.slice(11, 16)} UTC: ${b.clicks} click(s)`;
    return `<rect class="${b.clicks ? "bar" : "bar-zero"}" x="${i * 10 + 1.5}" y="${(H - h).toFixed(2)}" width="7" height="${h.toFixed(2)}"><title>${esc(label)}</title></rect>`;
  });
  // A tick every six hours and on the current hour; empty cells keep the grid aligned with the bars.
  const ticks = buckets.map((b, i) => `<span>${i % 6 === 0 || i === n - 1 ? esc(b.hour.slice(11, 16)) : ""}</span>`);
  return `<div class="hourly"><div class="ymax small muted">${max === 1 && total === 0 ? "no clicks" : `max ${max}`}</div>
<svg viewBox="0 0 ${n * 10} ${H}" preserveAspectRatio="none" role="img" aria-label="${esc(`Clicks per hour over the last 24 hours (UTC): ${total} in total`)}">
<line x1="0" y1="${H - 0.25}" x2="${n * 10}" y2="${H - 0.25}" class="baseline" vector-effect="non-scaling-stroke"/>${bars.join("")}</svg>
<div class="ticks">${ticks.join("")}</div></div>`;
}

/** Keeps the biggest `keep` entries and folds the rest into "Other". */
export function topEntries(counts: Record<string, number>, keep = 8): [string, number][] {
  const sorted = Object.entries(counts).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (sorted.length <= keep) return sorted;
  const rest = sorted.slice(keep - 1).reduce((s, [, n]) => s + n, 0);
  return [...sorted.slice(0, keep - 1), ["Other", rest]];
}

/** A horizontal bar chart of one breakdown (devices, browsers, countries, A/B variants), with shares. */
export function breakdownChart(title: string, counts: Record<string, number>, labelOf: (key: string) => string = (k) => k): string {
  const entries = topEntries(counts);
  if (!entries.length) return `<section class="card chart"><h2>${esc(title)}</h2><p class="muted">No clicks yet.</p></section>`;
  const max = entries[0][1];
  const total = entries.reduce((s, [, n]) => s + n, 0);
  const rows = entries.map(([key, n]) => {
    const label = key === "Other" ? "Other" : labelOf(key);
    const pct = Math.round((n / total) * 100);
    const width = Math.max(1, (n / max) * 100).toFixed(2);
    return `<li><span class="blabel" title="${esc(label)}">${esc(label)}</span>
<svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true"><rect class="bar" x="0" y="0" width="${width}" height="10"/></svg>
<span class="bnum">${n} · ${pct}%</span></li>`;
  });
  const summary = entries.map(([k, n]) => `${k === "Other" ? "Other" : labelOf(k)} ${n}`).join(", ");
  return `<section class="card chart"><h2>${esc(title)}</h2><ul class="breakdown" aria-label="${esc(`${title}: ${summary}`)}">${rows.join("")}</ul></section>`;
}
