/**
 * The embedded default settles clicks on its writer thread, not on the thread that answers redirects
 * (control/clicks/maintenance.ts, sqlite-writer-thread.ts). A real server starts on a database with a year and a half
 * of unsettled days, as after an upgrade: a redirect is answered while that first settle is still under way, the
 * settle commits day by day (its progress is seen between its first and last day), and the settled totals come to
 * the seeded clicks.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { newLinkRecord, type LinkRecord } from "../../shared/link.ts";
import type { StoredClick } from "../../shared/ports.ts";
import { api, createKey, makeTempDir, startServer, type TestServer } from "../helpers/server.ts";

const DAY = 86_400_000;
const DAYS = 300;
const LINKS = 20;
const SETTLE_DEADLINE_MS = 120_000;
const COUNTRIES = ["DE", "FR"];

const dataDir = makeTempDir("settle-thread");
const file = join(dataDir, "clink.sqlite");
const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const noDims = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims;

/** One click a day for `DAYS` days before `today` on every link, the country alternating by day. */
function backlog(links: LinkRecord[], today: number): StoredClick[] {
  return Array.from({ length: DAYS }, (_, i) => i + 1).flatMap((d) =>
    links.map((l) => ({
      batch: `seed-${d}-${l.id}`, linkId: l.id, ts: today - d * DAY + 3_600_000,
      dims: { ...noDims, country: COUNTRIES[d % 2]! }, bot: false, firstVisit: true, referrerUrl: null,
    })),
  );
}

/** Adds `LINKS - 1` links beside `first` (same account and domain) and their backlog, with nothing settled. */
async function seed(first: LinkRecord, today: number): Promise<void> {
  const store = new SqliteStore(file);
  try {
    const more = Array.from({ length: LINKS - 1 }, (_, i) =>
      newLinkRecord({ id: crypto.randomUUID(), accountId: first.accountId, domain: first.domain, slug: `seed${i}`, target: "https://example.com/", createdAt: 0 }),
    );
    await store.insertLinks(more);
    await store.recordClicks(backlog([first, ...more], today));
    expect(await store.settledBefore()).toBe(0);
  } finally {
    await store.close();
  }
}

async function linkOf(domain: string, slug: string): Promise<LinkRecord> {
  const store = new SqliteStore(file);
  try {
    return (await store.getLink(domain, slug))!;
  } finally {
    await store.close();
  }
}

test("a redirect is answered while the first settle of a long backlog runs; the days are settled one by one", async () => {
  const today = Math.floor(Date.now() / DAY) * DAY;
  const first = await startServer({ dataDir });
  servers.push(first);
  const key = await createKey(first, "settle@example.com");
  const created = await api(first, key).post("/api/v1/links", { url: "https://example.com/settle", slug: "settle" });
  expect(created.status).toBe(201);
  expect(await first.stop()).toBe(0);
  const link = await linkOf(new URL(first.url).host, "settle");
  await seed(link, today);

  const reader = new Database(file, { readonly: true });
  const settledBefore = () => reader.query<{ t: number }, []>("SELECT settled_before AS t FROM click_settle_state").get()!.t;
  try {
    // Same port: same BASE_URL, so the same link domain. The settle starts before the server listens.
    const server = await startServer({ dataDir, port: first.port });
    servers.push(server);
    const res = await fetch(`${server.url}/settle`, { redirect: "manual" });
    expect(res.status).toBe(302);
    // Answered first, settled after: a settle on the server thread would have finished before it listened.
    const seen = [settledBefore()];
    expect(seen[0]).toBeLessThan(today);
    const deadline = Date.now() + SETTLE_DEADLINE_MS;
    while (seen.at(-1)! < today && Date.now() < deadline) {
      await Bun.sleep(20);
      seen.push(settledBefore());
    }
    console.log(`settle of ${DAYS} days x ${LINKS} links: ${seen.length} looks, first after the redirect ${(today - seen[0]!) / DAY} days left`);
    expect(seen.at(-1)).toBe(today);
    // A transaction a day: the state was seen between the first day and today, never only 0 then today.
    expect(seen.some((t) => t > today - DAYS * DAY && t < today)).toBe(true);

    const byCountry = new Map<string, number>();
    const store = new SqliteStore(file);
    try {
      for await (const r of store.readSettled({ accountId: link.accountId }, "country", 0, today)) {
        byCountry.set(r.value ?? "unknown", (byCountry.get(r.value ?? "unknown") ?? 0) + r.clicks);
      }
    } finally {
      await store.close();
    }
    expect(Object.fromEntries(byCountry)).toEqual({ DE: (DAYS / 2) * LINKS, FR: (DAYS / 2) * LINKS });
    expect(server.stderr).not.toContain("click maintenance");
  } finally {
    reader.close();
  }
}, SETTLE_DEADLINE_MS + 30_000);
