/**
 * maxHits across a crash of the embedded server (design §8 "a limit is never exceeded"): the clicks a SIGKILL
 * loses (documented) must not give their hits back. Hits are reserved in SQLite in blocks before they are served,
 * so a restart after SIGKILL starts counting above every hit served: never over the limit, at most one block
 * (hitBlock) under it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hitBlock } from "../../redirector/hit-policy.ts";
import { api, createKey, startServer, type ApiClient, type TestServer } from "../helpers/server.ts";

const HUMAN = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
const LIMIT = 3_000;

let server: TestServer;
let owner: ApiClient;

beforeAll(async () => {
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = api(server, await createKey(server, "crash@example.com"));
});
afterAll(() => server?.stop());

/** `n` GETs at once; how many were redirected and how many refused as gone. */
async function burst(slug: string, n: number): Promise<{ served: number; gone: number }> {
  const statuses = await Promise.all(Array.from({ length: n }, () => get(slug)));
  return { served: statuses.filter((s) => s === 302).length, gone: statuses.filter((s) => s === 410).length };
}

async function get(slug: string): Promise<number> {
  const res = await fetch(`${server.url}/${slug}`, { redirect: "manual", headers: { "user-agent": HUMAN }, signal: AbortSignal.timeout(30_000) });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Keeps 64 requests in flight until `stopWhen` holds for the tally, then SIGKILLs the server at once, with
 * requests still arriving (so the clicks of its last moments are buffered, not written), and restarts it on the
 * same data. Returns the redirects received before the kill.
 */
async function loadThenCrash(slug: string, stopWhen: (t: { served: number; gone: number }) => boolean): Promise<number> {
  const tally = { served: 0, gone: 0 };
  let killed: Promise<number> | null = null;
  const worker = async () => {
    while (killed === null) {
      const status = await get(slug).catch(() => 0); // cut by the kill
      if (status === 302) tally.served++;
      if (status === 410) tally.gone++;
      if (killed === null && stopWhen(tally)) killed = server.kill();
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  expect(await killed!).toBe(137);
  await server.restart();
  return tally.served;
}

describe("maxHits across SIGKILL (embedded)", () => {
  test(`killed at the first 410 of maxHits ${LIMIT}: after the restart no redirect is served`, async () => {
    expect((await owner.post("/api/v1/links", { url: "https://example.com/crash", slug: "crash", maxHits: LIMIT })).status).toBe(201);
    // Redirects granted but cut by the kill are not received: the tally may be a little under the limit.
    const served = await loadThenCrash("crash", (t) => t.gone > 0);
    expect(served).toBeLessThanOrEqual(LIMIT);
    expect(await burst("crash", 1_000)).toEqual({ served: 0, gone: 1_000 });
  });

  test(`killed part way: the restart resumes at most one block (${hitBlock(LIMIT)}) short of the limit, never over it`, async () => {
    await owner.post("/api/v1/links", { url: "https://example.com/halfway", slug: "halfway", maxHits: LIMIT });
    const before = await loadThenCrash("halfway", (t) => t.served >= 1_200);
    expect(before).toBeLessThan(LIMIT);
    const after = await burst("halfway", LIMIT);
    const servedOverall = before + after.served;
    expect(servedOverall).toBeLessThanOrEqual(LIMIT);
    expect(servedOverall).toBeGreaterThanOrEqual(LIMIT - hitBlock(LIMIT));
    // Stats count what was recorded: the redirects served after the restart all are, those lost with the crash not.
    const link = (await owner.get("/api/v1/links/halfway")).body;
    expect(link.hits).toBeLessThanOrEqual(LIMIT);
  });
});
