/**
 * The report's bar chart (latest.svg): one bar per figure with a ratio, in panels: redirects as a share of the
 * floor measured beside them (what their §7 targets judge), throughput as a share of the bare 302 (higher is
 * better) and cost ratios (bulk vs one INSERT, stats at 1M vs 10k clicks: lower is better). A dashed mark shows
 * each §7 target, in the panel whose ratio it judges.
 * Plain SVG text, no dependencies; every label is escaped.
 */
import type { Figure } from "./figures.ts";

const COLORS = { pass: "#2e7d32", fail: "#c62828", info: "#546e7a" } as const;
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

interface Panel {
  title: string;
  figures: Figure[];
  /** The ratio a bar shows; the target mark is drawn only when it judges that ratio. */
  value(f: Figure): number;
  judged(f: Figure): boolean;
}

const WIDTH = 960;
const LABEL_W = 430;
const BAR_W = 330;
const ROW = 30;
const PANEL_HEAD = 34;

function panelSvg(panel: Panel, y0: number): { svg: string; height: number } {
  const target = (f: Figure) => (panel.judged(f) ? f.target : undefined);
  const max = Math.max(1.2, ...panel.figures.map((f) => Math.max(panel.value(f), target(f)?.value ?? 0) * 1.1));
  const x = (v: number) => LABEL_W + (Math.min(v, max) / max) * BAR_W;
  const parts = [`<text x="10" y="${y0 + 20}" class="h">${esc(panel.title)}</text>`];
  // Axis ticks: 0, and a few round values up to max.
  const step = max <= 1.5 ? 0.25 : max <= 4 ? 0.5 : max <= 10 ? 1 : Math.ceil(max / 8);
  const axisY = y0 + PANEL_HEAD + panel.figures.length * ROW;
  for (let v = 0; v <= max + 1e-9; v += step) {
    parts.push(`<line x1="${x(v)}" y1="${y0 + PANEL_HEAD - 6}" x2="${x(v)}" y2="${axisY}" class="grid"/>`);
    parts.push(`<text x="${x(v)}" y="${axisY + 14}" class="tick">${Number(v.toFixed(2))}×</text>`);
  }
  panel.figures.forEach((f, i) => {
    const y = y0 + PANEL_HEAD + i * ROW;
    const ratio = panel.value(f);
    const t = target(f);
    const color = !t ? COLORS.info : f.verdict === "pass" ? COLORS.pass : f.verdict === "fail" ? COLORS.fail : COLORS.info;
    const label = `${f.caseNo}. ${f.title}`;
    parts.push(`<text x="${LABEL_W - 8}" y="${y + 18}" class="l">${esc(label.length > 62 ? label.slice(0, 60) + "…" : label)}</text>`);
    parts.push(`<rect x="${LABEL_W}" y="${y + 5}" width="${Math.max(1, x(ratio) - LABEL_W)}" height="${ROW - 10}" fill="${color}"/>`);
    const targetText = t ? ` (target ${t.op === ">=" ? "≥" : "≤"} ${t.value})` : "";
    // After the bar and after the target mark, so the mark never crosses the text.
    const textX = Math.max(x(ratio), t ? x(t.value) : 0) + 6;
    parts.push(`<text x="${textX}" y="${y + 19}" class="v">${ratio.toFixed(2)}×${esc(targetText)}</text>`);
    if (t) {
      const tx = x(t.value);
      parts.push(`<line x1="${tx}" y1="${y + 2}" x2="${tx}" y2="${y + ROW - 2}" class="target"/>`);
    }
  });
  return { svg: parts.join("\n"), height: PANEL_HEAD + panel.figures.length * ROW + 26 };
}

export function ratioChart(figures: Figure[], subtitle: string): string {
  const withRatio = figures.filter((f) => f.ratio !== undefined && Number.isFinite(f.ratio) && f.verdict !== "skipped" && f.verdict !== "error");
  const throughput = withRatio.filter((f) => (f.ratioUnit === "× bare" || f.ratioUnit === "× floor") && f.subject?.rps !== undefined && f.id !== "peak-rss");
  const candidates: Panel[] = [
    {
      title: "Redirects as a share of the floor measured beside them, same run (higher is better; the §7 targets)",
      figures: throughput.filter((f) => f.ratioUnit === "× floor"),
      value: (f) => f.ratio ?? 0,
      judged: () => true,
    },
    {
      title: "Throughput as a share of a bare Bun.serve 302, same generator, same run (higher is better)",
      figures: throughput,
      value: (f) => f.bareRatio ?? f.ratio ?? 0,
      judged: (f) => f.ratioUnit === "× bare",
    },
    { title: "Cost ratios (lower is better)", figures: withRatio.filter((f) => f.caseNo === 5 || f.caseNo === 6), value: (f) => f.ratio ?? 0, judged: () => true },
  ];
  const panels = candidates.filter((p) => p.figures.length > 0);
  let y = 50;
  const body: string[] = [];
  for (const p of panels) {
    const { svg, height } = panelSvg(p, y);
    body.push(svg);
    y += height + 10;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y + 10}" viewBox="0 0 ${WIDTH} ${y + 10}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">
<style>
.t{font-size:16px;font-weight:600;fill:#222}.s{font-size:12px;fill:#555}.h{font-size:13px;font-weight:600;fill:#333}
.l{font-size:12px;fill:#222;text-anchor:end}.v{font-size:12px;fill:#222}.tick{font-size:10px;fill:#777;text-anchor:middle}
.grid{stroke:#e0e0e0;stroke-width:1}.target{stroke:#111;stroke-width:2;stroke-dasharray:4 2}
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="10" y="22" class="t">clink benchmark: ratios</text>
<text x="10" y="40" class="s">${esc(subtitle)} — green: meets its §7 target (dashed mark), red: misses it, grey: no target</text>
${body.join("\n")}
</svg>
`;
}
