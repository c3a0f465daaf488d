/**
 * Command line of `npm run bench`: the run profile (full, --quick, --smoke) and where results go.
 *
 *   npm run bench                  full run (about 13 min + query seeding): 5 rounds of 8 s per figure, 60 s RSS runs
 *   npm run bench -- --quick       development run (about 2 min + query seeding): 3 rounds of 1 s, 4 s RSS runs
 *   npm run bench -- --smoke       proves the scripts work (CI): 1 round of 1 s, writes to a temp dir
 *   options: --out DIR, --only id,id (see bench/cases/index.ts), --generator wrk|autocannon, --no-install,
 *            --keep (keep server data and logs), --cpu-prof (clink servers write Bun CPU profiles, as markdown,
 *            into the kept work dir: find where a missed target's time goes)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Generator } from "./load.ts";
import { REPO_ROOT } from "./proc.ts";

export type Profile = "full" | "quick" | "smoke";

export interface Options {
  profile: Profile;
  /** Interleaved rounds per figure (A B A B …); the report gives their median. */
  rounds: number;
  /** Seconds per measured run and per warm-up run (wrk takes whole seconds). */
  durationS: number;
  warmupS: number;
  /** Concurrent connections for redirect throughput (wrk -c) and for API cases (autocannon -c). */
  connections: number;
  apiConnections: number;
  /** Length of the peak-RSS run. */
  rssS: number;
  /** Bulk-create repetitions per round. */
  bulkReps: number;
  /** Query figures (case 6, bench/lib/queries.ts): timed calls per side. */
  statsRequests: number;
  /** Clicks seeded over 90 days for the quiet and the busy link. */
  statsClicks: [number, number];
  /** Links of the small and the large account. */
  statsLinks: [number, number];
  /** Ingestion figures (case 9, bench/lib/ingestion.ts): clicks drained for spread and for Zipf traffic. */
  ingestClicks: [number, number];
  /** Distinct unknown slugs for the "every request misses storage" 404 figure (0: figure left out). */
  scanSlugs: number;
  outDir: string;
  /** Server data and logs; removed at the end unless --keep or a case failed. */
  workDir: string;
  keepWorkDir: boolean;
  only: Set<string> | null;
  /** Forces one generator for redirect throughput; default wrk when available. */
  generator: Generator | null;
  installWrk: boolean;
  /** Start clink servers with `bun --cpu-prof-md` (profiles land in workDir/profiles). */
  cpuProfile: boolean;
}

const PROFILES: Record<Profile, Omit<Options, "profile" | "outDir" | "workDir" | "keepWorkDir" | "only" | "generator" | "installWrk" | "cpuProfile">> = {
  full: { rounds: 5, durationS: 8, warmupS: 3, connections: 64, apiConnections: 32, rssS: 60, bulkReps: 8, statsRequests: 9, statsClicks: [10_000, 10_000_000], statsLinks: [1_000, 100_000], ingestClicks: [200_000, 500_000], scanSlugs: 500_000 },
  quick: { rounds: 3, durationS: 1, warmupS: 1, connections: 64, apiConnections: 32, rssS: 4, bulkReps: 3, statsRequests: 5, statsClicks: [10_000, 1_000_000], statsLinks: [1_000, 10_000], ingestClicks: [100_000, 200_000], scanSlugs: 0 },
  smoke: { rounds: 1, durationS: 1, warmupS: 1, connections: 16, apiConnections: 8, rssS: 2, bulkReps: 1, statsRequests: 3, statsClicks: [1_000, 10_000], statsLinks: [100, 1_000], ingestClicks: [20_000, 20_000], scanSlugs: 0 },
};

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean" },
      smoke: { type: "boolean" },
      out: { type: "string" },
      only: { type: "string" },
      generator: { type: "string" },
      "no-install": { type: "boolean" },
      keep: { type: "boolean" },
      "cpu-prof": { type: "boolean" },
    },
    allowPositionals: false,
  });
  const profile: Profile = values.smoke ? "smoke" : values.quick ? "quick" : "full";
  if (values.generator !== undefined && values.generator !== "wrk" && values.generator !== "autocannon") {
    throw new Error(`--generator must be wrk or autocannon, got "${values.generator}"`);
  }
  const outDir = values.out ?? (profile === "smoke" ? mkdtempSync(join(tmpdir(), "clink-bench-smoke-")) : join(REPO_ROOT, "bench/results"));
  const stamp = `${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}`;
  const workDir = profile === "smoke" ? join(outDir, "work") : join(REPO_ROOT, "bench/results/tmp", stamp);
  return {
    profile,
    ...PROFILES[profile],
    outDir,
    workDir,
    keepWorkDir: (values.keep ?? false) || (values["cpu-prof"] ?? false),
    only: values.only ? new Set(values.only.split(",").map((s) => s.trim()).filter(Boolean)) : null,
    generator: (values.generator as Generator | undefined) ?? null,
    // The smoke run never installs anything (it runs in CI); it uses wrk only if it is already there.
    installWrk: !values["no-install"] && profile !== "smoke",
    cpuProfile: values["cpu-prof"] ?? false,
  };
}
