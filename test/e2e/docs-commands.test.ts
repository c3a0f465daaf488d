/**
 * The documentation's commands, run: every ```sh block of README.md and docs/**\/*.md runs in bash (`set -euo
 * pipefail`) against a real embedded server, and every ```ts example with Bun, so what the documents show stays true.
 *
 * Blocks run in document order from a working directory laid out like a checkout (package.json, node_modules and
 * the sources linked in; `data/` is the server's DATA_DIR), with `localhost:3000` replaced by the server's address
 * and CLINK_KEY set to one of its keys. curl runs with `--fail-with-body` (a .curlrc), so an HTTP error fails the
 * block; a `# prints: TEXT` line inside a block says what its output must contain.
 *
 * A block that cannot run here (Docker, a scale-mode deployment, a CLI the machine lacks) says why in a line
 * `# not run by the docs test: <reason>` (`//` in TypeScript); such blocks must be few and give a reason.
 * The README itself is checked too: at most 300 lines, the two commands, its configuration rows as in
 * docs/configuration.md, no `$KEY`; and every relative link in the documents names a file and heading that exist.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { runToExit, type Exited } from "../helpers/run-to-exit.ts";
import { baseEnv, createKey, makeTempDir, REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";

const DOC_ADDRESS = "localhost:3000";
const NOT_RUN = /^\s*(?:#|\/\/) not run by the docs test:(.*)$/m;
const PRINTS = /^\s*# prints: (.+)$/gm;
/** Fenced blocks, indented (in a list) or not: their text is neither headings nor links. */
const CODE_BLOCKS = /^ *```[\s\S]*?^ *```\s*$/gm;
/** Blocks the test may leave out; more means the documents drifted from what can be checked. */
const MAX_NOT_RUN = 6;
const BLOCK_TIMEOUT_MS = 60_000;
/** What a documented command needs of a checkout, linked into the working directory. */
const CHECKOUT_ENTRIES = ["package.json", "package-lock.json", "node_modules", "control", "redirector", "shared", "tsconfig.json", "deploy"];

interface DocBlock {
  file: string;
  line: number;
  lang: "sh" | "ts";
  code: string;
  /** Why it is not run, when it says so. */
  notRun?: string;
}

/** README.md first, then docs/ in path order: the documents a reader sees. */
function documentPaths(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : []))
      .sort();
  return ["README.md", ...walk("docs")];
}

/** The fenced ```sh and ```ts blocks of one markdown text. */
function extractBlocks(file: string, markdown: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const fence = /^ *```(\w*)[^\n]*\n([\s\S]*?)^ *```\s*$/gm;
  for (let m; (m = fence.exec(markdown)); ) {
    const lang = m[1];
    if (lang !== "sh" && lang !== "ts") continue;
    const line = markdown.slice(0, m.index).split("\n").length;
    const reason = NOT_RUN.exec(m[2])?.[1].trim();
    blocks.push({ file, line, lang, code: m[2], ...(reason === undefined ? {} : { notRun: reason }) });
  }
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function headingAnchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const outside = markdown.replace(CODE_BLOCKS, "");
  return new Set([...outside.matchAll(/^#{1,6} (.+)$/gm)].map((m) => headingAnchor(m[1])));
}

/** Relative links `[text](path#anchor)` of a document that name no file, or no heading in it. */
function brokenLinks(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), "utf8").replace(CODE_BLOCKS, "");
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue;
    const [path, anchor] = target.split("#");
    const resolved = path === "" ? join(root, file) : resolve(root, dirname(file), path);
    if (!existsSync(resolved)) broken.push(`${file}: ${target} (no such file)`);
    else if (anchor && resolved.endsWith(".md") && !anchorsOf(readFileSync(resolved, "utf8")).has(anchor)) {
      broken.push(`${file}: ${target} (no such heading in ${relative(root, resolved)})`);
    }
  }
  return broken;
}

