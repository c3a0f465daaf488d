/**
 * The interleaved comparison behind every throughput figure: reference (A) and subject (B) are measured in
 * turns, A B A B …, after one warm-up run each, with every server idle before each run (a clink server may
 * still be writing the clicks of its previous run). The figure is the median over rounds; the ratio is the
 * median of the per-round ratios, so slow drift of the machine cancels out.
 */
import type { Ctx } from "./context.ts";
import type { Figure, GeneratorCheck, Side, Target } from "./figures.ts";
import { judge } from "./figures.ts";
import { GENERATOR_SATURATION, otherCores, type Generator, type LoadResult, type LoadSpec } from "./load.ts";
import { processCpuSeconds, waitIdle, waitMachineQuiet } from "./procfs.ts";
import { median } from "./stats.ts";

export interface Contender {
  label: string;
  spec: LoadSpec;
  /** Names of spec.serverPids, when a case is served by several processes (Redis mode: control, redirector). */
  processNames?: string[];
  /** Services the subject's work also runs in (Redis, Postgres), looked up before each run; local pids only. */
  services?: () => Promise<{ name: string; pid: number }[]>;
  /** Called just before and just after each measured subject run (outside the measurement), for checks. */
  aroundRun?: { before(): Promise<void>; after(result: LoadResult): Promise<void> };
}

export interface Round {
  reference: LoadResult;
  subject: LoadResult;
  ratio: number;
  /** How long the subject's servers stayed busy after its run (writing queued clicks). */
  subjectDrainMs: number;
  /** Subject's server CPU per answered request, the work done after the run (queued clicks) included. */
  subjectCpuUsPerRequest: number;
  /** The same per subject process, when there are several. */
  subjectCpuUsPerRequestByProcess?: Record<string, number>;
  /** CPU per request in the services (Redis, Postgres backends), when they run on this machine. */
  serviceCpuUsPerRequest?: Record<string, number>;
}

/** Other load tolerated on the machine before a run starts (cores), and how long to wait for it per run. */
const QUIET_OTHER_CORES = 0.3;
const QUIET_WAIT_MS = { full: 5_000, quick: 0, smoke: 0 } as const;

