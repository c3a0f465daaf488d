/**
 * An MCP client speaking to a child process over its stdin and stdout, the way Claude Desktop or Cursor speak to a
 * local server (here mcp-remote, the bridge to a remote one): one JSON-RPC message per line. Every wait is bounded,
 * and a failure carries the tail of the child's stderr, where the bridge says what went wrong.
 *
 *   const peer = spawnStdio(["npx", "-y", "mcp-remote", `${url}/mcp`], { env });
 *   await initialize(peer);
 *   const { tools } = await peer.request("tools/list");
 *   await peer.close();
 */
import type { Subprocess } from "bun";
import { REPO_ROOT } from "./server.ts";

const REQUEST_TIMEOUT_MS = 30_000;
const CLOSE_GRACE_MS = 5_000;
export const PROTOCOL_VERSION = "2025-06-18";

export interface StdioPeer {
  /** Sends a request and resolves to its `result`; rejects on a JSON-RPC error, an exit or the timeout. */
  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  notify(method: string, params?: Record<string, unknown>): void;
  /** Everything the child wrote to stderr so far. */
  readonly stderr: string;
  /** Closes stdin (how a client ends a stdio server), SIGTERM after 1 s, SIGKILL after 5 s; resolves to the exit code. */
  close(): Promise<number>;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** The last lines of a child's stderr, for a failure message. */
export function tail(text: string, lines = 40): string {
  return text.trim().split("\n").slice(-lines).join("\n") || "(empty)";
}

/** Hands a child's output to `append` as text, as it arrives, until the stream ends. */
function readText(stream: ReadableStream<Uint8Array>, append: (text: string) => void): void {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    for (let r = await reader.read(); !r.done; r = await reader.read()) append(decoder.decode(r.value, { stream: true }));
  })().catch(() => {
    // The stream errors only when the child is gone; what was read is kept, and the exit is reported.
  });
}

export function spawnStdio(cmd: string[], opts: { env: Record<string, string>; cwd?: string }): StdioPeer {
  const proc: Subprocess<"pipe", "pipe", "pipe"> = Bun.spawn(cmd, { cwd: opts.cwd ?? REPO_ROOT, env: opts.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const pending = new Map<number, Pending>();
  let stderr = "";
  let nextId = 1;
  let exited: string | null = null;

  const failAll = (why: string) => {
    for (const p of pending.values()) p.reject(new Error(`${why}\n--- stderr ---\n${tail(stderr)}`));
    pending.clear();
  };
  readText(proc.stderr, (chunk) => (stderr += chunk));
  let buffered = "";
  readText(proc.stdout, (chunk) => {
    buffered += chunk;
    for (let nl; (nl = buffered.indexOf("\n")) >= 0; ) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line) continue;
      let message: { id?: number; result?: unknown; error?: { code: number; message: string } };
      try {
        message = JSON.parse(line);
      } catch {
        failAll(`the child wrote a line to stdout that is not JSON-RPC: ${line.slice(0, 200)}`);
        continue;
      }
      const waiting = message.id === undefined ? undefined : pending.get(message.id);
      if (!waiting) continue; // a notification or a request from the server: none is needed here
      pending.delete(message.id!);
      if (message.error) waiting.reject(new Error(`JSON-RPC error ${message.error.code}: ${message.error.message}`));
      else waiting.resolve(message.result);
    }
  });
  void proc.exited.then((code) => {
    exited = `the child exited with code ${code}`;
    failAll(exited);
  });

  const send = (message: Record<string, unknown>) => {
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    void proc.stdin.flush();
  };

  return {
    request(method, params, timeoutMs = REQUEST_TIMEOUT_MS) {
      if (exited) return Promise.reject(new Error(`${method}: ${exited}\n--- stderr ---\n${tail(stderr)}`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${method}: no answer within ${timeoutMs} ms\n--- stderr ---\n${tail(stderr)}`));
        }, timeoutMs);
        const settle = <T>(fn: (v: T) => void) => (v: T) => (clearTimeout(timer), fn(v));
        pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
        send({ id, method, ...(params ? { params } : {}) });
      });
    },
    notify(method, params) {
      send({ method, ...(params ? { params } : {}) });
    },
    get stderr() {
      return stderr;
    },
    async close() {
      if (!exited) void proc.stdin.end();
      const term = setTimeout(() => proc.kill("SIGTERM"), CLOSE_GRACE_MS / 5);
      const kill = setTimeout(() => proc.kill("SIGKILL"), CLOSE_GRACE_MS);
      try {
        return await proc.exited;
      } finally {
        clearTimeout(term);
        clearTimeout(kill);
      }
    },
  };
}

/** The handshake a client makes first; resolves to the server's initialize result. */
export async function initialize(peer: StdioPeer, timeoutMs?: number): Promise<any> {
  const result = await peer.request(
    "initialize",
    { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "clink-e2e", version: "1.0.0" } },
    timeoutMs,
  );
  peer.notify("notifications/initialized");
  return result;
}
