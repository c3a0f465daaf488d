/**
 * The LinkStore contract: every adapter (SQLite, Postgres) runs this same suite, so they are
 * interchangeable behind the port. Each test works under its own fresh account and unique slugs, so tests
 * are independent of each other and of their order.
 *
 * `make` must return a NEW store instance on the SAME test database each time it is called (the suite
 * opens several to test concurrent migration and that data is visible from a second connection).
 * `cleanup` runs after every store has been closed (e.g. drop the test schema, delete the file).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors.ts";
import type { LinkRecord } from "../../shared/link.ts";
import type { ApiKeyRecord, ExportRecord, Store, StoredClick } from "../../shared/ports.ts";

const HOUR = 3_600_000;
/** A fixed, hour-aligned instant so expectations do not depend on the clock. */
const T0 = Date.UTC(2030, 0, 1, 12);
const DOMAIN = "sho.rt";

const uid = () => crypto.randomUUID();
let seq = 0;
const uniqueSlug = (prefix = "s") => `${prefix}${(++seq).toString(36)}${uid().slice(0, 8)}`;

function linkFor(accountId: string, over: Partial<LinkRecord> = {}): LinkRecord {
  return {
    id: uid(),
    accountId,
    domain: DOMAIN,
    slug: uniqueSlug(),
    target: "https://example.com/landing",
    status: "active",
    createdAt: T0,
    updatedAt: T0,
    expiresAt: null,
    startsAt: null,
    maxHits: null,
    hits: 0,
    passwordHash: null,
    tags: [],
    folder: null,
    utmSource: null,
    utmMedium: null,
    utmCampaign: null,
    rules: [],
    abUrls: [],
    webhookUrl: null,
    webhookSecret: null,
    serveOg: false,
    ogTitle: null,
    ogDescription: null,
    ogImageUrl: null,
    ...over,
  };
}

/** A link with every optional field set, to prove each column round-trips. */
function fullLinkFor(accountId: string, over: Partial<LinkRecord> = {}): LinkRecord {
  return linkFor(accountId, {
    target: "https://example.com/path?x=1&y=é",
    status: "paused",
    createdAt: T0 - 5 * HOUR,
    updatedAt: T0 - 4 * HOUR,
    expiresAt: T0 + 48 * HOUR,
    startsAt: T0 - HOUR,
    maxHits: 1_000_000,
    hits: 7,
    passwordHash: "$argon2id$v=19$m=65536,t=2,p=1$abc$def",
    tags: ["launch", "Q1 2030", "ünïcode"],
    folder: "Marketing/Spring",
    utmSource: "newsletter",
    utmMedium: "email",
    utmCampaign: "spring_sale",
    rules: [
      { kind: "country", match: "DE", url: "https://example.de/" },
      { kind: "device", match: "ios", url: "https://apps.apple.com/x" },
    ],
    abUrls: [
      { url: "https://a.example.com/", weight: 3 },
      { url: "https://b.example.com/", weight: 1.5 },
    ],
    webhookUrl: "https://hooks.example.com/clink",
    webhookSecret: "whsec_c2VjcmV0",
    serveOg: true,
    ogTitle: `Title with "quotes" & <tags>`,
    ogDescription: "Line one\nline two",
    ogImageUrl: "https://img.example.com/card.png",
    ...over,
  });
}

/** A click in a batch of its own unless `over.batch` names one. */
function click(linkId: string, over: Partial<StoredClick> = {}): StoredClick {
  return {
    batch: uid(),
    linkId,
    ts: T0 + 60_000,
    country: "US",
    device: "desktop",
    browser: "Chrome",
    os: "Windows",
    referrer: null,
    variant: null,
    ...over,
  };
}

/** The rejection of `p`; fails the test when `p` resolves. */
async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to reject, but it resolved");
}