export interface Comparison {
  generator: Generator;
  /** The reference's warm-up is null when that server was already warmed with this generator earlier in the run. */
  warmup: { reference: LoadResult | null; subject: LoadResult };
  rounds: Round[];
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/**
 * Waits until `pids` are idle and then, within the benchmark's budget, until the rest of the machine is quiet
 * (e.g. Postgres vacuuming after an earlier case): that work would otherwise be measured as the case's own.
 * Returns how long the servers took to become idle.
 */
export async function settle(ctx: Ctx, pids: number[]): Promise<number> {
  const w = await waitIdle(pids, { sampleMs: 150 });
  if (!w.idle) ctx.log(`  servers still busy after ${Math.round(w.ms / 1000)} s; measuring anyway`);
  // Waiting for other work on the machine to end is capped per run and for the whole benchmark.
  const quietMs = Math.min(QUIET_WAIT_MS[ctx.opts.profile], ctx.quietBudgetMs);
  if (quietMs > 0) ctx.quietBudgetMs -= (await waitMachineQuiet([...pids, process.pid], QUIET_OTHER_CORES, quietMs)).ms;
  return w.ms;
}

export async function interleave(ctx: Ctx, generator: Generator, reference: Contender, subject: Contender): Promise<Comparison> {
  return (await interleaveSubjects(ctx, generator, reference, [subject]))[0]!;
}

/**
 * Several subjects against one reference, in turns A B C A B C …: each round's subjects are divided by the
 * reference run just before them, so a subject that only serves as a yardstick for another (the floor under
 * case 1) costs its own runs but no extra reference runs.
 */
export async function interleaveSubjects(ctx: Ctx, generator: Generator, reference: Contender, subjects: Contender[]): Promise<Comparison[]> {
  const all = [...new Set([...reference.spec.serverPids, ...subjects.flatMap((s) => s.spec.serverPids)])];
  const idle = (pids = all) => settle(ctx, pids);
  const warm = (c: Contender) => ({ ...c.spec, durationS: ctx.opts.warmupS });
  await idle();
  // The baseline runs for the whole benchmark: it is warmed once per generator, not before every figure.
  const refKey = `${reference.spec.serverPids.join(",")}:${generator}`;
  let warmRef: LoadResult | null = null;
  if (!ctx.warmed.has(refKey)) {
    warmRef = await ctx.load(warm(reference), generator);
    ctx.warmed.add(refKey);
    await idle();
  }
  const out: Comparison[] = [];
  for (const subject of subjects) {
    out.push({ generator, warmup: { reference: warmRef, subject: await ctx.load(warm(subject), generator) }, rounds: [] });
    await idle();
  }
  for (let i = 0; i < ctx.opts.rounds; i++) {
    const a = await ctx.load(reference.spec, generator);
    await idle();
    for (const [k, subject] of subjects.entries()) {
      const round = await measureSubject(ctx, generator, subject, a, idle);
      out[k]!.rounds.push(round);
      const b = round.subject;
      ctx.log(`  round ${i + 1}: ${reference.label} ${Math.round(a.rps)}/s, ${subject.label} ${Math.round(b.rps)}/s → ${b.rps / a.rps >= 0 ? (b.rps / a.rps).toFixed(3) : "?"}×` +
        (round.subjectDrainMs > 500 ? ` (server busy ${round1(round.subjectDrainMs / 1000)} s after the run)` : ""));
    }
  }
  return out;
}

/** One measured run of `subject`, against the reference run `a` just before it. */
async function measureSubject(ctx: Ctx, generator: Generator, subject: Contender, a: LoadResult, idle: (pids?: number[]) => Promise<number>): Promise<Round> {
  await subject.aroundRun?.before();
  const cpuBefore = subject.spec.serverPids.map((p) => processCpuSeconds(p) ?? 0);
  const services = subject.services ? await subject.services() : [];
  const serviceBefore = services.map((x) => processCpuSeconds(x.pid) ?? 0);
  const b = await ctx.load(subject.spec, generator);
  await subject.aroundRun?.after(b);
  // Only the subject can still be busy (writing its clicks): the time it takes is the drain.
  const drainMs = await idle(subject.spec.serverPids);
  const perProcess = subject.spec.serverPids.map((p, j) => (((processCpuSeconds(p) ?? 0) - cpuBefore[j]) * 1e6) / Math.max(1, b.requests));
  const cpuUs = perProcess.reduce((x, y) => x + y, 0);
  const names = subject.processNames;
  let serviceCpu: Record<string, number> | undefined;
  if (services.length) {
    serviceCpu = {};
    services.forEach((x, j) => {
      const us = (((processCpuSeconds(x.pid) ?? serviceBefore[j]) - serviceBefore[j]) * 1e6) / Math.max(1, b.requests);
      serviceCpu![x.name] = (serviceCpu![x.name] ?? 0) + us;
    });
  }
  return {
    reference: a,
    subject: b,
    ratio: b.rps / a.rps,
    subjectDrainMs: drainMs,
    subjectCpuUsPerRequest: cpuUs,
    subjectCpuUsPerRequestByProcess: names ? Object.fromEntries(names.map((n, j) => [n, perProcess[j]])) : undefined,
    serviceCpuUsPerRequest: serviceCpu,
  };
}

function summarize(label: string, runs: LoadResult[], cpuUsPerRequest: number[]): Side {
  return {
    label,
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    cpuUsPerRequest: median(cpuUsPerRequest),
  };
}

/**
 * Was the generator below saturation? A run is generator-bound when the generator used ≥ 90% of its one core
 * while the server was not at its own limit (< 90% of a core: Bun answers on one JS thread). When both are
 * near 100%, the machine's two cores are simply full on both sides: the server could not have gone faster,
 * so the figure stands as the server's limit on this machine; the text says so.
 */
export function generatorCheck(runs: LoadResult[]): GeneratorCheck {
  const peak = Math.max(...runs.map((r) => r.generatorCores));
  const busy = runs.filter((r) => r.generatorCores >= GENERATOR_SATURATION);
  const bound = busy.filter((r) => r.serverCores < GENERATOR_SATURATION);
  const name = runs[0]?.generator ?? "generator";
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  let text: string;
  if (busy.length === 0) text = `${name} used at most ${pct(peak)} of its one core (saturation: ${pct(GENERATOR_SATURATION)})`;
  else if (bound.length === 0) {
    text =
      `${name} reached ${pct(peak)} of its core in ${busy.length} of ${runs.length} runs, each time with the server also at its limit ` +
      `(≥ ${pct(Math.min(...busy.map((r) => r.serverCores)))} of a core): both cores of the machine were full, so those runs show the server's limit here, not the generator's`;
  } else {
    text =
      `${name} was saturated in ${bound.length} of ${runs.length} runs (up to ${pct(peak)} of its core while the server had headroom): ` +
      `those figures are the generator's limit, not the server's`;
  }
  return { peakCores: peak, limit: GENERATOR_SATURATION, ok: bound.length === 0, text };
}

export function describeGenerator(generator: Generator, connections: number, varied: boolean): string {
  return generator === "wrk"
    ? `wrk -t1 -c${connections}${varied ? " + Lua (varied requests)" : ""}`
    : `autocannon -c${connections}${varied ? " (request list)" : ""}`;
}

/**
 * Turns a comparison into a figure with the median figures, the ratio, the verdict and the checks.
 * `referenceIsCeiling`: the reference runs measure the generator's own ceiling (API case: autocannon against
 * the bare server), so only the subject's runs must keep the generator below saturation.
 */
export function throughputFigure(
  base: { id: string; caseNo: number; title: string; target?: Target; notes?: string[]; referenceIsCeiling?: boolean },
  cmp: Comparison,
  labels: { subject: string; reference: string },
  connections: number,
  varied: boolean,
): Figure {
  const subjects = cmp.rounds.map((r) => r.subject);
  const references = cmp.rounds.map((r) => r.reference);
  const ratio = median(cmp.rounds.map((r) => r.ratio));
  const all = [...subjects, ...references, cmp.warmup.subject, ...(cmp.warmup.reference ? [cmp.warmup.reference] : [])];
  const notes = [...(base.notes ?? [])];
  const errors = all.reduce((n, r) => n + r.errors, 0);
  const unexpected = all.reduce((n, r) => n + r.unexpected, 0);
  if (errors) notes.push(`${errors} socket errors or timeouts across all runs.`);
  if (unexpected) notes.push(`${unexpected} answers had an unexpected status.`);
  const server = median(subjects.map((r) => r.serverCores));
  const cpuSubject = median(cmp.rounds.map((r) => r.subjectCpuUsPerRequest));
  const cpuReference = median(references.map((r) => r.serverCpuUsPerRequest));
  notes.push(
    `Server CPU per request (median; for clink including the work left after each run): ${cpuSubject.toFixed(2)} µs vs ${cpuReference.toFixed(2)} µs for the bare 302, ` +
      `i.e. ${(cpuSubject - cpuReference).toFixed(2)} µs of clink's own work per request (CPU-time ratio ${(cpuReference / cpuSubject).toFixed(2)}×, less sensitive to other load than requests/s).`,
  );
  const byProcess = cmp.rounds[0]?.subjectCpuUsPerRequestByProcess;
  const services = cmp.rounds[0]?.serviceCpuUsPerRequest;
  if (byProcess) {
    const parts = Object.keys(byProcess).map((n) => `${n} ${median(cmp.rounds.map((r) => r.subjectCpuUsPerRequestByProcess![n])).toFixed(2)} µs`);
    const serviceParts = services ? Object.keys(services).map((n) => `${n} ${median(cmp.rounds.map((r) => r.serviceCpuUsPerRequest?.[n] ?? NaN)).toFixed(2)} µs`) : [];
    notes.push(
      `Per process: ${parts.join(", ")} per request` +
        (serviceParts.length ? `; in the services on this machine: ${serviceParts.join(", ")} (Postgres: the backends serving clink, not its background writers).` : " (Redis and Postgres not included)."),
    );
  }
  const other = median(all.map(otherCores));
  notes.push(
    `CPU during the subject's runs (median): server ${server.toFixed(2)} cores, generator ${median(subjects.map((r) => r.generatorCores)).toFixed(2)}, ` +
      `rest of the machine ${median(subjects.map(otherCores)).toFixed(2)} (kernel networking, ${services ? "Redis, Postgres, " : ""}other processes).`,
  );
  const referenceOther = median(references.map(otherCores));
  if (referenceOther > 0.35) notes.push(`The machine was not quiet: ${referenceOther.toFixed(2)} cores were busy outside the server and the generator during the reference runs (median).`);
  const verdict = errors || unexpected ? "fail" : judge(ratio, base.target);
  return {
    id: base.id,
    caseNo: base.caseNo,
    title: base.title,
    verdict,
    generator: describeGenerator(cmp.generator, connections, varied),
    subject: summarize(labels.subject, subjects, cmp.rounds.map((r) => r.subjectCpuUsPerRequest)),
    reference: summarize(labels.reference, references, references.map((r) => r.serverCpuUsPerRequest)),
    ratio,
    ratioUnit: "× bare",
    target: base.target,
    generatorCheck: generatorCheck(base.referenceIsCeiling ? [...subjects, cmp.warmup.subject] : all),
    notes,
    rounds: cmp.rounds.map((r) => ({
      reference: r.reference,
      subject: r.subject,
      ratio: r.ratio,
      subjectDrainMs: r.subjectDrainMs,
      subjectCpuUsPerRequest: r.subjectCpuUsPerRequest,
      subjectCpuUsPerRequestByProcess: r.subjectCpuUsPerRequestByProcess,
    })),
  };
}
