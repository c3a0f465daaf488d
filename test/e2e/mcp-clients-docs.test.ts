/**
 * The documents' "Connect an assistant" examples (README.md, docs/mcp.md), run against a real embedded server with
 * the real clients: each JSON configuration is parsed as its client would read it (`mcpServers` or VS Code's
 * `servers` with its `inputs`), and each `claude mcp add` line is read for its address and headers. Then
 *
 * - a server started as a command (Claude Desktop's mcp-remote entries) is started with exactly that command line
 *   and environment, signs in with OAuth when it has no key (the browser step in Chromium), and lists and calls
 *   the tools over its stdio;
 * - a server given as an address is reached with the MCP Inspector's CLI: with the example's headers when it has
 *   some, otherwise given only the address, the Inspector signs in with OAuth as Cursor, VS Code or Claude Code
 *   would, and lists the tools.
 *
 * The placeholders are filled as a person would: `localhost:3000` is this server, `ck_...` and VS Code's
 * `${input:…}` prompt are a real key. (The ```sh blocks, the Inspector command among them, run in
 * docs-commands.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  authorizationUrlOf,
  authorizeInBrowser,
  clientSandbox,
  inspectorCli,
  inspectorSignedIn,
  newAccount,
  type ClientSandbox,
  type Person,
} from "../helpers/mcp-clients.ts";
import { initialize, PROTOCOL_VERSION, spawnStdio, type StdioPeer } from "../helpers/mcp-stdio.ts";
import { REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";

const SECTION = "## Connect an assistant";
const DOCUMENTS = ["README.md", "docs/mcp.md"];
const DOC_ADDRESS = "localhost:3000";
const KEY_PLACEHOLDER = "ck_...";
const TOOL_COUNT = 10;
const FLOW_MS = 120_000;

/** A client given an address (and headers, for a key). */
interface HttpExample {
  where: string;
  url: string;
  headers: Record<string, string>;
}
/** A client that starts a local command and speaks to it over stdio. */
interface CommandExample {
  where: string;
  command: string[];
  env: Record<string, string>;
}

/** A document's "Connect an assistant" section, and the line of the document it starts on. */
function sectionOf(file: string): { text: string; firstLine: number } {
  const document = readFileSync(join(REPO_ROOT, file), "utf8");
  const start = document.indexOf(`${SECTION}\n`);
  if (start < 0) throw new Error(`${file} has no "${SECTION}" section`);
  const end = document.indexOf("\n## ", start + SECTION.length);
  return { text: document.slice(start, end < 0 ? undefined : end), firstLine: document.slice(0, start).split("\n").length };
}

/** The fenced blocks of one language in a document's section, each with where it stands (file:line). */
function blocks(file: string, lang: string): { where: string; code: string }[] {
  const { text, firstLine } = sectionOf(file);
  return [...text.matchAll(new RegExp(`^ *\`\`\`${lang}\\n([\\s\\S]*?)^ *\`\`\``, "gm"))].map((m) => ({
    where: `${file}:${firstLine + text.slice(0, m.index).split("\n").length - 1}`,
    code: m[1],
  }));
}

/** Splits a shell line into words: single and double quotes group, nothing is expanded. */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/** A header line `Name: value` (or `Name:value`) as a pair. */
function header(line: string): [string, string] {
  const colon = line.indexOf(":");
  return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
}

/**
 * Every example of the documents, placeholders filled: JSON configurations, as their clients read them, and the
 * `claude mcp add` lines.
 */
function examples(address: string, key: string): { http: HttpExample[]; commands: CommandExample[] } {
  const fill = (text: string) => text.replaceAll(DOC_ADDRESS, address).replaceAll(KEY_PLACEHOLDER, key);
  const http: HttpExample[] = [];
  const commands: CommandExample[] = [];
  for (const file of DOCUMENTS) {
    for (const { where, code } of blocks(file, "json")) {
      const config = JSON.parse(fill(code)) as {
        mcpServers?: Record<string, any>;
        servers?: Record<string, any>;
        inputs?: { type: string; id: string }[];
      };
      // VS Code asks the person for each promptString input and puts the answer where ${input:id} stands.
      const answer = (value: string) => value.replace(/\$\{input:([^}]+)\}/g, (m, id) => (config.inputs?.some((i) => i.id === id && i.type === "promptString") ? key : m));
      const entries = Object.values(config.mcpServers ?? config.servers ?? {});
      if (entries.length === 0) throw new Error(`${where}: no mcpServers or servers in the example`);
      for (const entry of entries) {
        if (entry.command) commands.push({ where, command: [entry.command, ...(entry.args ?? [])], env: entry.env ?? {} });
        else {
          expect([where, entry.type ?? "http"]).toEqual([where, "http"]);
          http.push({ where, url: entry.url, headers: Object.fromEntries(Object.entries(entry.headers ?? {}).map(([k, v]) => [k, answer(v as string)])) });
        }
      }
    }
    for (const { where, code } of blocks(file, "sh")) {
      for (const line of fill(code).split("\n").filter((l) => l.startsWith("claude mcp add "))) {
        const words = shellWords(line).slice(3);
        const headers: Record<string, string> = {};
        const positional: string[] = [];
        for (let i = 0; i < words.length; i++) {
          if (words[i] === "--transport") expect([where, words[++i]]).toEqual([where, "http"]);
          else if (words[i] === "--header") Object.assign(headers, Object.fromEntries([header(words[++i])]));
          else positional.push(words[i]);
        }
        http.push({ where: `${where} (claude)`, url: positional[1], headers });
      }
    }
  }
  return { http, commands };
}