export function runLinkStoreContract(
  name: string,
  make: () => Promise<Store>,
  cleanup?: () => Promise<void>,
): void {
  describe(`LinkStore contract: ${name}`, () => {
    let store: Store;
    const opened: Store[] = [];
    const open = async () => {
      const s = await make();
      opened.push(s);
      return s;
    };

    beforeAll(async () => {
      store = await open();
      await store.migrate();
    });

    afterAll(async () => {
      for (const s of opened) await s.close().catch(() => {}); // some tests close their own store first
      await cleanup?.();
    });

    /** A fresh account; returns its id. */
    async function newAccount(): Promise<string> {
      const id = uid();
      expect(await store.createAccount({ id, email: `${id}@example.com`, passwordHash: "h", createdAt: T0 })).toBe(
        true,
      );
      return id;
    }

    async function insertOk(links: LinkRecord[]): Promise<void> {
      expect(await store.insertLinks(links)).toEqual(links.map(() => true));
    }

    async function rawClicksOf(linkId: string): Promise<StoredClick[]> {
      const out: StoredClick[] = [];
      for await (const c of store.rawClicks(linkId)) out.push(c);
      return out;
    }

    describe("lifecycle", () => {
      test("migrate() again on a migrated database is a no-op", async () => {
        await store.migrate();
        await store.migrate();
        await store.ping();
      });

      test("two stores migrating the same database at the same time both succeed", async () => {
        const [a, b] = [await open(), await open()];
        await Promise.all([a.migrate(), b.migrate()]);
        await Promise.all([a.ping(), b.ping()]);
      });

      test("data written by one store is visible from another store on the same database", async () => {
        const accountId = await newAccount();
        const link = linkFor(accountId);
        await insertOk([link]);
        const other = await open();
        expect(await other.getAccount(accountId)).not.toBeNull();
        expect(await other.getLinkById(link.id)).toEqual(link);
      });

      test("ping() rejects once the store is closed", async () => {
        const s = await open();
        await s.ping();
        await s.close();
        expect(await rejectionOf(s.ping())).toBeInstanceOf(Error);
      });
    });

    describe("accounts", () => {
      test("an account reads back by id and by email in any letter case; the email is stored lower-cased", async () => {
        const id = uid();
        const email = `Mixed.Case+${id}@Example.COM`;
        expect(await store.createAccount({ id, email, passwordHash: "argon", createdAt: T0 })).toBe(true);
        const expected = { id, email: email.toLowerCase(), passwordHash: "argon", createdAt: T0 };
        expect(await store.getAccount(id)).toEqual(expected);
        expect(await store.getAccountByEmail(email)).toEqual(expected);
        expect(await store.getAccountByEmail(email.toUpperCase())).toEqual(expected);
      });

      test("createAccount returns false for an email already registered, whatever its case, and keeps the first", async () => {
        const email = `dup-${uid()}@example.com`;
        const first = { id: uid(), email, passwordHash: "first", createdAt: T0 };
        expect(await store.createAccount(first)).toBe(true);
        expect(await store.createAccount({ id: uid(), email: email.toUpperCase(), passwordHash: "x", createdAt: T0 })).toBe(
          false,
        );
        expect(await store.getAccountByEmail(email)).toEqual(first);
      });

      test("unknown accounts read as null", async () => {
        expect(await store.getAccount(uid())).toBeNull();
        expect(await store.getAccountByEmail(`nobody-${uid()}@example.com`)).toBeNull();
      });
    });

    describe("sessions", () => {
      test("a session is created, read by its hash and deleted", async () => {
        const accountId = await newAccount();
        const session = { idHash: uid(), accountId, csrfToken: "csrf-1", createdAt: T0, expiresAt: T0 + 7 * 24 * HOUR };
        await store.createSession(session);
        expect(await store.getSession(session.idHash)).toEqual(session);
        await store.deleteSession(session.idHash);
        expect(await store.getSession(session.idHash)).toBeNull();
        await store.deleteSession(session.idHash); // deleting again is harmless
      });

      test("expired sessions are removed in one sweep; live ones stay", async () => {
        const accountId = await newAccount();
        const at = (expiresAt: number) => ({ idHash: uid(), accountId, csrfToken: "c", createdAt: T0, expiresAt });
        const [gone, edge, live] = [at(T0 - HOUR), at(T0), at(T0 + HOUR)];
        for (const s of [gone, edge, live]) await store.createSession(s);
        expect(await store.deleteExpiredSessions(T0)).toBeGreaterThanOrEqual(2); // other tests' sessions may expire too
        expect(await store.getSession(gone.idHash)).toBeNull();
        expect(await store.getSession(edge.idHash)).toBeNull();
        expect(await store.getSession(live.idHash)).toEqual(live);
        expect(await store.deleteExpiredSessions(T0)).toBe(0);
      });

      test("an unknown session reads as null", async () => {
        expect(await store.getSession(uid())).toBeNull();
      });
    });

    describe("API keys", () => {
      const keyFor = (accountId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
        id: uid(),
        accountId,
        name: "ci",
        keyHash: uid().replace(/-/g, "").repeat(2),
        prefix: "ck_AbC1",
        createdAt: T0,
        lastUsedAt: null,
        revokedAt: null,
        ...over,
      });

      test("a key is found by its hash with every field", async () => {
        const key = keyFor(await newAccount(), { name: "deploy bot", lastUsedAt: T0 + 5, revokedAt: null });
        await store.createApiKey(key);
        expect(await store.findApiKeyByHash(key.keyHash)).toEqual(key);
        expect(await store.findApiKeyByHash("0".repeat(64))).toBeNull();
      });

      test("listApiKeys lists only the account's keys, newest first, revoked ones included", async () => {
        const mine = await newAccount();
        const theirs = await newAccount();
        const older = keyFor(mine, { createdAt: T0 });
        const newer = keyFor(mine, { createdAt: T0 + 1000, revokedAt: T0 + 2000 });
        await store.createApiKey(older);
        await store.createApiKey(newer);
        await store.createApiKey(keyFor(theirs));
        expect(await store.listApiKeys(mine)).toEqual([newer, older]);
        expect(await store.listApiKeys(uid())).toEqual([]);
      });

      test("touchApiKey records the last use and never moves it backwards", async () => {
        const key = keyFor(await newAccount());
        await store.createApiKey(key);
        await store.touchApiKey(key.id, T0 + 10_000);
        expect((await store.findApiKeyByHash(key.keyHash))?.lastUsedAt).toBe(T0 + 10_000);
        await store.touchApiKey(key.id, T0 + 5_000);
        expect((await store.findApiKeyByHash(key.keyHash))?.lastUsedAt).toBe(T0 + 10_000);
        await store.touchApiKey(uid(), T0); // unknown key: nothing happens
      });

      test("revokeApiKey revokes only the owner's key, keeps the first revocation time, and the key stays findable", async () => {
        const owner = await newAccount();
        const stranger = await newAccount();
        const key = keyFor(owner);
        await store.createApiKey(key);

        expect(await store.revokeApiKey(stranger, key.id, T0 + 1)).toBeNull();
        expect((await store.findApiKeyByHash(key.keyHash))?.revokedAt).toBeNull();

        expect(await store.revokeApiKey(owner, key.id, T0 + 2)).toEqual({ ...key, revokedAt: T0 + 2 });
        expect(await store.revokeApiKey(owner, key.id, T0 + 3)).toEqual({ ...key, revokedAt: T0 + 2 });
        // The caller decides what a revoked key means, so lookups still return it.
        expect(await store.findApiKeyByHash(key.keyHash)).toEqual({ ...key, revokedAt: T0 + 2 });
        expect(await store.revokeApiKey(owner, uid(), T0)).toBeNull();
      });
    });

    describe("links: insert and read", () => {
      test("every field round-trips through insertLinks, getLink and getLinkById", async () => {
        const link = fullLinkFor(await newAccount());
        await insertOk([link]);
        expect(await store.getLink(link.domain, link.slug)).toEqual(link);
        expect(await store.getLinkById(link.id)).toEqual(link);
      });

      test("absent values round-trip as null and empty arrays", async () => {
        const link = linkFor(await newAccount());
        await insertOk([link]);
        expect(await store.getLinkById(link.id)).toEqual(link);
      });

      test("unknown links read as null", async () => {
        expect(await store.getLink(DOMAIN, uniqueSlug())).toBeNull();
        expect(await store.getLinkById(uid())).toBeNull();
      });

      test("slugs are case-sensitive", async () => {
        const accountId = await newAccount();
        const lower = linkFor(accountId, { slug: `promo${uid().slice(0, 8)}`, target: "https://lower.example.com/" });
        const upper = linkFor(accountId, { slug: lower.slug.toUpperCase(), target: "https://upper.example.com/" });
        await insertOk([lower, upper]);
        expect((await store.getLink(DOMAIN, lower.slug))?.target).toBe(lower.target);
        expect((await store.getLink(DOMAIN, upper.slug))?.target).toBe(upper.target);
        expect(await store.getLink(DOMAIN, `${lower.slug.slice(0, 1).toUpperCase()}${lower.slug.slice(1)}`)).toBeNull();
      });

      test("the same slug may exist once per domain", async () => {
        const accountId = await newAccount();
        const slug = uniqueSlug();
        const a = linkFor(accountId, { slug, domain: "a.example" });
        const b = linkFor(accountId, { slug, domain: "b.example" });
        await insertOk([a, b]);
        expect((await store.getLink("a.example", slug))?.id).toBe(a.id);
        expect((await store.getLink("b.example", slug))?.id).toBe(b.id);
      });

      test("insertLinks answers per row, in input order: a taken slug is false, within a batch the first wins", async () => {
        const accountId = await newAccount();
        const existing = linkFor(accountId);
        await insertOk([existing]);
        const dupSlug = uniqueSlug();
        const batch = [
          linkFor(accountId),
          linkFor(accountId, { slug: existing.slug, target: "https://loser.example.com/" }),
          linkFor(accountId, { slug: dupSlug, target: "https://first.example.com/", tags: ["first"] }),
          linkFor(accountId, { slug: dupSlug, target: "https://second.example.com/", tags: ["second"] }),
          linkFor(accountId),
        ];
        expect(await store.insertLinks(batch)).toEqual([true, false, true, false, true]);
        expect(await store.getLink(DOMAIN, existing.slug)).toEqual(existing);
        expect((await store.getLink(DOMAIN, dupSlug))?.target).toBe("https://first.example.com/");
        expect(await store.getLinkById(batch[1]!.id)).toBeNull();
        expect(await store.getLinkById(batch[3]!.id)).toBeNull();
        // The losers' tags were not written either.
        expect((await store.listLinks(accountId, { limit: 10, tag: "second" })).links).toEqual([]);
        expect((await store.listLinks(accountId, { limit: 10, tag: "first" })).links.map((l) => l.id)).toEqual([
          batch[2]!.id,
        ]);
      });

      test("insertLinks of nothing returns nothing", async () => {
        expect(await store.insertLinks([])).toEqual([]);
      });

      test("two concurrent inserts of the same slug: exactly one wins", async () => {
        const accountId = await newAccount();
        const slug = uniqueSlug();
        const results = await Promise.all(
          [1, 2, 3].map((n) => store.insertLinks([linkFor(accountId, { slug, target: `https://e${n}.example.com/` })])),
        );
        expect(results.flat().filter(Boolean)).toHaveLength(1);
      });

      test("500 links with tags go in with one call, quickly, and all read back", async () => {
        const accountId = await newAccount();
        const links = Array.from({ length: 500 }, (_, i) =>
          fullLinkFor(accountId, { createdAt: T0 + i, tags: i % 2 ? ["odd", `n${i}`] : ["even"] }),
        );
        const started = performance.now();
        await insertOk(links);
        const elapsed = performance.now() - started;
        expect(elapsed).toBeLessThan(3000);
        const odd = await store.listLinks(accountId, { limit: 500, tag: "odd" });
        expect(odd.links).toHaveLength(250);
        expect(odd.nextCursor).toBeNull();
        expect(await store.getLinkById(links[321]!.id)).toEqual(links[321]!);
      });
    });

    describe("links: update and delete", () => {
      test("updateLink writes every field except id, accountId, createdAt and hits", async () => {
        const accountId = await newAccount();
        const original = linkFor(accountId, { hits: 3, tags: ["old"], createdAt: T0 - HOUR });
        await insertOk([original]);
        const changed = fullLinkFor(await newAccount(), {
          id: original.id,
          slug: uniqueSlug("moved"),
          domain: "other.example",
          status: "archived",
          hits: 999,
          createdAt: T0 + 99 * HOUR,
          updatedAt: T0 + HOUR,
          tags: ["new", "newer"],
        });
        await store.updateLink(changed);
        const expected = { ...changed, accountId, createdAt: original.createdAt, hits: 3 };
        expect(await store.getLinkById(original.id)).toEqual(expected);
        expect(await store.getLink("other.example", changed.slug)).toEqual(expected);
        expect(await store.getLink(DOMAIN, original.slug)).toBeNull();
      });

      test("updateLink can clear every optional field", async () => {
        const full = fullLinkFor(await newAccount());
        await insertOk([full]);
        const cleared = linkFor(full.accountId, {
          id: full.id,
          slug: full.slug,
          createdAt: full.createdAt,
          hits: full.hits,
          updatedAt: T0 + HOUR,
        });
        await store.updateLink(cleared);
        expect(await store.getLinkById(full.id)).toEqual(cleared);
      });

      test("updateLink replaces the link's tags for filtering", async () => {
        const accountId = await newAccount();
        const link = linkFor(accountId, { tags: ["keep", "drop"] });
        await insertOk([link]);
        await store.updateLink({ ...link, tags: ["keep", "add"] });
        const ids = async (tag: string) => (await store.listLinks(accountId, { limit: 10, tag })).links.map((l) => l.id);
        expect(await ids("keep")).toEqual([link.id]);
        expect(await ids("add")).toEqual([link.id]);
        expect(await ids("drop")).toEqual([]);
        await store.updateLink({ ...link, tags: [] });
        expect(await ids("keep")).toEqual([]);
      });

      test("updateLink onto a slug already taken on that domain fails with slug_taken and changes nothing", async () => {
        const accountId = await newAccount();
        const a = linkFor(accountId);
        const b = linkFor(accountId);
        await insertOk([a, b]);
        const err = await rejectionOf(store.updateLink({ ...b, slug: a.slug, target: "https://changed.example.com/" }));
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe("slug_taken");
        expect(await store.getLinkById(b.id)).toEqual(b);
      });

      test("updateLink of an unknown id creates nothing", async () => {
        const ghost = linkFor(await newAccount(), { tags: ["ghost"] });
        expect(await store.updateLink(ghost)).toBe(false);
        expect(await store.getLinkById(ghost.id)).toBeNull();
      });

      test("updateLink with an expected version writes only over that version (compare and set on updatedAt)", async () => {
        const link = linkFor(await newAccount(), { tags: ["v1"], updatedAt: T0 });
        await insertOk([link]);
        const v2 = { ...link, folder: "second", tags: ["v2"], updatedAt: T0 + 1 };
        expect(await store.updateLink(v2, T0)).toBe(true);
        // A writer that read the first version loses: nothing of its write lands, tags included.
        expect(await store.updateLink({ ...link, target: "https://stale.example.com/", tags: ["stale"], updatedAt: T0 + 1 }, T0)).toBe(false);
        expect(await store.getLinkById(link.id)).toEqual(v2);
        expect((await store.listLinks(link.accountId, { limit: 10, tag: "stale" })).links).toEqual([]);
        expect(await store.updateLink({ ...v2, folder: "third", updatedAt: T0 + 2 }, T0 + 1)).toBe(true);
        expect((await store.getLinkById(link.id))?.folder).toBe("third");
        await store.deleteLink(link.id);
        expect(await store.updateLink({ ...v2, updatedAt: T0 + 3 }, T0 + 2)).toBe(false);
      });

      test("deleteLink removes the link with its tags, clicks and stats; the slug can be reused", async () => {
        const accountId = await newAccount();
        const link = linkFor(accountId, { tags: ["doomed"] });
        await insertOk([link]);
        const clicks = [click(link.id), click(link.id, { ts: T0 + 2 * HOUR })];
        await store.recordClicks(clicks);
        await store.deleteLink(link.id);

        expect(await store.getLinkById(link.id)).toBeNull();
        expect(await store.getLink(DOMAIN, link.slug)).toBeNull();
        expect((await store.listLinks(accountId, { limit: 10, tag: "doomed" })).links).toEqual([]);
        expect((await store.getStats(link.id, 0)).total).toBe(0);
        await store.deleteLink(link.id); // deleting again is harmless

        const reborn = linkFor(accountId, { slug: link.slug });
        await insertOk([reborn]);
        // The raw clicks went too, and none of them passes to the new link.
        expect(await rawClicksOf(link.id)).toEqual([]);
        expect(await rawClicksOf(reborn.id)).toEqual([]);
        await store.recordClicks(clicks.map((c) => ({ ...c, linkId: reborn.id })));
        expect((await store.getLinkById(reborn.id))?.hits).toBe(2);
        expect((await store.listLinks(accountId, { limit: 10, tag: "doomed" })).links).toEqual([]);
      });
    });

    describe("listLinks", () => {
      test("newest first, id descending among equal creation times, only the account's links", async () => {
        const accountId = await newAccount();
        const other = await newAccount();
        const links = [
          linkFor(accountId, { createdAt: T0 + 1 }),
          linkFor(accountId, { createdAt: T0 + 3 }),
          linkFor(accountId, { createdAt: T0 + 2 }),
          linkFor(accountId, { createdAt: T0 + 2 }),
          linkFor(accountId, { createdAt: T0 + 2 }),
        ];
        await insertOk(links);
        await insertOk([linkFor(other, { createdAt: T0 + 10 })]);
        const expected = [...links]
          .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
          .map((l) => l.id);
        const page = await store.listLinks(accountId, { limit: 50 });
        expect(page.links.map((l) => l.id)).toEqual(expected);
        expect(page.nextCursor).toBeNull();
        expect(page.links[0]).toEqual(links[1]!);
        expect(await store.listLinks(uid(), { limit: 50 })).toEqual({ links: [], nextCursor: null });
      });

      test("cursor pages visit every link exactly once, in order, ending with a null cursor", async () => {
        const accountId = await newAccount();
        // Ties on createdAt straddle page boundaries, which is what the id tiebreak in the cursor is for.
        const links = Array.from({ length: 11 }, (_, i) => linkFor(accountId, { createdAt: T0 + Math.floor(i / 3) }));
        await insertOk(links);
        const all = (await store.listLinks(accountId, { limit: 500 })).links.map((l) => l.id);
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.listLinks(accountId, { limit: 3, cursor });
          expect(page.links.length).toBeLessThanOrEqual(3);
          seen.push(...page.links.map((l) => l.id));
          cursor = page.nextCursor ?? undefined;
          if (cursor !== undefined) expect(typeof page.nextCursor).toBe("string");
          pages++;
        } while (cursor !== undefined && pages < 20);
        expect(pages).toBe(4);
        expect(seen).toEqual(all);
        expect(new Set(seen).size).toBe(11);
      });

      test("when the last page is exactly full, its nextCursor is null", async () => {
        const accountId = await newAccount();
        await insertOk(Array.from({ length: 4 }, (_, i) => linkFor(accountId, { createdAt: T0 + i })));
        const first = await store.listLinks(accountId, { limit: 2 });
        expect(first.nextCursor).not.toBeNull();
        const second = await store.listLinks(accountId, { limit: 2, cursor: first.nextCursor! });
        expect(second.links).toHaveLength(2);
        expect(second.nextCursor).toBeNull();
      });

      test("an empty cursor string means the first page", async () => {
        const accountId = await newAccount();
        await insertOk([linkFor(accountId)]);
        expect((await store.listLinks(accountId, { limit: 5, cursor: "" })).links).toHaveLength(1);
      });

      test("a cursor that is not one we issued is invalid input (400), never an internal error", async () => {
        const accountId = await newAccount();
        const b64 = (s: string) => Buffer.from(s).toString("base64url");
        const bad = [
          "garbage!",
          "bm90IGpzb24",
          b64("{}"),
          b64("[1]"),
          b64(`["x","y"]`),
          b64(`[1.5,"id"]`),
          b64(`[1,""]`),
          b64(`[1e300,"id"]`),
          "x".repeat(5000),
          "%00",
        ];
        for (const cursor of bad) {
          const err = await rejectionOf(store.listLinks(accountId, { limit: 5, cursor }));
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe("invalid_input");
          expect((err as AppError).status).toBe(400);
          expect((err as AppError).errors).toEqual([{ path: "/cursor", message: "invalid cursor" }]);
        }
      });

      test("tag filter matches whole tags exactly", async () => {
        const accountId = await newAccount();
        const red = linkFor(accountId, { tags: ["red", "blue"], createdAt: T0 + 2 });
        const reddish = linkFor(accountId, { tags: ["reddish"], createdAt: T0 + 1 });
        const upper = linkFor(accountId, { tags: ["Red"] });
        await insertOk([red, reddish, upper]);
        await insertOk([linkFor(await newAccount(), { tags: ["red"] })]); // another account's
        const ids = async (tag: string) => (await store.listLinks(accountId, { limit: 10, tag })).links.map((l) => l.id);
        expect(await ids("red")).toEqual([red.id]);
        expect(await ids("Red")).toEqual([upper.id]);
        expect(await ids("re")).toEqual([]);
        expect(await ids("%")).toEqual([]);
        expect(await ids("blue")).toEqual([red.id]);
      });

      test("folder and status filters are exact, and combine with each other and with pagination", async () => {
        const accountId = await newAccount();
        const inFolder = [0, 1, 2, 3].map((i) =>
          linkFor(accountId, { folder: "Marketing", status: i === 3 ? "paused" : "active", createdAt: T0 + i }),
        );
        await insertOk([
          ...inFolder,
          linkFor(accountId, { folder: "Marketing/2030" }),
          linkFor(accountId, { folder: "marketing" }),
          linkFor(accountId, { folder: null, status: "paused" }),
        ]);
        const ids = async (f: { folder?: string; status?: "active" | "paused" | "archived" }) =>
          (await store.listLinks(accountId, { limit: 10, ...f })).links.map((l) => l.id);
        expect(await ids({ folder: "Marketing" })).toEqual(inFolder.map((l) => l.id).reverse());
        expect(await ids({ folder: "Marketing", status: "paused" })).toEqual([inFolder[3]!.id]);
        expect(await ids({ status: "archived" })).toEqual([]);
        expect(await ids({ status: "paused" })).toHaveLength(2);

        const first = await store.listLinks(accountId, { limit: 2, folder: "Marketing", status: "active" });
        const second = await store.listLinks(accountId, {
          limit: 2,
          folder: "Marketing",
          status: "active",
          cursor: first.nextCursor!,
        });
        expect([...first.links, ...second.links].map((l) => l.id)).toEqual([2, 1, 0].map((i) => inFolder[i]!.id));
        expect(second.nextCursor).toBeNull();
      });

      test("q searches slug and target, ignoring letter case", async () => {
        const accountId = await newAccount();
        const bySlug = linkFor(accountId, { slug: uniqueSlug("SummerSale"), createdAt: T0 + 2 });
        const byTarget = linkFor(accountId, { target: "https://shop.example.com/SUMMER-sale", createdAt: T0 + 1 });
        const neither = linkFor(accountId, { target: "https://winter.example.com/" });
        await insertOk([bySlug, byTarget, neither]);
        await insertOk([linkFor(await newAccount(), { slug: uniqueSlug("summersale") })]); // another account's
        const ids = async (q: string) => (await store.listLinks(accountId, { limit: 10, q })).links.map((l) => l.id);
        expect(await ids("summersale")).toEqual([bySlug.id]);
        expect(await ids("SUMMER")).toEqual([bySlug.id, byTarget.id]);
        expect(await ids("shop.EXAMPLE")).toEqual([byTarget.id]);
        expect(await ids("autumn")).toEqual([]);
        expect(await ids("")).toHaveLength(3); // empty search: no filter
      });

      test("q takes LIKE wildcards (% and _) and backslashes literally", async () => {
        const accountId = await newAccount();
        const underscore = linkFor(accountId, { slug: uniqueSlug("a_b"), createdAt: T0 + 3 });
        const plain = linkFor(accountId, { slug: uniqueSlug("axb"), createdAt: T0 + 2 });
        const percent = linkFor(accountId, { target: "https://example.com/?off=50%25&x=50%", createdAt: T0 + 1 });
        const backslash = linkFor(accountId, { target: "https://example.com/a\\b" });
        await insertOk([underscore, plain, percent, backslash]);
        const ids = async (q: string) => (await store.listLinks(accountId, { limit: 10, q })).links.map((l) => l.id);
        expect(await ids("_")).toEqual([underscore.id]);
        expect(await ids("a_b")).toEqual([underscore.id]);
        expect(await ids("50%")).toEqual([percent.id]);
        expect(await ids("%")).toEqual([percent.id]);
        expect(await ids("a\\b")).toEqual([backslash.id]);
      });

      test("limit bounds the page", async () => {
        const accountId = await newAccount();
        await insertOk(Array.from({ length: 3 }, () => linkFor(accountId)));
        const page = await store.listLinks(accountId, { limit: 1 });
        expect(page.links).toHaveLength(1);
        expect(page.nextCursor).not.toBeNull();
      });
    });

    describe("clicks and stats", () => {
      async function newLink(over: Partial<LinkRecord> = {}): Promise<LinkRecord> {
        const link = linkFor(await newAccount(), over);
        await insertOk([link]);
        return link;
      }

      test("recorded clicks count as hits and roll up by device, browser, country, variant and hour", async () => {
        const link = await newLink({ hits: 10 });
        await store.recordClicks([
          click(link.id, { ts: T0 + 1_000, device: "desktop", browser: "Chrome", country: "US", variant: 0 }),
          click(link.id, { ts: T0 + 59 * 60_000, device: "mobile", browser: "Safari", country: "US", variant: 1 }),
          click(link.id, { ts: T0 + HOUR, device: "mobile", browser: "Safari", country: null, variant: 1 }),
          click(link.id, { ts: T0 + HOUR + 5, device: "mobile", browser: "Chrome", country: "DE", variant: null }),
          click(link.id, { ts: T0 + 3 * HOUR + 1, device: "tablet", browser: "Firefox", country: "DE", variant: 0 }),
        ]);
        expect((await store.getLinkById(link.id))?.hits).toBe(15);
        expect(await store.getStats(link.id, T0 + HOUR)).toEqual({
          total: 5,
          byDevice: { desktop: 1, mobile: 3, tablet: 1 },
          byBrowser: { Chrome: 2, Safari: 2, Firefox: 1 },
          byCountry: { US: 2, DE: 2, unknown: 1 }, // unknown country is reported under "unknown"
          byVariant: { "0": 2, "1": 2 }, // only clicks that were served an A/B variant
          hourly: [
            { hour: T0 + HOUR, clicks: 2 },
            { hour: T0 + 3 * HOUR, clicks: 1 },
          ],
        });
        // Totals cover all time; hourly starts at fromHour.
        const all = await store.getStats(link.id, 0);
        expect(all.total).toBe(5);
        expect(all.hourly).toEqual([
          { hour: T0, clicks: 2 },
          { hour: T0 + HOUR, clicks: 2 },
          { hour: T0 + 3 * HOUR, clicks: 1 },
        ]);
        expect((await store.getStats(link.id, T0 + 4 * HOUR)).hourly).toEqual([]);
      });

      test("clicks accumulate across batches", async () => {
        const link = await newLink();
        await store.recordClicks([click(link.id), click(link.id)]);
        await store.recordClicks([click(link.id)]);
        expect((await store.getLinkById(link.id))?.hits).toBe(3);
        const stats = await store.getStats(link.id, T0);
        expect(stats.total).toBe(3);
        expect(stats.hourly).toEqual([{ hour: T0, clicks: 3 }]);
      });

      test("a redelivered batch is written once, whole: its clicks are neither lost nor counted twice", async () => {
        const link = await newLink();
        const b1 = [click(link.id, { batch: "b1" }), click(link.id, { batch: "b1" }), click(link.id, { batch: "b1", ts: T0 + HOUR })];
        await store.recordClicks(b1);
        await store.recordClicks(b1);
        // Delivered again beside a new batch: only the new one counts.
        await store.recordClicks([...b1, click(link.id, { batch: "b2" })]);
        expect((await store.getLinkById(link.id))?.hits).toBe(4);
        const stats = await store.getStats(link.id, 0);
        expect(stats.total).toBe(4);
        expect(stats.hourly).toEqual([{ hour: T0, clicks: 3 }, { hour: T0 + HOUR, clicks: 1 }]);
        expect((await rawClicksOf(link.id)).map((c) => c.batch)).toEqual(["b1", "b1", "b1", "b2"]);
      });

      test("a batch with clicks of several links is kept per link; redelivered, it counts for none of them again", async () => {
        const a = await newLink();
        const b = await newLink();
        const batch = [click(a.id, { batch: "mixed" }), click(b.id, { batch: "mixed" }), click(a.id, { batch: "mixed" })];
        await store.recordClicks(batch);
        await store.recordClicks(batch);
        expect((await store.getLinkById(a.id))?.hits).toBe(2);
        expect((await store.getLinkById(b.id))?.hits).toBe(1);
        expect((await rawClicksOf(a.id)).length).toBe(2);
        expect(await rawClicksOf(b.id)).toEqual([{ ...batch[1]! }]);
      });

      test("many batches in one call: new ones are all counted, known ones among them are not", async () => {
        const link = await newLink();
        const batchOf = (name: string, n: number) => Array.from({ length: n }, () => click(link.id, { batch: name }));
        const first = Array.from({ length: 60 }, (_, i) => batchOf(`f${i}`, 3));
        await store.recordClicks(first.flat());
        expect((await store.getStats(link.id, 0)).total).toBe(180);
        // 40 known batches interleaved with 50 new ones, each batch's clicks together.
        const later = Array.from({ length: 50 }, (_, i) => batchOf(`l${i}`, 2));
        const mixed = later.flatMap((b, i) => (i < 40 ? [...first[i]!, ...b] : b));
        await store.recordClicks(mixed);
        expect((await store.getLinkById(link.id))?.hits).toBe(280);
        expect((await store.getStats(link.id, 0)).total).toBe(280);
      });

      test("rawClicks gives back every stored click with its fields, batch by batch, oldest first", async () => {
        const link = await newLink();
        const early = [
          click(link.id, { batch: "early", ts: T0 + 5, country: "US", device: "mobile", browser: "Safari", os: "iOS", referrer: "https://news.example/a?b=1", variant: 1 }),
          click(link.id, { batch: "early", ts: T0 + 9, country: null, device: "desktop", browser: "Firefox", os: "Linux", referrer: null, variant: null }),
        ];
        const late = [click(link.id, { batch: "late", ts: T0 + HOUR, country: "DE", referrer: "\u00e9t\u00e9 \"quoted\"", variant: 0 })];
        await store.recordClicks(late);
        await store.recordClicks(early);
        await store.recordClicks([click(uid(), { batch: "orphan" })]); // unknown link: nothing stored
        expect(await rawClicksOf(link.id)).toEqual([...early, ...late]);
      });

      test("raw clicks of several links and batches written together keep every character of their texts", async () => {
        const [a, b] = [await newLink(), await newLink()];
        const odd = ['say "hi"', "back\\slash\\", "line\nbreak\ttab", "ctl\u0001\u0002", "{braces},[commas]", "NULL", "", "\u00e9t\u00e9 \ud83d\ude80"];
        const clicks = odd.flatMap((referrer, i) => [
          click(a.id, { batch: `m${i % 3}`, ts: T0 + i, referrer, browser: `B "${i}"` }),
          click(b.id, { batch: `m${i % 3}`, ts: T0 + i, referrer, os: `os\\${i}` }),
        ]);
        await store.recordClicks(clicks);
        const byBatchThenTime = (x: StoredClick, y: StoredClick) => x.batch.localeCompare(y.batch) || x.ts - y.ts;
        expect((await rawClicksOf(a.id)).sort(byBatchThenTime)).toEqual(clicks.filter((c) => c.linkId === a.id).sort(byBatchThenTime));
        expect((await rawClicksOf(b.id)).sort(byBatchThenTime)).toEqual(clicks.filter((c) => c.linkId === b.id).sort(byBatchThenTime));
      });

      test("the same batch delivered twice concurrently is counted once", async () => {
        const link = await newLink();
        const batch = Array.from({ length: 20 }, () => click(link.id));
        await Promise.all([store.recordClicks(batch), store.recordClicks(batch)]);
        expect((await store.getLinkById(link.id))?.hits).toBe(20);
        expect((await store.getStats(link.id, 0)).total).toBe(20);
      });

      test("clicks of deleted or unknown links are dropped without failing the batch", async () => {
        const kept = await newLink();
        const gone = await newLink();
        await store.deleteLink(gone.id);
        await store.recordClicks([click(gone.id), click(kept.id), click(uid()), click(kept.id)]);
        expect((await store.getLinkById(kept.id))?.hits).toBe(2);
        expect((await store.getStats(gone.id, 0)).total).toBe(0);
      });

      test("recordClicks of nothing is a no-op", async () => {
        await store.recordClicks([]);
      });

      test("stats of a link without clicks are zeros", async () => {
        const link = await newLink();
        const empty = { total: 0, byDevice: {}, byBrowser: {}, byCountry: {}, byVariant: {}, hourly: [] };
        expect(await store.getStats(link.id, 0)).toEqual(empty);
        expect(await store.getStats(uid(), 0)).toEqual(empty);
      });

      test("stats are per link", async () => {
        const a = await newLink();
        const b = await newLink();
        await store.recordClicks([click(a.id), click(b.id), click(b.id)]);
        expect((await store.getStats(a.id, 0)).total).toBe(1);
        expect((await store.getStats(b.id, 0)).total).toBe(2);
      });

      test("a consumer-sized batch of 2,000 clicks is written quickly and summed exactly", async () => {
        const link = await newLink();
        const devices = ["desktop", "mobile", "tablet"];
        const batch = Array.from({ length: 2000 }, (_, i) =>
          click(link.id, { ts: T0 + (i % 48) * HOUR + i, device: devices[i % 3]!, country: i % 5 ? "FR" : null }),
        );
        const started = performance.now();
        await store.recordClicks(batch);
        expect(performance.now() - started).toBeLessThan(3000);
        const stats = await store.getStats(link.id, T0 + 24 * HOUR);
        expect(stats.total).toBe(2000);
        expect(stats.byCountry).toEqual({ FR: 1600, unknown: 400 });
        expect(stats.byDevice.desktop).toBe(667);
        expect(stats.hourly).toHaveLength(24);
        const since = batch.filter((c) => c.ts >= T0 + 24 * HOUR).length;
        expect(stats.hourly.reduce((s, h) => s + h.clicks, 0)).toBe(since);
        expect((await store.getLinkById(link.id))?.hits).toBe(2000);
      });
    });

    describe("operations: readiness, export and import", () => {
      /** Everything exportAll yields, in order. */
      async function exportAll(s: Store = store): Promise<ExportRecord[]> {
        const out: ExportRecord[] = [];
        for await (const r of s.exportAll()) out.push(r);
        return out;
      }

      /** An account, one of its keys, a link with every field and clicks in two hours, one of them unknown. */
      async function populated() {
        const accountId = await newAccount();
        const key: ApiKeyRecord = {
          id: uid(), accountId, name: "export", keyHash: `hash-${uid()}`, prefix: "ck_Exp0", createdAt: T0,
          lastUsedAt: T0 + 5, revokedAt: null,
        };
        await store.createApiKey(key);
        const link = fullLinkFor(accountId, { hits: 0 });
        await insertOk([link]);
        await store.recordClicks([
          click(link.id, { ts: T0 + 1, country: "US", variant: 0 }),
          click(link.id, { ts: T0 + 2, country: "US", variant: 0 }),
          click(link.id, { ts: T0 + HOUR, country: null, variant: null, device: "mobile", browser: "Safari" }),
        ]);
        return { accountId, key, link: (await store.getLinkById(link.id))! };
      }

      test("pendingMigrations() is 0 once migrated", async () => {
        expect(await store.pendingMigrations()).toBe(0);
      });

      test("exportAll yields every account, key, link and rollup with every field, owners first", async () => {
        const { accountId, key, link } = await populated();
        const records = await exportAll();
        const order = ["account", "apiKey", "link", "rollup"];
        const ranks = records.map((r) => order.indexOf(r.type));
        expect(ranks).toEqual([...ranks].sort((a, b) => a - b));

        expect(records).toContainEqual({ type: "account", data: (await store.getAccount(accountId))! });
        expect(records).toContainEqual({ type: "apiKey", data: key });
        expect(records).toContainEqual({ type: "link", data: link });
        expect(link.hits).toBe(3);
        const rollups = records.filter((r) => r.type === "rollup" && r.data.linkId === link.id).map((r) => r.data);
        expect(rollups).toHaveLength(2);
        expect(rollups).toContainEqual({
          linkId: link.id, hour: T0, device: "desktop", browser: "Chrome", country: "US", variant: 0, clicks: 2,
        });
        expect(rollups).toContainEqual({
          linkId: link.id, hour: T0 + HOUR, device: "mobile", browser: "Safari", country: null, variant: null, clicks: 1,
        });
      });

      test("importRecords writes another instance's records (tags indexed, stats intact) and a re-import skips them all", async () => {
        const account = { id: uid(), email: `Import-${uid()}@Example.com`, passwordHash: "$argon2id$x", createdAt: T0 };
        const key: ApiKeyRecord = {
          id: uid(), accountId: account.id, name: "moved", keyHash: `hash-${uid()}`, prefix: "ck_Mov0", createdAt: T0,
          lastUsedAt: null, revokedAt: T0 + 9,
        };
        const link = fullLinkFor(account.id, { hits: 3, tags: ["moved", "twice"] });
        const batch: ExportRecord[] = [
          { type: "account", data: account },
          { type: "apiKey", data: key },
          { type: "link", data: link },
          { type: "rollup", data: { linkId: link.id, hour: T0, device: "desktop", browser: "Chrome", country: "US", variant: 1, clicks: 2 } },
          { type: "rollup", data: { linkId: link.id, hour: T0 + HOUR, device: "mobile", browser: "Safari", country: null, variant: null, clicks: 1 } },
        ];
        const all = (inserted: number, skipped: number) => ({ inserted, skipped });
        expect(await store.importRecords(batch)).toEqual({
          account: all(1, 0), apiKey: all(1, 0), link: all(1, 0), rollup: all(2, 0),
        });

        expect(await store.getAccount(account.id)).toEqual({ ...account, email: account.email.toLowerCase() });
        expect(await store.findApiKeyByHash(key.keyHash)).toEqual(key);
        expect(await store.getLinkById(link.id)).toEqual(link);
        expect((await store.listLinks(account.id, { limit: 10, tag: "twice" })).links.map((l) => l.id)).toEqual([link.id]);
        const stats = await store.getStats(link.id, 0);
        expect(stats.total).toBe(3);
        expect(stats.byCountry).toEqual({ US: 2, unknown: 1 });
        expect(stats.byVariant).toEqual({ "1": 2 });

        expect(await store.importRecords(batch)).toEqual({
          account: all(0, 1), apiKey: all(0, 1), link: all(0, 1), rollup: all(0, 2),
        });
        expect((await store.getStats(link.id, 0)).total).toBe(3);
        expect((await store.getLinkById(link.id))?.hits).toBe(3);
      });

      test("records whose unique value is taken or whose owner is missing are skipped, without failing the batch", async () => {
        const { accountId, link: existing } = await populated();
        const existingAccount = (await store.getAccount(accountId))!;
        const clash = { ...existingAccount, id: uid() }; // same email, another id
        const orphanKey: ApiKeyRecord = {
          id: uid(), accountId: clash.id, name: "orphan", keyHash: `hash-${uid()}`, prefix: "ck_Orp0", createdAt: T0,
          lastUsedAt: null, revokedAt: null,
        };
        const sameSlug = linkFor(accountId, { slug: existing.slug }); // another id, slug taken on the domain
        const fresh = linkFor(accountId);
        const result = await store.importRecords([
          { type: "account", data: clash },
          { type: "apiKey", data: orphanKey },
          { type: "link", data: sameSlug },
          { type: "link", data: fresh },
          { type: "rollup", data: { linkId: sameSlug.id, hour: T0, device: "desktop", browser: "Chrome", country: "US", variant: null, clicks: 5 } },
          { type: "rollup", data: { linkId: fresh.id, hour: T0, device: "desktop", browser: "Chrome", country: "US", variant: null, clicks: 4 } },
        ]);
        expect(result).toEqual({
          account: { inserted: 0, skipped: 1 },
          apiKey: { inserted: 0, skipped: 1 },
          link: { inserted: 1, skipped: 1 },
          rollup: { inserted: 1, skipped: 1 },
        });
        expect(await store.getAccount(clash.id)).toBeNull();
        expect(await store.findApiKeyByHash(orphanKey.keyHash)).toBeNull();
        expect(await store.getLink(DOMAIN, existing.slug)).toEqual(existing);
        expect(await store.getLinkById(fresh.id)).toEqual(fresh);
        expect((await store.getStats(fresh.id, 0)).total).toBe(4);
        expect((await store.getStats(existing.id, 0)).total).toBe(3);
      });

      test("an export in progress does not block writes to the same database", async () => {
        const { link } = await populated();
        const reader = await open();
        const exporting = exportAll(reader);
        await store.recordClicks([click(link.id)]);
        const records = await exporting;
        expect(records.some((r) => r.type === "link" && r.data.id === link.id)).toBe(true);
      });
    });
  });
}
