/**
 * Issue #21, 413 everywhere, in process: a body over its limit (1 MiB for REST, MCP and the dashboard's forms,
 * 16 KiB for the password form) answers 413 problem+json payload_too_large whether it declares a Content-Length
 * or streams without one, and the stream is read no further than the limit (Bun.serve no longer cuts bodies off
 * itself, so a reader that read on would hold whatever a client sends). Over real sockets: test/e2e/body-limit.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { csrfOf, formBody, Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, passwordOf, problemOf, type InProcessControlPlane } from "../helpers/in-process.ts";
import { startRedirector, type RedirectorHarness } from "../unit/redirector-harness.ts";

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK = 64 * KiB;

/** A body of `size` bytes of `fill` sent in 64 KiB chunks (no Content-Length); `pulled` counts what was read. */
function streamed(size: number, fill = "a") {
  const chunk = new TextEncoder().encode(fill.repeat(CHUNK));
  const counter = { pulled: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (counter.pulled >= size) return c.close();
      const n = Math.min(CHUNK, size - counter.pulled);
      counter.pulled += n;
      c.enqueue(chunk.subarray(0, n));
    },
  });
  return { body, counter };
}

let h: RedirectorHarness;
let cp: InProcessControlPlane;
let key: string;
let passwordSlug: string;
let session: Visitor;

beforeAll(async () => {
  h = await startRedirector();
  cp = h.cp;
  key = h.key;
  passwordSlug = await h.createLink({ url: "https://example.com/hidden", password: "open sesame" });
  const email = "forms@example.com";
  await cp.account(email);
  session = new Visitor(BASE_URL, (request) => cp.handle(request));
  expect((await session.submit("/dashboard/signin", "/dashboard/signin", { email, password: passwordOf(email) })).status).toBe(303);
});
afterAll(() => h?.close());

/** Each place that reads a body: its limit, and a request carrying `body` (with any headers it needs). */
const READERS: { name: string; limit: number; send(body: BodyInit, headers: Record<string, string>): Promise<Response> }[] = [
  {
    name: "REST create",
    limit: MiB,
    send: (body, headers) => cp.handle(new Request(`${BASE_URL}/api/v1/links`, { method: "POST", body, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers } })),
  },
  {
    name: "MCP",
    limit: MiB,
    send: (body, headers) => cp.handle(new Request(`${BASE_URL}/mcp`, {
      method: "POST", body, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    })),
  },
  {
    name: "dashboard sign-in form",
    limit: MiB,
    send: (body, headers) => cp.handle(new Request(`${BASE_URL}/dashboard/signin`, {
      method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE_URL, cookie: "clink_csrf=t", ...headers },
    })),
  },
  {
    name: "dashboard link form (signed in)",
    limit: MiB,
    send: async (body, headers) => {
      const cookie = [...session.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
      return cp.handle(new Request(`${BASE_URL}/dashboard/links`, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE_URL, cookie, ...headers } }));
    },
  },
  {
    name: "password form",
    limit: 16 * KiB,
    send: async (body, headers) => h.fetch(`/${passwordSlug}`, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, ip: `203.0.113.${++visitorSeq}` }),
  },
];
let visitorSeq = 0;

for (const reader of READERS) {
  describe(reader.name, () => {
    test("a declared Content-Length over the limit → 413 payload_too_large, the body left unread", async () => {
      const { body, counter } = streamed(reader.limit + 1);
      await problemOf(await reader.send(body, { "content-length": String(reader.limit + 1) }), 413, "payload_too_large");
      expect(counter.pulled).toBeLessThanOrEqual(CHUNK * 2); // a stream may pull ahead by a chunk or so
    });
    test("a streamed body one byte over the limit → 413 payload_too_large", async () => {
      await problemOf(await reader.send(streamed(reader.limit + 1).body, {}), 413, "payload_too_large");
    });
    test("a streamed body of 64 MiB is read no further than the limit", async () => {
      const { body, counter } = streamed(64 * MiB);
      await problemOf(await reader.send(body, {}), 413, "payload_too_large");
      expect(counter.pulled).toBeLessThanOrEqual(reader.limit + CHUNK * 2);
    });
  });
}

/** `text` as a stream of 64 KiB chunks, with no Content-Length. */
function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.subarray(at, (at += CHUNK)));
    },
  });
}

describe("bodies at the limit are read", () => {
  test("REST: a JSON body of exactly 1 MiB (padded with spaces) creates the link, streamed or not", async () => {
    const padded = (slug: string) => {
      const json = `{"url":"https://example.com/padded","slug":"${slug}"}`;
      return json.slice(0, -1) + " ".repeat(MiB - json.length) + "}";
    };
    expect(padded("padded-1").length).toBe(MiB);
    expect((await READERS[0].send(padded("padded-1"), {})).status).toBe(201);
    expect((await READERS[0].send(streamOf(padded("padded-2")), {})).status).toBe(201);
  });
  test("the password form: the right password in a form of exactly 16 KiB, streamed, unlocks", async () => {
    const form = formBody({ password: "open sesame", pad: "" }).toString();
    const res = await READERS[4].send(streamOf(form + "x".repeat(16 * KiB - form.length)), {});
    expect([res.status, res.headers.get("location")]).toEqual([302, "https://example.com/hidden"]);
  });
  test("the dashboard: a form within the limit is read, its CSRF token checked, the link saved", async () => {
    const page = await session.get("/dashboard/links/new");
    const res = await READERS[3].send(streamOf(formBody({ _csrf: csrfOf(page.html), url: "https://example.com/f", slug: "form-made" }).toString()), {});
    expect([res.status, res.headers.get("location")]).toEqual([303, "/dashboard/links/form-made/stats?flash=created"]);
    const forged = await READERS[3].send(formBody({ _csrf: "forged", url: "https://example.com/f", slug: "form-forged" }).toString(), {});
    expect(forged.status).toBe(403);
  });
});
