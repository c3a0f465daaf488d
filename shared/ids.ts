/** Identifiers, slugs, API keys and session tokens: everything random lives here. */
import { customAlphabet, urlAlphabet } from "nanoid";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const base62 = customAlphabet(BASE62, 32);
const slug7 = customAlphabet(urlAlphabet, 7);
const random14 = customAlphabet(BASE62, 14);

/** The creation time in 7 base62 digits (ms; fixed width until the year 2081), so ids sort by age as text. */
function timePrefix(ms: number): string {
  let s = "";
  for (let i = 0; i < 7; i++) {
    s = BASE62[ms % 62] + s;
    ms = Math.floor(ms / 62);
  }
  return s;
}

/**
 * Primary keys: 21 base62 characters, the creation time (7) then 14 random ones (~83 bits). Ids that grow with time
 * go in at the end of every index keyed by them, so a write dirties few pages: fully random ids sent each inserted
 * row to its own leaf page (a 500-link bulk create into a SQLite file of 60,000 links: 26 ms then, 10 ms now).
 */
export const newId = (): string => timePrefix(Date.now()) + random14();

/** Random slugs: 7 characters of nanoid's URL alphabet (design §3.2). */
export const randomSlug = (): string => slug7();

function checksum(body: string): string {
  let n = Bun.hash.crc32(body) >>> 0;
  let s = "";
  for (let i = 0; i < 6; i++) {
    s += BASE62[n % 62];
    n = Math.floor(n / 62);
  }
  return s;
}

/** `ck_` + 32 random base62 characters + a 6-character CRC32 checksum, so typos are refused without a lookup. */
export function newApiKey(): string {
  const body = base62();
  return `ck_${body}${checksum(body)}`;
}

const KEY_SHAPE = /^ck_([A-Za-z0-9]{32})([A-Za-z0-9]{6})$/;

export function isWellFormedApiKey(key: string): boolean {
  const m = KEY_SHAPE.exec(key);
  return m !== null && checksum(m[1]) === m[2];
}

export function sha256Hex(value: string): string {
  return new Bun.CryptoHasher("sha256").update(value).digest("hex");
}

export const keyDisplayPrefix = (key: string): string => key.slice(0, 7);

/** Session tokens and CSRF tokens: 32 base62 characters. */
export const newToken = (): string => base62();
