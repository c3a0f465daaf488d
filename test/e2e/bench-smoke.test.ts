/**
 * The benchmark's harness works: `npm run bench -- --smoke --only redirect-embedded` (one 1 s round, results in
 * a temp dir, wrk used only if already installed, never installed here) starts the bare 302, the floor and a
 * real embedded clink, measures them in interleaved rounds, checks every click was recorded, and writes
 * latest.md, latest.json and latest.svg. The smallest case that exercises every part of the harness: the other
 * cases use the same pieces (servers, generators, comparisons, report), and a whole smoke run takes ~50 s.
 * Figures are not judged (machines vary): what is checked is that the case ran, measured something, stated the
 * redirect against the floor and the bare 302, and that the click check held. Case 9 (`ingest`) runs too, on the
 * test Postgres and Redis, small: clink's consumer and the ingestion floor (bench/lib/ingestion-floor.ts) drain the
 * same clicks, the floor checks its rollup and ledger hold every click, and clink is stated against it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const RUN_TIMEOUT_MS = 90_000;

interface Figure {
  id: string;
  caseNo: number;
  verdict: string;
  generator: string;
  ratio?: number;
  ratioUnit?: string;
  bareRatio?: number;
  target?: { op: string; value: number };
  subject?: { rps?: number };
  notes: string[];
  reason?: string;
}

let outDir: string;
let run: { code: number; stdout: string; stderr: string };
let report: { figures: Figure[]; machine: { cpuModel: string; cores: number; versions: Record<string, string> } };

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), "clink-bench-smoke-test-"));
  const proc = Bun.spawn([process.execPath, "run", "bench/run.ts", "--smoke", "--only", "redirect-embedded,ingest", "--no-install", "--out", outDir], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL_TEST ?? process.env.REDIS_URL },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), RUN_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  run = { code, stdout, stderr };
  if (existsSync(join(outDir, "latest.json"))) report = JSON.parse(readFileSync(join(outDir, "latest.json"), "utf8"));
}, RUN_TIMEOUT_MS + 10_000);

afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

const byId = (id: string) => report.figures.find((f) => f.id === id)!;

describe("npm run bench -- --smoke --only redirect-embedded,ingest", () => {
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

  test("the redirect and its floor were measured against the bare 302 by a named generator", () => {
    expect(report.figures.filter((f) => f.verdict === "error")).toEqual([]);
    for (const id of ["redirect-embedded", "redirect-floor"]) {
      const f = byId(id);
      expect(f.subject?.rps).toBeGreaterThan(0);
      expect(f.generator).toMatch(/^(wrk|autocannon)/);
    }
    expect(byId("redirect-floor").ratioUnit).toBe("× bare");
    expect(Number.isFinite(byId("redirect-floor").ratio)).toBe(true);
  });

  test("the redirect is judged against the floor, with its ratio to the bare 302 beside it", () => {
    const f = byId("redirect-embedded");
    expect(f.ratioUnit).toBe("× floor");
    expect(f.target).toEqual({ op: ">=", value: 0.9 });
    expect(Number.isFinite(f.ratio)).toBe(true);
    expect(Number.isFinite(f.bareRatio)).toBe(true);
    expect(["pass", "fail"]).toContain(f.verdict);
    // The judged ratio is the redirect's over the floor's, both against the same bare runs.
    expect(f.ratio! * byId("redirect-floor").ratio!).toBeCloseTo(f.bareRatio!, 1);
    expect(readFileSync(join(outDir, "latest.md"), "utf8")).toContain("× floor (");
  });

  test("the click check held: every served redirect recorded, no unexpected status", () => {
    const notes = report.figures.flatMap((f) => f.notes).join("\n");
    expect(notes).toContain("Clicks recorded:");
    expect(notes).not.toContain("CLICKS LOST");
    expect(notes).not.toContain("unexpected status");
  });

  test("ingestion: clink's consumer and the ingestion floor drained the same clicks, clink stated against the floor", () => {
    for (const kind of ["spread", "zipf"]) {
      const clink = byId(`ingest-${kind}`);
      const floor = byId(`ingest-floor-${kind}`);
      expect(clink.verdict).not.toBe("error");
      expect(floor.verdict).toBe("info");
      expect(floor.ratio).toBeGreaterThan(0);
      expect(floor.ratioUnit).toBe(" µs per click");
      expect(clink.notes[0]).toContain(`= ${(clink.ratio! / floor.ratio!).toFixed(2)}× the floor (floor ${floor.ratio!.toFixed(2)} µs`);
    }
  });
});
