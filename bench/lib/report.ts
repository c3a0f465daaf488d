/**
 * Writes the results: latest.md (for people), latest.json (everything, per round) and latest.svg (the ratios).
 * The markdown answers the benchmark's question first (the §7 table), then every figure with its generator,
 * the generator's own load, and the notes that qualify it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Figure, Side } from "./figures.ts";
import { targetText } from "./figures.ts";
import type { Machine } from "./machine.ts";
import type { Options } from "./options.ts";
import { ratioChart } from "./svg.ts";

export interface RunInfo {
  command: string;
  startedAt: Date;
  finishedAt: Date;
  machine: Machine;
  opts: Options;
  /** Lines about the run itself (wrk installation, fallbacks, skipped cases). */
  log: string[];
}

const int = (n: number) => Math.round(n).toLocaleString("en");
/** autocannon reports whole milliseconds: its 0 means "under a millisecond". */
const ms = (n: number | undefined) =>
  n === undefined || !Number.isFinite(n) ? "–" : n === 0 ? "< 1 ms" : n < 1 ? `${n.toFixed(3)} ms` : n < 100 ? `${n.toFixed(2)} ms` : `${n.toFixed(0)} ms`;
const cpu = (s: Side | undefined) => (s?.cpuUsPerRequest === undefined ? "–" : `${s.cpuUsPerRequest.toFixed(2)} µs`);
const VERDICT = { pass: "✅ pass", fail: "❌ fail", info: "info", skipped: "skipped", error: "⚠ error" } as const;

function measured(s: Side | undefined): string {
  if (!s) return "–";
  if (s.rps !== undefined && s.peakRssMb === undefined) return `${int(s.rps)} req/s`;
  if (s.peakRssMb !== undefined) return `${s.peakRssMb.toFixed(1)} MiB`;
  if (s.ms !== undefined) return ms(s.ms);
  return "–";
}

/** The judged ratio, and for redirects judged against the floor the same against the bare 302 beside it. */
export function ratioText(f: Figure): string {
  if (f.ratio === undefined || !Number.isFinite(f.ratio)) return "–";
  const bare = f.bareRatio !== undefined && Number.isFinite(f.bareRatio) ? ` (${f.bareRatio.toFixed(2)}× bare)` : "";
  return `${f.ratio.toFixed(2)}${f.ratioUnit ?? "×"}${bare}`;
}

/** A target in the figure's own unit when that unit names a reference ("× bare", "× floor") or is a cost (" µs per click"). */
const targetIn = (f: Figure) =>
  targetText(f.target!, f.ratioUnit === "× bare" || f.ratioUnit === "× floor" ? f.ratioUnit : f.ratioUnit?.startsWith(" µs") ? " µs" : "×");

function settings(o: Options): string {
  return (
    `${o.rounds} interleaved round${o.rounds > 1 ? "s" : ""} (reference, case, reference, case…) of ${o.durationS} s per figure after a ${o.warmupS} s warm-up run of each server (the long-lived baseline: once per generator), ` +
    `every server idle before each run; figures are medians over rounds, ratios the median of per-round ratios. ` +
    `Redirect load: ${o.connections} connections; API load: ${o.apiConnections}; peak-RSS run: ${o.rssS} s.`
  );
}

