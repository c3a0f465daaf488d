/** The shape of every result the report prints and writes to latest.json. */

export type Verdict = "pass" | "fail" | "info" | "skipped" | "error";

/** A §7 target on a ratio: subject/reference at least (">=") or at most ("<=") `value`. */
export interface Target {
  op: ">=" | "<=";
  value: number;
}

/** One measured side of a figure (the case, or what it is compared with). */
export interface Side {
  label: string;
  rps?: number;
  p50Ms?: number;
  p99Ms?: number;
  /** For cost figures (bulk, stats): the median time of one operation. */
  ms?: number;
  /** For the RSS figure. */
  peakRssMb?: number;
  /** Server CPU time per request (µs), for throughput figures. */
  cpuUsPerRequest?: number;
}

export interface GeneratorCheck {
  /** Highest share of a core the generator used in any run of this figure. */
  peakCores: number;
  limit: number;
  ok: boolean;
  text: string;
}

export interface Figure {
  id: string;
  /** The case number (1-8: design §7's; 9: issue #20's ingestion). */
  caseNo: number;
  title: string;
  verdict: Verdict;
  /** Which generator (or client) measured it, and how. */
  generator: string;
  subject?: Side;
  reference?: Side;
  /** subject / reference, the ratio the target judges: "× bare", "× floor" (redirects), "× one INSERT"… */
  ratio?: number;
  /** What the ratio means, e.g. "× bare" or "× one INSERT". */
  ratioUnit?: string;
  /** Redirect figures, judged against the floor (ratio "× floor"): the same subject against the bare 302. */
  bareRatio?: number;
  target?: Target;
  generatorCheck?: GeneratorCheck;
  notes: string[];
  /** Per-round data, for latest.json. */
  rounds?: unknown[];
  /** Why a figure was skipped or failed to run. */
  reason?: string;
}

export function judge(ratio: number, target: Target | undefined): Verdict {
  if (!target) return "info";
  if (!Number.isFinite(ratio)) return "fail";
  return (target.op === ">=" ? ratio >= target.value : ratio <= target.value) ? "pass" : "fail";
}

export const targetText = (t: Target, unit = "") => `${t.op === ">=" ? "≥" : "≤"} ${t.value}${unit}`;
