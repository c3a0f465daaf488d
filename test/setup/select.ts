/**
 * Which test files a `bun test` run has, told from its arguments: bun gives a preload no list, and the test setup
 * (services.ts) provides a service only to runs with a file that needs it.
 */
import { statSync } from "node:fs";
import { relative, resolve, sep } from "node:path";

const SCRIPT = /\.(c|m)?[jt]sx?$/;

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The files a `bun test ARGS` run from `cwd` runs, as bun picks them: a script named as a path, or every known test
 * file a path filter names (the file, a folder above it, or a part of its path). Flags and their values name no
 * file; when no argument names one, the run has every test file.
 */
export function selectTestFiles(args: string[], testFiles: string[], cwd: string, isScript = isFile): string[] {
  const picked = new Set<string>();
  for (const arg of args) {
    if (arg.startsWith("-")) continue;
    const path = resolve(cwd, arg);
    if (SCRIPT.test(path) && isScript(path)) picked.add(path);
    const part = arg.replace(/^\.\//, "");
    for (const file of testFiles) {
      if (file === path || file.startsWith(path + sep) || relative(cwd, file).includes(part)) picked.add(file);
    }
  }
  return picked.size > 0 ? [...picked] : testFiles;
}

/** Whether any of `files` lies in one of the folders `dirs` of `testRoot`. */
export function inTestDirs(files: string[], dirs: string[], testRoot: string): boolean {
  return files.some((f) => dirs.some((d) => f.startsWith(resolve(testRoot, d) + sep)));
}
