/**
 * The benchmark's scripts start and produce a report: `npm run bench -- --smoke` (one 1 s round per figure,
 * results in a temp dir, wrk used only if already installed, never installed here) runs every case against
 * the real servers and writes latest.md, latest.json and latest.svg. Figures are not judged (CI machines vary);
 * what is checked is that each case ran, measured something, and that the correctness checks the benchmark
 * makes on the way (every click recorded, rate limit applied, statuses as expected) held. Redis mode runs too
 * when the CI's Postgres and Redis are announced (DATABASE_URL_TEST, REDIS_URL_TEST).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const RUN_TIMEOUT_MS = 150_000;

interface Figure {
  id: string;
  caseNo: number;
  verdict: string;
  generator: string;
  ratio?: number;
  subject?: { rps?: number; ms?: number; peakRssMb?: number };
  notes: string[];
  reason?: string;
}

let outDir: string;
let run: { code: number; stdout: string; stderr: string };
let report: { figures: Figure[]; machine: { cpuModel: string; cores: number; versions: Record<string, string> } };

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), "clink-bench-smoke-test-"));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "DATABASE_URL" && k !== "REDIS_URL") env[k] = v;
  if (process.env.DATABASE_URL_TEST && process.env.REDIS_URL_TEST) {
    env.DATABASE_URL = process.env.DATABASE_URL_TEST;
    env.REDIS_URL = process.env.REDIS_URL_TEST;
  }
  const proc = Bun.spawn([process.execPath, "run", "bench/run.ts", "--smoke", "--out", outDir], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), RUN_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  run = { code, stdout, stderr };
  if (existsSync(join(outDir, "latest.json"))) report = JSON.parse(readFileSync(join(outDir, "latest.json"), "utf8"));
}, RUN_TIMEOUT_MS + 10_000);

afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

const byId = (id: string) => report.figures.find((f) => f.id === id);

describe("npm run bench -- --smoke", () => {
  test("exits 0 and writes latest.md, latest.json and latest.svg", () => {
    if (run.code !== 0) console.error(run.stdout.slice(-4000), run.stderr.slice(-4000));
    expect(run.code).toBe(0);
    for (const f of ["latest.md", "latest.json", "latest.svg"]) expect(existsSync(join(outDir, f))).toBe(true);
    expect(readFileSync(join(outDir, "latest.svg"), "utf8")).toStartWith("<svg");
  });

  test("the report names the machine and the versions, and has the §7 table", () => {
    expect(report.machine.cores).toBeGreaterThan(0);
    expect(report.machine.cpuModel.length).toBeGreaterThan(0);
    expect(report.machine.versions.bun).toBe(Bun.version);
    const md = readFileSync(join(outDir, "latest.md"), "utf8");
    expect(md).toContain("## §7 targets");
    expect(md).toContain(report.machine.cpuModel);
  });

  test("every case ran: no figure ended in an error", () => {
    const errors = report.figures.filter((f) => f.verdict === "error");
    expect(errors.map((f) => `${f.id}: ${f.reason}`)).toEqual([]);
    const ids = ["redirect-embedded", "redirect-floor", "redirect-redis", "redirect-rules", "not-found-cached", "api-get", "bulk-embedded", "bulk-postgres", "stats-embedded", "stats-postgres", "peak-rss"];
    for (const id of ids) {
      expect(byId(id)).toBeDefined();
    }
  });

  test("throughput figures measured requests against the baseline and name their generator", () => {
    for (const id of ["redirect-embedded", "redirect-floor", "redirect-rules", "not-found-cached", "api-get"]) {
      const f = byId(id)!;
      expect(f.subject?.rps).toBeGreaterThan(0);
      expect(Number.isFinite(f.ratio)).toBe(true);
      expect(f.generator).toMatch(/^(wrk|autocannon)/);
    }
    expect(byId("api-get")!.generator).toStartWith("autocannon");
  });

  test("the correctness checks held: every click recorded, rate limit applied, no unexpected status", () => {
    for (const f of report.figures) {
      const notes = f.notes.join("\n");
      expect(notes).not.toContain("CLICKS LOST");
      expect(notes).not.toContain("RATE LIMIT NOT APPLIED");
      expect(notes).not.toContain("unexpected status");
    }
  });

  test("cost figures timed both sides", () => {
    for (const id of ["bulk-embedded", "stats-embedded"]) {
      const f = byId(id)!;
      expect(f.subject?.ms).toBeGreaterThan(0);
      expect(Number.isFinite(f.ratio)).toBe(true);
    }
    expect(byId("peak-rss")!.subject?.peakRssMb).toBeGreaterThan(0);
  });

  test("Redis mode ran when Postgres and Redis were given, else says why it was skipped", () => {
    const scale = ["redirect-redis", "bulk-postgres", "stats-postgres"].map((id) => byId(id)!);
    if (process.env.DATABASE_URL_TEST && process.env.REDIS_URL_TEST) {
      expect(scale[0].subject?.rps).toBeGreaterThan(0);
      expect(scale[1].subject?.ms).toBeGreaterThan(0);
      expect(scale[2].subject?.ms).toBeGreaterThan(0);
    } else {
      for (const f of scale) expect(f.verdict === "skipped" && f.reason!.length > 0).toBe(true);
    }
  });
});
