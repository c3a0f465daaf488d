// Turns a `bun test` run into CI's closing line `N passed, M failed`.
//
// usage: node .ci/junit-summary.mjs <junit.xml> <console.log> <test exit code>
//
// Plain Node (no Bun, no TypeScript) so the line is printed even when the Bun install is what broke.
// Sources, both read because neither is complete on its own:
// - the JUnit report: one <testcase> per test, with <failure>, <error> or <skipped> inside;
// - the console summary (" 3 pass", " 1 fail", " 1 error", " 2 skip", " 1 todo"): Bun counts an error thrown
//   while loading a file or between tests there, but writes no <testcase> for it.
// Skipped and todo tests count as failed: CI must run every test. A non-zero exit code of the test command with
// nothing counted as failed counts as one failure, so the closing line never contradicts the exit code.
// Exit code: 0 only when at least one test passed and none failed.
import { existsSync, readFileSync } from "node:fs";

const [junitPath, logPath, testExitArg] = process.argv.slice(2);
const testExit = Number(testExitArg ?? 0);

function decodeEntities(s) {
  return s
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

function attr(tag, name) {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? decodeEntities(m[1]) : "";
}

/** Counts per outcome from the <testcase> elements, and the names of the failing ones. */
function readJunit(path) {
  if (!path || !existsSync(path)) return null;
  const xml = readFileSync(path, "utf8");
  const counts = { tests: 0, passed: 0, failures: 0, errors: 0, skipped: 0, failedNames: [], skippedNames: [] };
  const testcase = /<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(testcase)) {
    const [, attrs, inner = ""] = m;
    const name = [attr(attrs, "file"), attr(attrs, "classname"), attr(attrs, "name")].filter(Boolean).join(" > ");
    counts.tests++;
    if (/<failure\b/.test(inner)) {
      counts.failures++;
      counts.failedNames.push(name);
    } else if (/<error\b/.test(inner)) {
      counts.errors++;
      counts.failedNames.push(name);
    } else if (/<skipped\b/.test(inner)) {
      counts.skipped++;
      counts.skippedNames.push(name);
    } else {
      counts.passed++;
    }
  }
  return counts;
}

/** The last summary block Bun printed on the console, or null if there is none. */
function readConsole(path) {
  if (!path || !existsSync(path)) return null;
  const text = readFileSync(path, "utf8").replace(/\x1b\[[0-9;]*m/g, "");
  const last = (word) => {
    const all = [...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, "gm"))];
    return all.length ? Number(all[all.length - 1][1]) : 0;
  };
  const ran = [...text.matchAll(/^Ran (\d+) tests? across/gm)];
  if (!ran.length && !/^\s*\d+ (pass|fail)\s*$/m.test(text)) return null;
  return { pass: last("pass"), fail: last("fail"), error: last("errors?"), skip: last("skip"), todo: last("todo") };
}

const junit = readJunit(junitPath);
const cons = readConsole(logPath);

let passed = 0;
let failed = 0;
let skipped = 0;
const notes = [];

if (junit) {
  passed = junit.passed;
  failed = junit.failures + junit.errors;
  skipped = junit.skipped;
} else {
  notes.push(`no JUnit report at ${junitPath}; counting from the console summary`);
}
if (cons) {
  if (!junit) passed = cons.pass;
  // The console also counts errors outside any test (a file that fails to load), which JUnit leaves out.
  const consoleFailed = Math.max(cons.fail, cons.error);
  if (consoleFailed > failed) {
    notes.push(`${consoleFailed - failed} failure(s) outside any test case (see "Unhandled error" in the output above)`);
    failed = consoleFailed;
  }
  skipped = Math.max(skipped, cons.skip + cons.todo);
}
if (skipped > 0) {
  notes.push(`${skipped} skipped/todo test(s) counted as failed: CI runs every test`);
  failed += skipped;
}
if (testExit !== 0 && failed === 0) {
  notes.push(`the test command exited with code ${testExit} although no test failed; counted as one failure`);
  failed = 1;
}
if (passed + failed === 0) notes.push("no test ran");

if (junit?.failedNames.length) {
  console.log("failed tests:");
  for (const n of junit.failedNames) console.log(`  - ${n}`);
}
if (junit?.skippedNames.length) {
  console.log("skipped/todo tests:");
  for (const n of junit.skippedNames) console.log(`  - ${n}`);
}
for (const n of notes) console.log(`note: ${n}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
