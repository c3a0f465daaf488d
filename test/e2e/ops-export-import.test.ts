/**
 * `npm run export` and `npm run import`, end to end: a populated embedded instance (SQLite) is exported and
 * imported into a running scale deployment (Postgres), every account, key, link and rollup cell compared; the
 * moved key works there and the moved links redirect; re-importing changes nothing; and the way back
 * (Postgres → a fresh SQLite) gives the same data again. A truncated file is refused without writing, and a
 * file of an earlier version (four-dimension rollups instead of cells) still imports.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import type { AdminStore, ExportRecord } from "../../shared/ports.ts";
import { REPO_ROOT, api, createKey, makeTempDir, startServer } from "../helpers/server.ts";
import { BASE_URL, PG_URL, requirePostgres, requireRedis, startDeployment, waitFor, type Deployment } from "../helpers/scale.ts";

const CONFIG_VARS = [
  "PORT", "BASE_URL", "DATA_DIR", "DATABASE_URL", "DATABASE_SCHEMA", "REDIS_URL", "REDIS_PREFIX", "REDIS_CLUSTER_NODES",
  "COUNTRY_HEADER", "GEOIP_DB", "TRUSTED_PROXIES", "WEBHOOK_ALLOW_PRIVATE", "SIGNUP", "RATE_LIMIT_PER_MINUTE", "LOG_LEVEL",
  "METRICS_TOKEN", "OWN_HOSTS", "CLICK_RETENTION_DAYS",
];
const UA = {
  chrome: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
};

/** Runs one of the ops CLIs with `env` on top of a clean environment. */
async function runCli(script: "export" | "import", args: string[], env: Record<string, string>) {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !CONFIG_VARS.includes(k)) base[k] = v;
  const proc = Bun.spawn([process.execPath, "run", `control/ops/${script}-cli.ts`, ...args], {
    cwd: REPO_ROOT,
    env: { ...base, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Everything a store holds, in an order independent of either database's collation. */
async function snapshot(store: AdminStore): Promise<ExportRecord[]> {
  const all: ExportRecord[] = [];
  for await (const r of store.exportAll()) all.push(r);
  const key = (r: ExportRecord) => `${r.type}\u0000${JSON.stringify(r.data)}`;
  return all.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

describe("export and import between SQLite and Postgres", () => {
  const sourceDir = makeTempDir("export-src");
  const backDir = makeTempDir("export-back");
  const files = makeTempDir("export-files");
  const exported = join(files, "backups", "clink.jsonl"); // a directory that does not exist yet: export creates it
  let d: Deployment;
  let key: string;
  let hookSecret: string;
  let original: ExportRecord[];
  const slugs: string[] = [];

  beforeAll(async () => {
    await requirePostgres();
    await requireRedis();
    // Same BASE_URL as the deployment, so links keep their domain when they move.
    const source = await startServer({
      dataDir: sourceDir,
      env: { BASE_URL, COUNTRY_HEADER: "cf-ipcountry", WEBHOOK_ALLOW_PRIVATE: "true" },
    });
    try {
      key = await createKey(source, "mover@example.com", "moving key");
      await createKey(source, "other@example.com");
      const c = api(source, key);
      // Event webhook endpoints: one whose deliveries fail (nothing listens on port 9), paused before the move so the
      // deployment leaves its pending deliveries as they were; one subscribed to deletes only (none happen).
      const hook = await c.post("/api/v1/webhooks", { url: "http://127.0.0.1:9/hooks", events: ["link.created", "link.updated"] });
      expect(hook.status).toBe(201);
      hookSecret = hook.body.secret;
      expect((await c.post("/api/v1/webhooks", { url: "http://127.0.0.1:9/deleted", events: ["link.deleted"] })).status).toBe(201);
      const full = await c.post("/api/v1/links", {
        url: "https://example.com/full?x=1",
        slug: "full-link",
        tags: ["launch", "ünïcode"],
        folder: "Campaigns/Spring",
        utmSource: "news",
        utmMedium: "email",
        utmCampaign: "spring",
        maxHits: 1000,
        expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
        password: "open-sesame",
        rules: [{ kind: "device", match: "ios", url: "https://apps.apple.com/x" }],
        abUrls: [{ url: "https://a.example.com/", weight: 3 }, { url: "https://b.example.com/", weight: 1 }],
        webhookUrl: "http://127.0.0.1:9/in",
        serveOg: true,
        ogTitle: "A <title>",
        ogDescription: "Line one\nline two",
      });
      expect(full.status).toBe(201);
      slugs.push("full-link");
      const bulk = await c.post("/api/v1/bulk", Array.from({ length: 40 }, (_, i) => ({ url: `https://example.com/p/${i}`, slug: `bulk-${i}`, tags: i % 2 ? ["odd"] : [] })));
      expect(bulk.body.created).toBe(40);
      slugs.push(...Array.from({ length: 40 }, (_, i) => `bulk-${i}`));
      const ab = await c.post("/api/v1/links", { url: "https://example.com/ab", slug: "ab-link", abUrls: [{ url: "https://a.example.com/", weight: 1 }, { url: "https://b.example.com/", weight: 1 }] });
      expect(ab.status).toBe(201);
      slugs.push("ab-link");

      // Clicks: devices, browsers, countries (and none), A/B variants.
      for (let i = 0; i < 30; i++) {
        const headers: Record<string, string> = { "user-agent": i % 3 ? UA.chrome : UA.iphone };
        if (i % 4) headers["cf-ipcountry"] = i % 2 ? "DE" : "US";
        for (const slug of ["ab-link", `bulk-${i % 5}`]) {
          const res = await fetch(`${source.url}/${slug}`, { redirect: "manual", headers });
          expect(res.status).toBe(302);
        }
      }
      // (SIGTERM below writes any click still queued.)
      await waitFor("clicks written", async () => (await c.get("/api/v1/links/ab-link/stats")).body.totalClicks === 30);
      await waitFor("a delivery attempted", async () => (await c.get(`/api/v1/webhooks/${hook.body.id}/deliveries`)).body.deliveries.some((x: { attempts: number }) => x.attempts > 0));
      expect((await c.patch(`/api/v1/webhooks/${hook.body.id}`, { active: false })).status).toBe(200);
    } finally {
      expect(await source.stop()).toBe(0);
    }
    const sqlite = new SqliteStore(join(sourceDir, "clink.sqlite"));
    original = await snapshot(sqlite);
    await sqlite.close();
    d = await startDeployment({ redirectors: 1 });
  }, 60_000);

  afterAll(async () => {
    await d?.stop();
    for (const dir of [sourceDir, backDir, files]) rmSync(dir, { recursive: true, force: true });
  });

  test("export writes every record of the SQLite instance, owner-readable only, framed by header and end", async () => {
    const r = await runCli("export", ["--out", exported], { DATA_DIR: sourceDir, BASE_URL });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Exported 2 accounts, 2 API keys, 42 links");
    expect(statSync(exported).mode & 0o777).toBe(0o600);
    const lines = readFileSync(exported, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "header", format: "clink-export", version: 1 });
    expect(lines.at(-1)).toEqual({
      type: "end",
      counts: {
        account: 2,
        apiKey: 2,
        link: 42,
        cell: original.filter((r) => r.type === "cell").length,
        rollup: 0,
        webhookEndpoint: 2,
        webhookDelivery: 42, // link.created of each link, to the first endpoint
        domain: 0,
        workspace: 2, // each account's personal one
        member: 2,
      },
    });
    expect(lines.length).toBe(original.length + 2);
    // Keys travel as hashes only; webhook secrets as they are (receivers keep verifying with them).
    expect(readFileSync(exported, "utf8")).not.toContain(key);
    expect(readFileSync(exported, "utf8")).toContain(hookSecret);
    expect(r.stdout).toContain("2 webhook endpoints, 42 webhook deliveries, 0 domains, 2 workspaces and 2 memberships");
  });

  test("import into the running Postgres deployment: every account, key, link, rollup cell, webhook endpoint and delivery is identical", async () => {
    const r = await runCli("import", [exported], d.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Imported into Postgres");
    expect(r.stdout).toContain("2 accounts, 2 API keys, 42 links");
    expect(r.stdout).toContain("2 webhook endpoints, 42 webhook deliveries");

    const pg = new PostgresStore(PG_URL, { schema: d.schema, max: 2 });
    try {
      const moved = await snapshot(pg);
      expect(moved.length).toBe(original.length);
      // Link by link first, so a difference names the link.
      const links = (rs: ExportRecord[]) => new Map(rs.filter((x) => x.type === "link").map((x) => [(x.data as { slug: string }).slug, x.data]));
      const before = links(original);
      const after = links(moved);
      for (const slug of slugs) expect({ slug, link: after.get(slug) }).toEqual({ slug, link: before.get(slug) });
      expect(moved).toEqual(original);
      // The endpoints moved with their secrets and their log: pending deliveries wait in the new outbox.
      const endpoints = moved.filter((x) => x.type === "webhookEndpoint").map((x) => x.data as { secret: string; active: boolean });
      expect(endpoints.map((e) => e.active).sort()).toEqual([false, true]);
      expect(endpoints.some((e) => e.secret === hookSecret)).toBe(true);
    } finally {
      await pg.close();
    }
  });

  test("the moved key works on the control plane and the moved links redirect with their stats", async () => {
    const c = api(d.control, key);
    const listed = await c.get("/api/v1/links?limit=100");
    expect(listed.status).toBe(200);
    expect(listed.body.links).toHaveLength(42);
    const stats = await c.get("/api/v1/links/ab-link/stats");
    expect(stats.body.totalClicks).toBe(30);
    expect(stats.body.byCountry).toEqual({ DE: 15, US: 7, unknown: 8 });
    const res = await fetch(`${d.redirectors[0]!.url}/bulk-7`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://example.com/p/7");
    await waitFor("the click on bulk-7 written", async () => (await c.get("/api/v1/links/bulk-7/stats")).body.totalClicks === 1);
    expect((await c.get("/api/v1/links?tag=odd&limit=100")).body.links).toHaveLength(20);
  });

  test("importing the same file again skips everything and changes nothing", async () => {
    const pg = new PostgresStore(PG_URL, { schema: d.schema, max: 2 });
    try {
      const before = await snapshot(pg);
      const r = await runCli("import", [exported], d.env);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("0 accounts, 0 API keys, 0 links, 0 click cells, 0 webhook endpoints, 0 webhook deliveries, 0 domains, 0 workspaces, 0 memberships (already present");
      expect(await snapshot(pg)).toEqual(before);
    } finally {
      await pg.close();
    }
  });

  test("and back: Postgres exported and imported into a fresh SQLite gives the same data", async () => {
    const back = join(files, "back.jsonl");
    const out = await runCli("export", ["--out", back], d.env);
    expect(out.code).toBe(0);
    const r = await runCli("import", [back], { DATA_DIR: backDir, BASE_URL });
    expect(r.code).toBe(0);
    const sqlite = new SqliteStore(join(backDir, "clink.sqlite"));
    try {
      const returned = await snapshot(sqlite);
      // In scale mode bulk-7 was clicked once (its hits and cells moved on) and the key was used (its
      // last-use time moved on); everything else is exactly as it left.
      const bulk7 = original.find((x) => x.type === "link" && x.data.slug === "bulk-7")!.data as { id: string };
      const untouched = (x: ExportRecord) => !(x.type === "link" && x.data.id === bulk7.id) && !(x.type === "cell" && x.data.linkId === bulk7.id);
      const unused = (x: ExportRecord): ExportRecord => (x.type === "apiKey" ? { ...x, data: { ...x.data, lastUsedAt: null } } : x);
      expect(returned.filter(untouched).map(unused)).toEqual(original.filter(untouched).map(unused));
      const link = returned.find((x) => x.type === "link" && x.data.id === bulk7.id);
      expect(link?.type === "link" && link.data.hits).toBe(1);
    } finally {
      await sqlite.close();
    }
  });

  test("a truncated file is refused before anything is written", async () => {
    const lines = readFileSync(exported, "utf8").trim().split("\n");
    const truncated = join(files, "truncated.jsonl");
    writeFileSync(truncated, lines.slice(0, -5).join("\n") + "\n");
    const target = makeTempDir("export-trunc");
    try {
      const r = await runCli("import", [truncated], { DATA_DIR: target, BASE_URL });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("truncated");
      expect(r.stderr).toContain("nothing was written");
      const edited = join(files, "edited.jsonl");
      writeFileSync(edited, lines.map((l, i) => (i === 3 ? l.replace(/"createdAt":\d+/, '"createdAt":"yesterday"') : l)).join("\n"));
      const bad = await runCli("import", [edited], { DATA_DIR: target, BASE_URL });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("line 4: invalid");
      expect(() => statSync(join(target, "clink.sqlite"))).toThrow();
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  test("a file of an earlier version, with four-dimension rollups, imports them as cells", async () => {
    const file = join(files, "v1-rollups.jsonl");
    const account = { id: "acc-old", email: "old@example.com", passwordHash: "$argon2id$x", createdAt: 1 };
    const link = original.find((x) => x.type === "link")!.data as Record<string, unknown>;
    const oldLink = { ...link, id: "link-old", accountId: account.id, slug: "from-v1", hits: 3 };
    const hour = Date.UTC(2026, 0, 1, 10);
    const lines = [
      { type: "header", format: "clink-export", version: 1, exportedAt: "2026-01-02T00:00:00.000Z", source: "SQLite at old" },
      { type: "account", data: account },
      { type: "link", data: oldLink },
      { type: "rollup", data: { linkId: "link-old", hour, device: "mobile", browser: "Safari", country: null, variant: 1, clicks: 2 } },
      { type: "rollup", data: { linkId: "link-old", hour, device: "desktop", browser: "Chrome", country: "DE", variant: null, clicks: 1 } },
      { type: "end", counts: { account: 1, apiKey: 0, link: 1, rollup: 2 } },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const target = makeTempDir("export-v1");
    try {
      const r = await runCli("import", [file], { DATA_DIR: target, BASE_URL });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      expect(r.stdout).toContain("1 accounts, 0 API keys, 1 links, 2 click cells");
      const sqlite = new SqliteStore(join(target, "clink.sqlite"));
      try {
        const cells = [];
        for await (const c of sqlite.readCells({ linkId: "link-old" }, 0, Number.MAX_SAFE_INTEGER)) cells.push(c);
        const dims = (d: Record<string, string | null>) => expect.objectContaining({ ...d, os: null, referrer: null, via: null });
        expect(cells.sort((a, b) => b.clicks - a.clicks)).toEqual([
          { linkId: "link-old", hour, dims: dims({ device: "mobile", browser: "Safari", country: null, variant: "1" }), bot: false, clicks: 2, visitors: 0 },
          { linkId: "link-old", hour, dims: dims({ device: "desktop", browser: "Chrome", country: "DE", variant: null }), bot: false, clicks: 1, visitors: 0 },
        ]);
      } finally {
        await sqlite.close();
      }
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });
});