let server: TestServer;
let person: Person;
let found: ReturnType<typeof examples>;
const sandboxes: ClientSandbox[] = [];
const peers: StdioPeer[] = [];
const sandbox = () => (sandboxes.push(clientSandbox()), sandboxes.at(-1)!);

beforeAll(async () => {
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "10000" } });
  person = await newAccount(server, "docs-clients@example.com");
  found = examples(`127.0.0.1:${server.port}`, person.key);
});
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
  for (const s of sandboxes) s.remove();
  await server?.stop();
});

test("the documents show each client with OAuth and with a key, all at this server's /mcp", () => {
  const all = [...found.http.map((e) => e.url), ...found.commands.map((c) => c.command.find((w) => w.startsWith("http")))];
  expect(new Set(all)).toEqual(new Set([`${server.url}/mcp`]));
  expect(found.http.some((e) => Object.keys(e.headers).length === 0)).toBe(true);
  expect(found.http.some((e) => e.headers.Authorization === `Bearer ${person.key}`)).toBe(true);
  expect(found.commands.map((c) => c.command.includes("--header"))).toEqual([false, true]);
});

describe("examples given as an address, with the MCP Inspector", () => {
  /** Examples that ask the same of the server are run once: the same address and headers. */
  const distinct = () => [...Map.groupBy(found.http, (e) => JSON.stringify([e.url, e.headers])).values()];

  test("with a key in the headers: the ten tools", async () => {
    const keyed = distinct().filter((group) => Object.keys(group[0].headers).length > 0);
    expect(keyed.length).toBeGreaterThan(0);
    for (const [example, ...same] of keyed) {
      const headers = Object.entries(example.headers).flatMap(([k, v]) => ["--header", `${k}: ${v}`]);
      const listed = await inspectorCli([example.url, "--transport", "http", ...headers, "--method", "tools/list"], sandbox().env);
      expect([example.where, ...same.map((e) => e.where), listed.result.tools.length]).toEqual([example.where, ...same.map((e) => e.where), TOOL_COUNT]);
    }
  }, FLOW_MS);

  test("with just the address: the client signs in with OAuth in the browser, then lists the ten tools", async () => {
    const bare = distinct().filter((group) => Object.keys(group[0].headers).length === 0);
    expect(bare.length).toBe(1); // every OAuth example gives the same address alone
    const [example] = bare[0];
    const { answer, signIn } = await inspectorSignedIn(example.url, ["--method", "tools/list"], sandbox(), person);
    expect(signIn.consent).toContain(person.email);
    expect(answer.result.tools).toHaveLength(TOOL_COUNT);
  }, FLOW_MS);
});

describe("Claude Desktop's examples, started as the commands they are", () => {
  test("with a key (in --header, from the environment): mcp-remote initializes, lists the tools, creates and reads a link; a tool error is a result", async () => {
    const example = found.commands.find((c) => c.command.includes("--header"))!;
    const box = sandbox();
    const peer = spawnStdio(example.command, { env: { ...box.env, ...example.env } });
    peers.push(peer);
    expect(await initialize(peer)).toMatchObject({ protocolVersion: PROTOCOL_VERSION, serverInfo: { name: "clink" } });
    expect((await peer.request("tools/list")).tools).toHaveLength(TOOL_COUNT);
    const made = await peer.request("tools/call", { name: "create_link", arguments: { url: "https://example.com/docs-key", slug: "docs-desktop-key" } });
    expect(made.structuredContent).toMatchObject({ slug: "docs-desktop-key", target: "https://example.com/docs-key" });
    expect((await peer.request("tools/call", { name: "get_link", arguments: { slug: "docs-desktop-key" } })).structuredContent).toEqual(made.structuredContent);
    // A tool error reaches the assistant as a result it can read, not as a broken bridge.
    const missing = await peer.request("tools/call", { name: "get_link", arguments: { slug: "no-such-link" } });
    expect(missing.isError).toBe(true);
    expect(JSON.parse(missing.content[0].text)).toMatchObject({ status: 404, code: "not_found" });
  }, FLOW_MS);

  test("with OAuth: mcp-remote opens the browser, the person signs in and allows, then the tools work", async () => {
    const example = found.commands.find((c) => !c.command.includes("--header"))!;
    const box = sandbox();
    const peer = spawnStdio(example.command, { env: { ...box.env, ...example.env } });
    peers.push(peer);
    const initialized = initialize(peer, FLOW_MS / 2);
    const signIn = await authorizeInBrowser(await authorizationUrlOf(box, initialized), person);
    expect(signIn.done).toMatch(/success/i);
    await initialized;
    const made = await peer.request("tools/call", { name: "create_link", arguments: { url: "https://example.com/docs-oauth", slug: "docs-desktop-oauth" } });
    expect(made.structuredContent).toMatchObject({ slug: "docs-desktop-oauth" });
  }, FLOW_MS);
});
