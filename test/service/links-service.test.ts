/**
 * control/links/service.ts called directly, over a real SQLite store and the memory HotState: what the HTTP tests
 * cannot see (the compiled link published to HotState, hit counters, the re-applied concurrent update) and the
 * service's own argument handling.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Caller } from "../../control/deps.ts";
import * as links from "../../control/links/service.ts";
import { linkKey } from "../../shared/link.ts";
import { linkObject, rejectionOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { ledgerFrom } from "../helpers/hit-ledger.ts";

let cp: InProcessControlPlane;
let alice: Caller;
let bob: Caller;

const key = (slug: string) => linkKey(cp.deps.config.defaultDomain, slug);
const stored = async (slug: string) => (await cp.deps.store.getLink(cp.deps.config.defaultDomain, slug))!;

beforeAll(async () => {
  cp = await startControlPlane();
  alice = (await cp.createKey("alice@example.com")).caller;
  bob = (await cp.createKey("bob@example.com")).caller;
});
afterAll(() => cp?.close());

describe("createLink", () => {
  test("stores the link under the caller's account and the default domain; getLink answers its link object", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/a", slug: "svc-create" });
    const link: unknown = await links.getLink(cp.deps, alice, "svc-create");
    expect(link).toEqual(linkObject("svc-create", "https://example.com/a", {}, cp.clock.now()));
    const record = await stored("svc-create");
    expect([record.accountId, record.domain, record.hits, record.passwordHash]).toEqual([alice.accountId, "clink.test", 0, null]);
  });

  test("publishes the compiled link to HotState, UTM parameters applied, so redirectors need not read the store", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/land?x=1", slug: "svc-cached", utmSource: "news letter" });
    const cached = await cp.deps.hot.getLink(key("svc-cached"));
    expect(cached).toMatchObject({ id: (await stored("svc-cached")).id, slug: "svc-cached", target: "https://example.com/land?x=1&utm_source=news+letter", status: "active" });
  });

  test("a custom slug already taken throws slug_taken and leaves the first link as it was", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/first", slug: "svc-taken" });
    const problem = await rejectionOf(links.createLink(cp.deps, bob, { url: "https://example.com/second", slug: "svc-taken" }));
    expect([problem.code, problem.detail]).toEqual(["slug_taken", '"svc-taken" is already taken']);
    expect([(await stored("svc-taken")).target, (await stored("svc-taken")).accountId]).toEqual(["https://example.com/first", alice.accountId]);
  });

  test("a webhook to a private address is refused unless the configuration allows private targets", async () => {
    const input = { url: "https://example.com/", slug: "svc-private-hook", webhookUrl: "http://127.0.0.1:9/hook" };
    expect((await rejectionOf(links.createLink(cp.deps, alice, input))).errors!.map((e) => e.path)).toEqual(["/webhookUrl"]);
    const allowing = { ...cp.deps, config: { ...cp.deps.config, webhookAllowPrivate: true } };
    await links.createLink(allowing, alice, input);
    expect((await stored("svc-private-hook")).webhookUrl).toBe("http://127.0.0.1:9/hook");
  });
});

describe("updateLink", () => {
  test("publishes the new version to HotState and tells listeners the key changed", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/old", slug: "svc-update" });
    const heard: string[] = [];
    cp.deps.hot.onLinkInvalidated((k) => heard.push(k));
    await links.updateLink(cp.deps, alice, "svc-update", { targetUrl: "https://example.com/new" });
    expect((await cp.deps.hot.getLink(key("svc-update")))!.target).toBe("https://example.com/new");
    expect(heard).toContain(key("svc-update"));
  });

  test("the hit counter is kept while a limit stays, and dropped when the limit is removed or added", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/", slug: "svc-hits", maxHits: 10 });
    const { id } = await stored("svc-hits");
    expect(await cp.deps.hot.takeHit(id, 10, ledgerFrom(4))).toBe(5);
    await links.updateLink(cp.deps, alice, "svc-hits", { maxHits: 20 });
    expect(await cp.deps.hot.peekHits(id)).toBe(5);
    await links.updateLink(cp.deps, alice, "svc-hits", { maxHits: null });
    expect(await cp.deps.hot.peekHits(id)).toBeNull();
    await cp.deps.hot.takeHit(id, 1000, ledgerFrom(0));
    await links.updateLink(cp.deps, alice, "svc-hits", { maxHits: 3 });
    expect(await cp.deps.hot.peekHits(id)).toBeNull();
  });

  test("two concurrent updates of different fields both land: the slow one (hashing a password) is re-applied over the other", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/c", slug: "svc-concurrent" });
    const [withPassword, withFolder] = await Promise.all([
      links.updateLink(cp.deps, alice, "svc-concurrent", { password: "secret-pw" }),
      links.updateLink(cp.deps, alice, "svc-concurrent", { folder: "kept", tags: "one,two" }),
    ]);
    expect([withFolder.hasPassword, withFolder.folder]).toEqual([false, "kept"]);
    expect([withPassword.hasPassword, withPassword.folder, withPassword.tags]).toEqual([true, "kept", ["one", "two"]]);
    const record = await stored("svc-concurrent");
    expect([record.folder, record.tags, await Bun.password.verify("secret-pw", record.passwordHash!)]).toEqual(["kept", ["one", "two"], true]);
  });

  test("an update racing a delete ends not_found, and HotState does not bring the link back", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/r", slug: "svc-race" });
    const [updated, deleted] = await Promise.allSettled([
      links.updateLink(cp.deps, alice, "svc-race", { password: "secret-pw" }),
      links.deleteLink(cp.deps, alice, "svc-race"),
    ]);
    expect([updated.status, deleted.status]).toEqual(["rejected", "fulfilled"]);
    expect(await rejectionOf(Promise.reject((updated as PromiseRejectedResult).reason))).toMatchObject({ code: "not_found" });
    expect(await cp.deps.hot.getLink(key("svc-race"))).toBeUndefined();
  });

  test("the password changes only when given: a new one is hashed, absent keeps it, \"\" removes it", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/p", slug: "svc-password" });
    await links.updateLink(cp.deps, alice, "svc-password", { password: "first-pw" });
    const hash = (await stored("svc-password")).passwordHash!;
    expect(await Bun.password.verify("first-pw", hash)).toBe(true);
    await links.updateLink(cp.deps, alice, "svc-password", { folder: "x" });
    expect((await stored("svc-password")).passwordHash).toBe(hash);
    await links.updateLink(cp.deps, alice, "svc-password", { password: "" });
    expect((await stored("svc-password")).passwordHash).toBeNull();
  });

  test("another account's link: not_found, nothing written", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/mine", slug: "svc-foreign" });
    expect((await rejectionOf(links.updateLink(cp.deps, bob, "svc-foreign", { folder: "stolen" }))).code).toBe("not_found");
    expect((await stored("svc-foreign")).folder).toBeNull();
  });
});

describe("deleteLink", () => {
  test("removes the link, drops the cached copy and the hit counter", async () => {
    await links.createLink(cp.deps, alice, { url: "https://example.com/", slug: "svc-delete", maxHits: 5 });
    const { id } = await stored("svc-delete");
    await cp.deps.hot.takeHit(id, 5, ledgerFrom(0));
    await links.deleteLink(cp.deps, alice, "svc-delete");
    expect([await cp.deps.store.getLinkById(id), await cp.deps.hot.getLink(key("svc-delete")), await cp.deps.hot.peekHits(id)]).toEqual([null, undefined, null]);
  });
});

describe("findOwnLink and getLink", () => {
  test("a slug over 200 characters or not a string is not_found without echoing more than 200 characters", async () => {
    const long = "x".repeat(5000);
    const problem = await rejectionOf(links.getLink(cp.deps, alice, long));
    expect([problem.code, problem.detail]).toEqual(["not_found", `No link "${"x".repeat(200)}"`]);
    expect((await rejectionOf(links.getLink(cp.deps, alice, 42 as unknown as string))).code).toBe("not_found");
  });
});

describe("listLinks", () => {
  test("takes limit as a number or digits, refuses anything else with every error at once", async () => {
    const lister = (await cp.createKey("lister@example.com")).caller;
    for (const slug of ["svc-l1", "svc-l2", "svc-l3"]) {
      await links.createLink(cp.deps, lister, { url: "https://example.com/", slug });
      cp.clock.advance(1);
    }
    expect((await links.listLinks(cp.deps, lister, { limit: 2 })).links.map((l) => l.slug)).toEqual(["svc-l3", "svc-l2"]);
    expect((await links.listLinks(cp.deps, lister, { limit: "1" })).links.map((l) => l.slug)).toEqual(["svc-l3"]);
    const problem = await rejectionOf(links.listLinks(cp.deps, lister, { limit: 2.5, status: "gone", tag: 7 as unknown as string }));
    expect(problem.errors).toEqual([
      { path: "/limit", message: "must be an integer from 1 to 500" },
      { path: "/status", message: "must be active, paused or archived" },
      { path: "/tag", message: "must be a string of at most 500 characters" },
    ]);
  });
});

describe("bulkCreateLinks and bulkRowsOf", () => {
  test("more than 500 rows throws invalid_input before anything is validated or written", async () => {
    const rows = Array.from({ length: 501 }, (_, i) => ({ url: "https://example.com/", slug: `svc-too-many-${i}` }));
    expect((await rejectionOf(links.bulkCreateLinks(cp.deps, alice, rows))).errors).toEqual([{ path: "/", message: "at most 500 links per request" }]);
    expect(await cp.deps.store.getLink("clink.test", "svc-too-many-0")).toBeNull();
  });

  test("rows needing I/O (a password) and plain rows keep their input order; every created link is in HotState", async () => {
    const result = await links.bulkCreateLinks(cp.deps, alice, [
      { url: "https://example.com/0", slug: "svc-bulk-0", password: "secret-pw" },
      { url: "https://example.com/1", slug: "svc-bulk-1" },
      { url: "https://example.com/2", slug: "svc-bulk-2", webhookUrl: "http://10.0.0.1/" },
    ]);
    expect(result.results.map((r) => [r.index, r.ok])).toEqual([[0, true], [1, true], [2, false]]);
    expect([result.created, result.failed]).toEqual([2, 1]);
    expect((await stored("svc-bulk-0")).passwordHash).toStartWith("$argon2id$");
    for (const slug of ["svc-bulk-0", "svc-bulk-1"]) expect((await cp.deps.hot.getLink(key(slug)))!.slug).toBe(slug);
  });

  test("bulkRowsOf takes a bare array or { links: [...] } and refuses anything else", async () => {
    const rows = [{ url: "https://example.com/" }];
    expect([links.bulkRowsOf(rows), links.bulkRowsOf({ links: rows })]).toEqual([rows, rows]);
    expect((await rejectionOf((async () => links.bulkRowsOf({ rows }))())).code).toBe("invalid_input");
  });
});
