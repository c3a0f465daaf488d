/**
 * Issue #21, 413 everywhere, over real sockets: a body over the limit, with a Content-Length or sent chunked, and
 * over the app's limit (1 MiB; the password form's 16 KiB) or far over anything (20 MiB), answers 413
 * problem+json payload_too_large on REST, MCP, the dashboard and the password form, in the embedded server and
 * the scale-mode redirector; and the server logs no 500 and no error for any of them. Bun.serve's own limit used
 * to answer a bare 413 (no body) before the app saw the request, and a chunked body over it was logged as a 500.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { requirePostgres, requireRedis, startDeployment } from "../helpers/scale.ts";
import { api, createKey, startServer, type TestServer } from "../helpers/server.ts";

const MiB = 1024 * 1024;
const ORIGIN_CSRF = "body-limit-csrf";

interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * Sends `size` body bytes with a Content-Length, or chunked, over a plain socket, and stops sending once an
 * answer arrives (a server may answer a body it will not read before the client has sent it all).
 */
function rawPost(port: number, path: string, headers: Record<string, string>, size: number, chunked: boolean): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    let answered = false;
    const timer = setTimeout(() => finish(new Error(`no complete answer within 20 s; got ${Buffer.concat(received).toString().slice(0, 300)}`)), 20_000);
    function parsed(): RawResponse | null {
      const text = Buffer.concat(received).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return null;
      const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
      const h = new Map(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      const length = Number(h.get("content-length") ?? "0");
      const body = text.slice(end + 4);
      if (body.length < length) return null;
      return { status: Number(statusLine.split(" ")[1]), headers: h, body: body.slice(0, length) };
    }
    function finish(err: Error | null) {
      clearTimeout(timer);
      socket.destroy();
      const res = parsed();
      if (res) resolve(res);
      else reject(err ?? new Error(`connection closed before a complete answer: ${Buffer.concat(received).toString().slice(0, 300)}`));
    }
    socket.on("data", (d: Buffer) => {
      received.push(d);
      answered = true;
      if (parsed()) finish(null);
    });
    socket.on("error", () => {}); // EPIPE/ECONNRESET once the server stops reading: "close" follows, the answer decides
    socket.on("close", () => finish(null));
    socket.on("connect", async () => {
      const head = [`POST ${path} HTTP/1.1`, `host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      head.push(chunked ? "transfer-encoding: chunked" : `content-length: ${size}`);
      socket.write(`${head.join("\r\n")}\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, "a");
      for (let sent = 0; sent < size && !answered && !socket.destroyed; sent += piece.length) {
        const part = piece.subarray(0, Math.min(piece.length, size - sent));
        const frame = chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")]) : part;
        if (!socket.write(frame)) await new Promise((r) => socket.once("drain", r).once("close", r));
      }
      if (chunked && !answered && !socket.destroyed) socket.write("0\r\n\r\n");
    });
  });
}

function expectPayloadTooLarge(res: RawResponse) {
  expect([res.status, res.headers.get("content-type")]).toEqual([413, "application/problem+json"]);
  expect(JSON.parse(res.body)).toMatchObject({ status: 413, code: "payload_too_large" });
}

/** No request logged as a 500 and nothing logged at error level (stdout: JSON lines; stderr: anything). */
function expectNoErrorLogged(server: TestServer) {
  const lines = server.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  expect(lines.filter((l) => l.status >= 500 || l.level === "error" || l.level === "fatal")).toEqual([]);
  expect(server.stderr).toBe("");
}

describe("embedded server", () => {
  let server: TestServer;
  let key: string;
  let passwordSlug: string;

  beforeAll(async () => {
    server = await startServer({ env: { LOG_LEVEL: "info" } });
    key = await createKey(server, "limits@example.com");
    const created = await api(server, key).post("/api/v1/links", { url: "https://example.com/", password: "open sesame" });
    passwordSlug = created.body.slug;
  });
  afterAll(() => server?.stop());

  const routes = () => [
    ["REST", "/api/v1/links", { authorization: `Bearer ${key}`, "content-type": "application/json" }, MiB],
    ["MCP", "/mcp", { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, MiB],
    ["dashboard", "/dashboard/signin", { "content-type": "application/x-www-form-urlencoded", origin: server.url, cookie: `clink_csrf=${ORIGIN_CSRF}` }, MiB],
    ["password form", `/${passwordSlug}`, { "content-type": "application/x-www-form-urlencoded" }, 16 * 1024],
  ] as const;

  for (const chunked of [false, true]) {
    const how = chunked ? "chunked" : "with Content-Length";
    test(`just over each limit, ${how} → 413 problem+json`, async () => {
      for (const [, path, headers, limit] of routes()) expectPayloadTooLarge(await rawPost(server.port, path, headers, limit + 64 * 1024, chunked));
    });
    test(`20 MiB (over Bun's own limit before), ${how} → 413 problem+json`, async () => {
      for (const [, path, headers] of routes()) expectPayloadTooLarge(await rawPost(server.port, path, headers, 20 * MiB, chunked));
    });
  }

  test("a Content-Length far over anything is refused before a byte is read", async () => {
    expectPayloadTooLarge(await rawPost(server.port, "/api/v1/links", { authorization: `Bearer ${key}`, "content-type": "application/json" }, 10 * 1024 * MiB, false));
  });

  test("bodies within the limits still work, and the server logged no 500 and no error", async () => {
    const padded = `{"url": "https://example.com/ok"${" ".repeat(MiB - 40)}}`;
    const res = await fetch(`${server.url}/api/v1/links`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: padded });
    expect(res.status).toBe(201);
    expectNoErrorLogged(server);
  });
});

test("scale mode: the redirector's password form over 16 KiB, with Content-Length or chunked, up to 20 MiB → 413", async () => {
  await requirePostgres();
  await requireRedis();
  const d = await startDeployment({ redirectors: 1, env: { LOG_LEVEL: "info" } });
  try {
    const key = await d.createKey("limits@example.com");
    const slug = (await api(d.control, key).post("/api/v1/links", { url: "https://example.com/", password: "open sesame" })).body.slug;
    const form = { "content-type": "application/x-www-form-urlencoded" };
    for (const chunked of [false, true]) {
      for (const size of [80 * 1024, 20 * MiB]) expectPayloadTooLarge(await rawPost(d.redirectors[0].port, `/${slug}`, form, size, chunked));
      expectPayloadTooLarge(await rawPost(d.control.port, "/api/v1/links", { authorization: `Bearer ${key}`, "content-type": "application/json" }, 20 * MiB, chunked));
    }
    expectNoErrorLogged(d.redirectors[0]);
    expectNoErrorLogged(d.control);
  } finally {
    await d.stop();
  }
});