/** The configuration table's rows (`| \`NAME\` | default | meaning |`) of a markdown text, by name. */
function configRows(markdown: string): Map<string, string> {
  return new Map([...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|.*$/gm)].map((m) => [m[1], m[0]]));
}

/** A shell block in bash, stopping at the first failing command (a pipe's too), killed after the block timeout. */
async function runShell(script: string, cwd: string, env: Record<string, string>): Promise<Exited> {
  const proc = Bun.spawn(["bash", "-c", `set -euo pipefail\n${script}`], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), BLOCK_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const blocks = documentPaths(REPO_ROOT).flatMap((file) => extractBlocks(file, readFileSync(join(REPO_ROOT, file), "utf8")));
const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

describe("the documents", () => {
  test("the README is a front door: at most 300 lines, with the two commands", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm test");
  });

  test("the README's configuration rows are the rows of docs/configuration.md", () => {
    const full = configRows(readFileSync(join(REPO_ROOT, "docs/configuration.md"), "utf8"));
    const shown = configRows(readme);
    expect(shown.size).toBeGreaterThan(0);
    for (const [name, row] of shown) expect(full.get(name) ?? `${name} missing from docs/configuration.md`).toBe(row);
  });

  test("examples use $CLINK_KEY, never $KEY", () => {
    const uses = blocks.filter((b) => /\$\{?KEY\b/.test(b.code)).map((b) => `${b.file}:${b.line}`);
    expect(uses).toEqual([]);
  });

  test("every relative link names a file and a heading that exist", () => {
    expect(documentPaths(REPO_ROOT).flatMap((file) => brokenLinks(REPO_ROOT, file))).toEqual([]);
  });

  test("the blocks left out are few, and each says why", () => {
    const notRun = blocks.filter((b) => b.notRun !== undefined);
    expect(blocks.length - notRun.length).toBeGreaterThanOrEqual(10);
    expect(notRun.length).toBeLessThanOrEqual(MAX_NOT_RUN);
    for (const b of notRun) expect(`${b.file}:${b.line} ${b.notRun}`).toMatch(/:\d+ \S.{9,}/);
  });
});

describe("every documented command, run against a real embedded server", () => {
  let server: TestServer;
  let work: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    work = makeTempDir("docs");
    for (const entry of CHECKOUT_ENTRIES) symlinkSync(join(REPO_ROOT, entry), join(work, entry));
    mkdirSync(join(work, "data"));
    writeFileSync(join(work, ".curlrc"), "fail-with-body\nmax-time = 30\n");
    server = await startServer({ dataDir: join(work, "data") });
    const key = await createKey(server, "docs@example.com", "docs test");
    env = { ...baseEnv(), CLINK_KEY: key, CURL_HOME: work };
    // The backup example uses it; a missing tool fails the run with the fix rather than a bare "command not found".
    if (!Bun.which("sqlite3")) throw new Error("the backup example needs the sqlite3 command-line tool: apt-get install sqlite3");
  });

  afterAll(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const runnable = blocks.filter((b) => b.notRun === undefined);
  for (const [i, block] of runnable.entries()) {
    test(`${block.file}:${block.line} (${block.lang})`, async () => {
      const code = block.code.replaceAll(DOC_ADDRESS, `127.0.0.1:${server.port}`);
      let ran: Exited;
      if (block.lang === "sh") {
        ran = await runShell(code, work, env);
      } else {
        const file = join(work, `example-${i}.ts`);
        writeFileSync(file, code);
        ran = await runToExit([file], { cwd: work, env, timeoutMs: BLOCK_TIMEOUT_MS });
      }
      const shown = `exit ${ran.code}\n--- stdout ---\n${ran.stdout}\n--- stderr ---\n${ran.stderr}`;
      expect(ran.code === 0 ? "" : shown).toBe("");
      for (const [, text] of code.matchAll(PRINTS)) expect(ran.stdout).toContain(text.trim());
    }, BLOCK_TIMEOUT_MS * 2);
  }
});
