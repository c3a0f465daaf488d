/**
 * What every role suite of the Store contract shares: fixtures (fixed instants, links, clicks) and the store
 * under test, opened and migrated once per adapter run. Each test works under its own fresh account and unique
 * slugs, so tests are independent of each other and of their order.
 *
 * `make` must return a NEW store instance on the SAME test database each time it is called (the suites open
 * several to test concurrent migration and that data is visible from a second connection).
 * `cleanup` runs after every store has been closed (e.g. drop the test schema, delete the file).
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { newLinkRecord, type LinkRecord } from "../../shared/link.ts";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { Store, StoredClick } from "../../shared/ports.ts";

export const HOUR = 3_600_000;
/** A fixed, hour-aligned instant so expectations do not depend on the clock. */
export const T0 = Date.UTC(2030, 0, 1, 12);
export const DOMAIN = "sho.rt";

export const uid = () => crypto.randomUUID();
let seq = 0;
export const uniqueSlug = (prefix = "s") => `${prefix}${(++seq).toString(36)}${uid().slice(0, 8)}`;

export function linkFor(accountId: string, over: Partial<LinkRecord> = {}): LinkRecord {
  const identity = { id: uid(), accountId, domain: DOMAIN, slug: uniqueSlug(), target: "https://example.com/landing", createdAt: T0 };
  return { ...newLinkRecord(identity), ...over };
}

/** A link with every optional field set, to prove each column round-trips. */
export function fullLinkFor(accountId: string, over: Partial<LinkRecord> = {}): LinkRecord {
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
    expiredUrl: "https://example.com/ended?from=clink",
    externalId: `crm:${uid()}`,
    webhookPausedAt: T0 - 2 * HOUR,
    webhookPausedReason: "20 deliveries in a row failed over 12 minutes; the last: answered HTTP 500.",
    ...over,
  });
}

/** Every dimension null. */
export const NO_DIMS: ClickDims = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims;

/** A click in a batch of its own unless `over.batch` names one; `dims` are merged over a desktop Chrome click from the US. */
export function click(linkId: string, over: Partial<Omit<StoredClick, "dims">> & { dims?: Partial<ClickDims> } = {}): StoredClick {
  const { dims, ...rest } = over;
  return {
    batch: uid(),
    linkId,
    ts: T0 + 60_000,
    dims: { ...NO_DIMS, country: "US", device: "desktop", browser: "Chrome", os: "Windows", via: "link", ...dims },
    bot: false,
    firstVisit: false,
    referrerUrl: null,
    ...rest,
  };
}

/** Everything an async iterable yields. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The rejection of `p`; fails the test when `p` resolves. */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to reject, but it resolved");
}

/** The store under test and the helpers the role suites build on; `store` is set once `beforeAll` has run. */
export interface StoreContext {
  readonly store: Store;
  /** Another store on the same database, closed after the run. */
  open(): Promise<Store>;
  /** A fresh account; returns its id. */
  newAccount(): Promise<string>;
  insertOk(links: LinkRecord[]): Promise<void>;
  /** Every raw click of the link in the log. */
  rawClicksOf(linkId: string): Promise<StoredClick[]>;
  /** The link's clicks as its rollup cells count them (what stats read). */
  clicksOf(linkId: string): Promise<number>;
}

/** Opens and migrates the store before the enclosing describe's tests, closes every store opened after them. */
export function storeContext(make: () => Promise<Store>, cleanup?: () => Promise<void>): StoreContext {
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

  const rawClicksOf = (linkId: string) => collect(store.readClickLog({ linkId }, 0, Number.MAX_SAFE_INTEGER));

  async function clicksOf(linkId: string): Promise<number> {
    let n = 0;
    for await (const cell of store.readCells({ linkId }, 0, Number.MAX_SAFE_INTEGER)) n += cell.clicks;
    return n;
  }

  return {
    get store() {
      return store;
    },
    open,
    newAccount,
    insertOk,
    rawClicksOf,
    clicksOf,
  };
}