export function renderMarkdown(figures: Figure[], info: RunInfo): string {
  const m = info.machine;
  const minutes = (info.finishedAt.getTime() - info.startedAt.getTime()) / 60_000;
  const out: string[] = [];
  out.push(`# clink benchmark (${info.opts.profile} run)`, "");
  out.push("How close is the redirector to the fastest possible HTTP redirect, and how does each cost grow with the work?");
  out.push("Every figure is measured in the same invocation as its reference (for redirects: a bare `Bun.serve` answering a fixed 302, bench/baseline.ts), each server in its own process.", "");
  out.push(`- **Machine:** ${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GiB RAM; ${m.os}, kernel ${m.kernel}`);
  out.push(`- **Versions:** ${Object.entries(m.versions).map(([k, v]) => `${k} ${v}`).join(", ")}; clink commit ${m.commit}`);
  out.push(`- **Run:** \`${info.command}\`, ${info.startedAt.toISOString()}, ${minutes.toFixed(1)} min. ${settings(info.opts)}`);
  for (const line of info.log) out.push(`- ${line}`);
  out.push("");

  const targeted = figures.filter((f) => f.target);
  out.push("## §7 targets", "");
  out.push("| # | Figure | Ratio | Target | Result | Measured by | Generator below saturation? |");
  out.push("|---|---|---|---|---|---|---|");
  for (const f of targeted) {
    const g = f.generatorCheck;
    const check = g
      ? !g.ok
        ? `**no: up to ${(g.peakCores * 100).toFixed(0)}% of its core with the server below its limit**`
        : g.peakCores < g.limit
          ? `yes: ${(g.peakCores * 100).toFixed(0)}% of a core at most`
          : `yes, server-bound: up to ${(g.peakCores * 100).toFixed(0)}% only while the server was at its own limit`
      : f.verdict === "skipped" || f.verdict === "error"
        ? "–"
        : "n/a (one request at a time)";
    const result = f.verdict === "skipped" ? `skipped: ${f.reason}` : f.verdict === "error" ? `error: ${f.reason}` : VERDICT[f.verdict];
    out.push(`| ${f.caseNo} | ${f.title} | ${ratioText(f)} | ${targetIn(f)} | ${result} | ${f.generator} | ${check} |`);
  }
  out.push("", "![ratios](latest.svg)", "");

  out.push("## All figures", "");
  out.push("| # | Figure | Measured | p50 | p99 | server CPU/req | Reference | p50 | p99 | server CPU/req | Ratio | Result | Measured by |");
  out.push("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const f of figures) {
    const s = f.subject;
    const r = f.reference;
    const result = f.verdict === "skipped" || f.verdict === "error" ? `${f.verdict}` : VERDICT[f.verdict];
    out.push(
      `| ${f.caseNo} | ${f.title} | ${measured(s)} | ${ms(s?.p50Ms ?? s?.ms)} | ${ms(s?.p99Ms)} | ${cpu(s)} | ${r ? `${r.label}: ${measured(r)}` : "–"} | ${ms(r?.p50Ms ?? r?.ms)} | ${ms(r?.p99Ms)} | ${cpu(r)} | ${ratioText(f)} | ${result} | ${f.generator} |`,
    );
  }
  out.push("");

  out.push("## Details", "");
  for (const f of figures) {
    out.push(`### ${f.caseNo}. ${f.title}`, "");
    if (f.reason) out.push(`- **${f.verdict}:** ${f.reason}`);
    if (f.generatorCheck) out.push(`- Generator: ${f.generator}; ${f.generatorCheck.text}.`);
    for (const n of f.notes) out.push(`- ${n}`);
    const rounds = f.rounds as
      | {
          reference?: { rps: number; serverCpuUsPerRequest: number };
          subject?: { rps: number; p99Ms: number };
          ratio?: number;
          floorRps?: number;
          subjectDrainMs?: number;
          subjectCpuUsPerRequest?: number;
        }[]
      | undefined;
    if (rounds?.length && rounds[0].reference && rounds[0].subject && rounds[0].ratio !== undefined) {
      // Redirect cases measured the floor in the same rounds: its req/s and the case's ratio to it, per round.
      const floor = rounds[0].floorRps !== undefined;
      out.push(
        "",
        `| round | reference req/s |${floor ? " floor req/s |" : ""} case req/s | ratio |${floor ? " ÷ floor |" : ""} case p99 | reference CPU/req | case CPU/req | case busy after run |`,
        `|---|---|---|---|${floor ? "---|---|" : ""}---|---|---|---|`,
      );
      rounds.forEach((r, i) =>
        out.push(
          `| ${i + 1} | ${int(r.reference!.rps)} |${floor ? ` ${int(r.floorRps ?? NaN)} |` : ""} ${int(r.subject!.rps)} | ${r.ratio!.toFixed(3)} |` +
            `${floor ? ` ${(r.subject!.rps / (r.floorRps ?? NaN)).toFixed(3)} |` : ""} ${ms(r.subject!.p99Ms)} | ` +
            `${r.reference!.serverCpuUsPerRequest.toFixed(2)} µs | ${(r.subjectCpuUsPerRequest ?? NaN).toFixed(2)} µs | ${((r.subjectDrainMs ?? 0) / 1000).toFixed(1)} s |`,
        ),
      );
    }
    out.push("");
  }
  return out.join("\n");
}

export function writeReport(figures: Figure[], info: RunInfo): { md: string; json: string; svg: string } {
  mkdirSync(info.opts.outDir, { recursive: true });
  const paths = { md: join(info.opts.outDir, "latest.md"), json: join(info.opts.outDir, "latest.json"), svg: join(info.opts.outDir, "latest.svg") };
  const { outDir: _o, workDir: _w, only, ...settingsJson } = info.opts;
  const json = {
    profile: info.opts.profile,
    command: info.command,
    startedAt: info.startedAt.toISOString(),
    finishedAt: info.finishedAt.toISOString(),
    machine: info.machine,
    settings: { ...settingsJson, only: only ? [...only] : null },
    log: info.log,
    figures,
  };
  writeFileSync(paths.json, JSON.stringify(json, null, 2) + "\n");
  writeFileSync(paths.svg, ratioChart(figures, `${info.machine.cpuModel}, ${info.machine.cores} cores — ${info.opts.profile} run, ${info.startedAt.toISOString().slice(0, 16)}Z`));
  writeFileSync(paths.md, renderMarkdown(figures, info));
  return paths;
}
