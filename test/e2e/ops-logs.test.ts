/**
 * Structured logs of the embedded server, read from its stdout: one JSON line per control-plane request with
 * a request id (the caller's X-Request-Id when it is a plain token, echoed in the response), none per
 * redirect, LOG_LEVEL respected, and no secret (API key, password, webhook secret, session cookie) anywhere
 * in the output.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, createKey, startServer, type TestServer } from "../helpers/server.ts";

interface LogLine {
  level: string;
  time: string;
  msg: string;
  reqId?: string;
  method?: string;
  route?: string;
  path?: string;
  status?: number;
  durationMs?: number;
  [k: string]: unknown;
}

/** The JSON lines of the output so far (the human start-up banner is plain text and skipped). */
function jsonLines(out: string): LogLine[] {
  return out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as LogLine);
}

async function waitForLine(server: TestServer, match: (l: LogLine) => boolean, ms = 3_000): Promise<LogLine> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = jsonLines(server.stdout).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no matching log line within ${ms} ms; stdout:\n${server.stdout.slice(-2000)}`);
    await Bun.sleep(20);
  }
}

describe("structured logs at LOG_LEVEL=info", () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startServer({ env: { LOG_LEVEL: "info", WEBHOOK_ALLOW_PRIVATE: "true" } });
    key = await createKey(server, "logs@example.com");
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("every stdout line after the start-up banner is a JSON object with level, time and msg", async () => {
    await api(server, key).get("/api/v1/links");
    await waitForLine(server, (l) => l.msg === "request");
    const lines = server.stdout.split("\n").filter(Boolean);
    expect(lines[0]).toContain("listening on");
    expect(lines[1]).toContain("npm run create-key");
    for (const line of lines.slice(2)) {
      const parsed = JSON.parse(line) as LogLine;
      expect(typeof parsed.level).toBe("string");
      expect(Number.isNaN(Date.parse(parsed.time))).toBe(false);
      expect(typeof parsed.msg).toBe("string");
    }
  });

  test("a caller's X-Request-Id is echoed and logged with method, route, path, status and duration", async () => {
    const id = "trace-7f3a.b9:req/1";
    const res = await api(server, key).get("/api/v1/links/no-such-link?x=1", { headers: { "x-request-id": id } });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toBe(id);
    const line = await waitForLine(server, (l) => l.reqId === id);
    expect(line).toMatchObject({ level: "info", msg: "request", method: "GET", route: "/api/v1/links/:param", path: "/api/v1/links/no-such-link", status: 404 });
    expect(typeof line.durationMs).toBe("number");
    expect(jsonLines(server.stdout).filter((l) => l.reqId === id)).toHaveLength(1); // exactly one line per request
  });

  test("without a usable X-Request-Id the server makes one up, echoes and logs it", async () => {
    const none = await api(server, key).get("/api/v1/links");
    const made = none.headers.get("x-request-id")!;
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    await waitForLine(server, (l) => l.reqId === made);

    for (const unusable of ["has spaces in it", "x".repeat(200), "quote\"brace{"]) {
      const res = await api(server, key).get("/api/v1/links", { headers: { "x-request-id": unusable } });
      const replaced = res.headers.get("x-request-id")!;
      expect(replaced).not.toBe(unusable);
      expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
      await waitForLine(server, (l) => l.reqId === replaced);
    }
    expect(server.stdout).not.toContain("has spaces in it");
  });

  test("redirects write no log line", async () => {
    expect((await api(server, key).post("/api/v1/links", { url: "https://example.com/quiet", slug: "quiet" })).status).toBe(201);
    await waitForLine(server, (l) => l.path === "/api/v1/links" && l.method === "POST");
    const before = jsonLines(server.stdout).length;
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}/quiet`, { redirect: "manual" });
      expect(res.status).toBe(302);
    }
    expect((await fetch(`${server.url}/not-a-link`, { redirect: "manual" })).status).toBe(404);
    await Bun.sleep(300); // clicks are written meanwhile
    const after = jsonLines(server.stdout);
    expect(after.length).toBe(before);
    expect(after.some((l) => l.path === "/quiet" || l.msg === "redirect")).toBe(false);
  });

  test("no key, password, webhook secret or session cookie ever reaches the output", async () => {
    const client = api(server, key);
    const linkPassword = "Link-Pa55word-never-logged";
    const created = await client.post("/api/v1/links", {
      url: "https://example.com/private",
      slug: "private-one",
      password: linkPassword,
      webhookUrl: "http://127.0.0.1:9/clink", // nobody listens: the delivery fails, quietly
    });
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    const webhookSecret: string = created.body.webhookSecret;
    expect(webhookSecret).toStartWith("whsec_");
    // Wrong and right password through the form.
    for (const password of ["wrong-guess-123", linkPassword]) {
      await fetch(`${server.url}/private-one`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ password }),
      });
    }
    // A bad key and a malformed Authorization header are logged as requests, never as values.
    const badKey = "ck_NotARealKeyButLooksLikeOne0123456789abcd";
    expect((await api(server, badKey).get("/api/v1/links")).status).toBe(401);
    // A dashboard sign-up: the account password travels in a form body, the session in a cookie.
    const accountPassword = "Dashboard-Pa55word-never-logged";
    const form = await fetch(`${server.url}/dashboard/signup`);
    const cookie = form.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
    const signup = await fetch(`${server.url}/dashboard/signup`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams({ _csrf: csrf, email: "dash-logs@example.com", password: accountPassword }),
    });
    expect(signup.status).toBe(303);
    const session = signup.headers.getSetCookie().map((c) => c.split(";")[0]!.split("=")[1]!).filter((v) => v.length > 16);
    expect(session.length).toBeGreaterThan(0);

    await waitForLine(server, (l) => l.path === "/dashboard/signup" && l.method === "POST");
    const output = server.stdout + server.stderr;
    for (const secret of [key, key.slice(3), badKey, linkPassword, "wrong-guess-123", webhookSecret, accountPassword, ...session]) {
      expect({ leaked: output.includes(secret), secret: secret.slice(0, 6) }).toEqual({ leaked: false, secret: secret.slice(0, 6) });
    }
  });
});

describe("LOG_LEVEL=warn", () => {
  test("request lines are info: none are written, the request id is still echoed", async () => {
    const server = await startServer({ env: { LOG_LEVEL: "warn" } });
    try {
      const key = await createKey(server, "quiet@example.com");
      const res = await api(server, key).get("/api/v1/links", { headers: { "x-request-id": "quiet-1" } });
      expect(res.headers.get("x-request-id")).toBe("quiet-1");
      await Bun.sleep(100);
      expect(jsonLines(server.stdout).filter((l) => l.msg === "request")).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
