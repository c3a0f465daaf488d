/**
 * `npm run bench`: answers, in one run on one machine, how close clink's redirector is to the fastest possible
 * HTTP redirect and how each cost grows with the work (design §7). Starts the bare baseline (bench/baseline.ts)
 * once, then runs every case in bench/cases/ against it, and writes bench/results/latest.{md,json,svg}.
 *
 *   npm run bench                 full run: about 13 min, plus seeding the query figures at the issue's sizes (minutes)
 *   npm run bench -- --quick      about 2 min plus smaller query figures, for development
 *   npm run bench -- --smoke      seconds; proves the scripts work (test/e2e/bench-smoke.test.ts), temp dir
 *   more: --out DIR, --only redirect-embedded,stats, --generator wrk|autocannon, --no-install, --keep
 *
 * Scale mode (case 2, and cases 5 and 6 on Postgres) runs when DATABASE_URL and REDIS_URL are set. Redirect cases
 * are judged against the floor measured beside them (bench/floor.ts). Exit code 0 when
 * every case ran (targets met or not: the report says), 1 when a case could not run.
 */
import { rmSync, mkdirSync } from "node:fs";
import { CASES } from "./cases/index.ts";
import { runAutocannon } from "./lib/autocannon.ts";
import type { Ctx } from "./lib/context.ts";
import type { Figure } from "./lib/figures.ts";
import type { Generator } from "./lib/load.ts";
import { describeMachine } from "./lib/machine.ts";
import { parseOptions } from "./lib/options.ts";
import { freePort, liveServers, startServer } from "./lib/proc.ts";
import { ratioText, writeReport } from "./lib/report.ts";
import { ensureWrk, runWrk, wrkPlacement, wrkVersion } from "./lib/wrk.ts";

const startedAt = new Date();
const argv = process.argv.slice(2);
const opts = parseOptions(argv);
const runLog: string[] = [];
const log = (s: string) => console.log(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)} s] ${s}`);
const note = (s: string) => {
  runLog.push(s);
  log(s);
};

async function stopEverything() {
  await Promise.all(liveServers().map((s) => s.stop()));
}

process.on("SIGINT", () => {
  void stopEverything().then(() => process.exit(130));
});

async function chooseGenerator(): Promise<{ generator: Generator; wrk: string | null }> {
  const wrk = opts.generator === "autocannon" ? await wrkVersion() : opts.installWrk ? await ensureWrk(log) : await wrkVersion();
  if (opts.generator === "autocannon") {
    note("Redirect throughput measured with autocannon (forced by --generator): it saturates near 92k requests/s on 2 cores, so redirect figures may be the generator's limit.");
    return { generator: "autocannon", wrk };
  }
  if (!wrk) {
    if (opts.generator === "wrk") throw new Error("--generator wrk, but wrk is not installed");
    note("wrk is not installed: redirect throughput measured with autocannon instead, whose own limit (~92k requests/s on 2 cores) may cap the figures; the generator check shows where.");
    return { generator: "autocannon", wrk };
  }
  note(`${wrkPlacement()}.`);
  return { generator: "wrk", wrk };
}

async function main(): Promise<number> {
  mkdirSync(opts.workDir, { recursive: true });
  log(`${opts.profile} run; results → ${opts.outDir}`);
  const { generator, wrk } = await chooseGenerator();
  const machine = await describeMachine(wrk);
  log(`${machine.cpuModel}, ${machine.cores} cores; Bun ${machine.versions.bun}, wrk ${machine.versions.wrk}`);

  const databaseUrl = process.env.DATABASE_URL?.trim();
  const redisUrl = process.env.REDIS_URL?.trim();
  const scale = databaseUrl && redisUrl ? { databaseUrl, redisUrl } : { skipped: "DATABASE_URL and REDIS_URL are not both set" };

  const baseline = await startServer({ name: "baseline", entry: "bench/baseline.ts", env: {}, port: await freePort(), logDir: opts.workDir, ready: "any" });
  const ctx: Ctx = {
    opts,
    log,
    redirectGenerator: generator,
    baseline,
    scale,
    load: (spec, g) => (g === "wrk" ? runWrk(spec, opts.workDir) : runAutocannon(spec)),
    versions: {},
    warmed: new Set(),
    quietBudgetMs: 90_000,
  };

  const figures: Figure[] = [];
  let failed = false;
  for (const c of CASES) {
    if (opts.only && !opts.only.has(c.id)) continue;
    log(`case ${c.caseNos.join("+")}: ${c.title}`);
    try {
      figures.push(...(await c.run(ctx)));
    } catch (e) {
      failed = true;
      const message = (e as Error).message ?? String(e);
      log(`  ERROR: ${message}`);
      figures.push({ id: c.id, caseNo: c.caseNos[0], title: c.title, verdict: "error", generator: "-", notes: [], reason: message.split("\n")[0] });
    }
  }
  await stopEverything();
  figures.sort((a, b) => a.caseNo - b.caseNo);
  for (const s of figures.filter((f) => f.verdict === "skipped")) note(`Case ${s.caseNo} (${s.title}) skipped: ${s.reason}`);

  Object.assign(machine.versions, ctx.versions);
  const command = `npm run bench${argv.length ? ` -- ${argv.join(" ")}` : ""}`;
  const paths = writeReport(figures, { command, startedAt, finishedAt: new Date(), machine, opts, log: runLog });

  console.log("");
  for (const f of figures) {
    const ratio = ratioText(f) === "–" ? "" : ratioText(f);
    const target = f.target ? ` (target ${f.target.op} ${f.target.value}${f.ratioUnit === "× floor" ? "× floor" : ""})` : "";
    console.log(`  ${String(f.caseNo).padEnd(2)} ${f.verdict.padEnd(7)} ${ratio.padEnd(34)}${target.padEnd(24)} ${f.title}${f.reason ? `: ${f.reason}` : ""}`);
  }
  console.log(`\nreport: ${paths.md}\n        ${paths.json}\n        ${paths.svg}`);
  if (!opts.keepWorkDir && !failed) rmSync(opts.workDir, { recursive: true, force: true });
  else log(`server data and logs kept in ${opts.workDir}`);
  return failed ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (e) {
  console.error(e);
  await stopEverything();
  process.exitCode = 1;
}
