/**
 * What Linux says about processes and the machine, read from /proc: CPU time of a process (all its threads),
 * its resident memory now (VmRSS) and at its peak (VmHWM), and the machine's busy time. Used to show who
 * was busy during a measurement (server, load generator, anything else) and to wait until servers are idle.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second for /proc/<pid>/stat times; 100 on every Linux we run on. */
const CLK_TCK = 100;

/** CPU seconds (user + system, all threads) a process has used so far; null if it is gone. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces; fields after the closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime, stime (fields 14 and 15)
  } catch {
    return null;
  }
}

export interface Memory {
  rssMb: number;
  peakRssMb: number;
}

/** VmRSS and VmHWM of a process in MiB; null if it is gone. */
export function processMemory(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rssMb: kb("VmRSS") / 1024, peakRssMb: kb("VmHWM") / 1024 };
  } catch {
    return null;
  }
}

/** Busy and total CPU seconds of the whole machine since boot (all cores). */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] ?? 0); // idle + iowait
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // guest time is already inside user
  return { busy: (total - idle) / CLK_TCK, total: total / CLK_TCK };
}

/** Measures the CPU used by some processes and by the whole machine between start() and stop(). */
export class CpuWindow {
  private readonly startProc: Map<number, number | null>;
  private readonly startMachine = machineCpuSeconds();
  private readonly startedAt = performance.now();

  constructor(private readonly pids: number[]) {
    this.startProc = new Map(pids.map((p) => [p, processCpuSeconds(p)]));
  }

  /** Cores used on average (1.0 = one core fully busy) per pid, and by the machine as a whole. */
  stop(): { seconds: number; perPid: Map<number, number>; machineBusyCores: number } {
    const seconds = (performance.now() - this.startedAt) / 1000;
    const perPid = new Map<number, number>();
    for (const pid of this.pids) {
      const a = this.startProc.get(pid);
      const b = processCpuSeconds(pid);
      if (a != null && b != null) perPid.set(pid, (b - a) / seconds);
    }
    const m = machineCpuSeconds();
    return { seconds, perPid, machineBusyCores: (m.busy - this.startMachine.busy) / seconds };
  }
}

/**
 * Waits until every pid uses less than `threshold` of a core over a `sampleMs` window (a server still
 * writing the clicks of the last run is not idle), or `timeoutMs` passes. Returns the time it took and
 * whether the processes did become idle.
 */
export async function waitIdle(pids: number[], opts: { threshold?: number; sampleMs?: number; timeoutMs?: number } = {}) {
  const threshold = opts.threshold ?? 0.05;
  const sampleMs = opts.sampleMs ?? 250;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const started = performance.now();
  for (;;) {
    const w = new CpuWindow(pids);
    await Bun.sleep(sampleMs);
    const { perPid } = w.stop();
    const busy = [...perPid.values()].some((cores) => cores >= threshold);
    const elapsed = performance.now() - started;
    // The sample that proved idleness is not part of the time the work took.
    if (!busy) return { ms: Math.max(0, elapsed - sampleMs), idle: true };
    if (elapsed >= timeoutMs) return { ms: elapsed, idle: false };
  }
}

/**
 * Waits (at most `timeoutMs`) until the rest of the machine, everything but `pids`, uses less than `maxOther`
 * cores: other work on a shared 2-core machine would otherwise be measured as the server's slowness.
 * Returns the cores the rest of the machine used in the last sample.
 */
export async function waitMachineQuiet(pids: number[], maxOther: number, timeoutMs: number): Promise<{ ms: number; otherCores: number }> {
  const started = performance.now();
  for (;;) {
    const w = new CpuWindow(pids);
    await Bun.sleep(200);
    const { perPid, machineBusyCores } = w.stop();
    const other = Math.max(0, machineBusyCores - [...perPid.values()].reduce((a, b) => a + b, 0));
    const ms = performance.now() - started;
    if (other < maxOther || ms >= timeoutMs) return { ms, otherCores: other };
  }
}
