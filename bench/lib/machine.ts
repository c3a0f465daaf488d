/** The machine and the software a report's figures belong to: without these, figures cannot be compared. */
import { readFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, runCommand } from "./proc.ts";

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  os: string;
  kernel: string;
  versions: Record<string, string>;
  commit: string;
}

function read(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function packageVersion(name: string): string {
  try {
    return JSON.parse(read(join(REPO_ROOT, "node_modules", name, "package.json"))).version ?? "unknown";
  } catch {
    return "unknown";
  }
}

export async function describeMachine(wrk: string | null): Promise<Machine> {
  const cpuinfo = read("/proc/cpuinfo");
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? "unknown";
  const hypervisor = /^flags\s*:.*\bhypervisor\b/m.test(cpuinfo) ? " (virtual machine)" : "";
  const os = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(read("/etc/os-release"))?.[1] ?? process.platform;
  const rev = await runCommand(["git", "rev-parse", "--short", "HEAD"]).catch(() => null);
  const dirty = await runCommand(["git", "status", "--porcelain", "--untracked-files=no"]).catch(() => null);
  const commit = rev?.code === 0 ? rev.stdout.trim() + (dirty?.stdout.trim() ? " + uncommitted changes" : "") : "unknown";
  return {
    cpuModel: model + hypervisor,
    cores: cpus().length,
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os,
    kernel: release(),
    versions: {
      bun: Bun.version,
      wrk: wrk ?? "not installed",
      autocannon: packageVersion("autocannon"),
      elysia: packageVersion("elysia"),
    },
    commit,
  };
}
