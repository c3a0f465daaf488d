/**
 * Realistic click traffic for the analytics benches (issue #20): who clicks (real User-Agent strings, crawlers
 * among them), from where (addresses the shipped GeoIP database places in many countries), coming from where
 * (referrers Zipf-distributed over ~200 hosts, many visits direct), how (a share through QR codes), and which
 * links (spread evenly, or Zipf-distributed). Deterministic for a seed, so runs compare.
 */
import { openCountryLookup } from "../../shared/facts/geo.ts";
import type { ClickEvent } from "../../shared/ports.ts";
import { rng } from "./stats.ts";

/** User-Agents seen on a typical public link, with rough shares (%); crawlers and scripts last. */
export const USER_AGENTS: [ua: string, weight: number][] = [
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", 18],
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36", 5],
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51", 5],
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0", 3],
  ["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", 6],
  ["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15", 4],
  ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0", 1],
  ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", 1.5],
  ["Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", 0.8],
  ["Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", 0.7],
  ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1", 14],
  ["Mozilla/5.0 (iPhone; CPU iPhone OS 16_7_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1", 3],
  ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1", 2],
  ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 327.0.0.0.0 (iPhone15,2; iOS 17_4; en_US)", 2],
  ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/21E219 [FBAN/FBIOS;FBAV/458.0.0.40.109;FBBV/585473227;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]", 1.5],
  ["Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", 2],
  ["Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36", 12],
  ["Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36", 2],
  ["Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36", 3],
  ["Mozilla/5.0 (Linux; Android 13; M2101K6G) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 OPR/82.0.4227.80257", 0.5],
  ["Mozilla/5.0 (Linux; Android 14; SM-A546B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/460.0.0.48.109;]", 1.5],
  ["Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", 0.5],
  ["Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", 0.8],
  ["Mozilla/5.0 (Linux; U; Android 12; en-US; RMX3363 Build/RKQ1.211119.001) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/100.0.4896.58 UCBrowser/13.4.0.1306 Mobile Safari/537.36", 0.4],
  ["Mozilla/5.0 (SMART-TV; Linux; Tizen 7.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/5.0 Chrome/94.0.4606.31 TV Safari/537.36", 0.2],
  ["Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko)", 0.1],
  ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 1.5],
  ["Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 0.6],
  ["facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", 1.2],
  ["Twitterbot/1.0", 0.8],
  ["Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", 0.6],
  ["Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", 0.4],
  ["WhatsApp/2.23.20.0", 0.6],
  ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", 0.3],
  ["Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", 0.3],
  ["curl/8.5.0", 0.3],
  ["python-requests/2.31.0", 0.3],
];

const BIG_REFERRERS = [
  "www.google.com", "t.co", "l.facebook.com", "www.linkedin.com", "www.reddit.com", "news.ycombinator.com", "l.instagram.com",
  "www.youtube.com", "www.bing.com", "duckduckgo.com", "mail.google.com", "outlook.live.com", "app.slack.com", "discord.com",
  "web.whatsapp.com", "lm.facebook.com", "www.google.de", "www.google.co.uk", "out.reddit.com", "m.facebook.com", "teams.microsoft.com",
  "www.producthunt.com", "medium.com", "substack.com", "github.com", "stackoverflow.com", "www.tiktok.com", "www.pinterest.com",
  "search.yahoo.com", "yandex.ru", "www.baidu.com", "news.google.com", "flipboard.com", "feedly.com", "lobste.rs", "mastodon.social",
  "bsky.app", "www.threads.net", "telegram.org", "web.telegram.org",
];
/** ~200 referring hosts: the big ones, then a long tail of blogs and newsletters. */
export const REFERRER_HOSTS = [...BIG_REFERRERS, ...Array.from({ length: 200 - BIG_REFERRERS.length }, (_, i) => `blog${i}.example-news.net`)];
/** Share of clicks with no Referer (typed, apps, QR codes, privacy settings). */
const DIRECT_SHARE = 0.35;
/** Share of clicks that arrive through a QR code clink made. */
const QR_SHARE = 0.08;

/** Samples index i in [0, n) with weight 1/(i+1)^s by binary search over the cumulative weights. */
export function zipfSampler(n: number, s: number): (u: number) => number {
  const cumulative = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) cumulative[i] = acc += 1 / Math.pow(i + 1, s);
  return (u) => {
    const x = u * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Samples an index of `weights` by binary search (weights need not sum to 1). */
export function weightedSampler(weights: number[]): (u: number) => number {
  const z = new Float64Array(weights.length);
  let acc = 0;
  weights.forEach((w, i) => (z[i] = acc += w));
  return (u) => {
    const x = u * acc;
    let lo = 0;
    let hi = weights.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (z[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const reserved = (a: number, b: number) =>
  a === 0 || a === 10 || a === 127 || a >= 224 || (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168);

/**
 * `n` public IPv4 addresses the shipped GeoIP database places in a country, drawn at random (so countries come
 * in proportion to their address space: the US, China and Europe first, then a long tail), and how many
 * countries they cover.
 */
export async function placedAddresses(n: number, seed = 7): Promise<{ addresses: string[]; countries: number }> {
  const lookup = await openCountryLookup();
  const random = rng(seed);
  const addresses: string[] = [];
  const countries = new Set<string>();
  while (addresses.length < n) {
    const a = Math.floor(random() * 256);
    const b = Math.floor(random() * 256);
    if (reserved(a, b)) continue;
    const ip = `${a}.${b}.${Math.floor(random() * 256)}.${1 + Math.floor(random() * 254)}`;
    const country = lookup(ip);
    if (!country) continue;
    countries.add(country);
    addresses.push(ip);
  }
  return { addresses, countries: countries.size };
}

export interface TrafficOptions {
  /** The links' ids, and which link each click goes to. */
  linkIds: string[];
  pickLink: (i: number, random: () => number) => number;
  addresses: string[];
  seed?: number;
}

/** Links with A/B destinations (every 5th) and rules (every 7th), as a link's own settings would make them. */
const hasAb = (link: number) => link % 5 === 0;
const hasRules = (link: number) => link % 7 === 0;

/** Makes ClickEvents as the redirector queues them, click `i` of the run at `ts`. */
export function clickMaker(o: TrafficOptions): (i: number, ts: number) => ClickEvent {
  const random = rng(o.seed ?? 11);
  const ua = weightedSampler(USER_AGENTS.map(([, w]) => w));
  const referrer = zipfSampler(REFERRER_HOSTS.length, 1.1);
  // Returning visitors: a few addresses click often, most once.
  const address = zipfSampler(o.addresses.length, 0.6);
  return (i, ts) => {
    const link = o.pickLink(i, random);
    const host = random() < DIRECT_SHARE ? null : REFERRER_HOSTS[referrer(random())]!;
    const r = random();
    return {
      id: `c${i}`,
      linkId: o.linkIds[link]!,
      ts,
      ua: USER_AGENTS[ua(random())]![0],
      ip: o.addresses[address(random())]!,
      country: null,
      referrer: host === null ? null : `https://${host}/${Math.floor(r * 50)}`,
      variant: hasAb(link) ? (r < 0.7 ? 0 : 1) : null,
      rule: hasRules(link) && r < 0.4 ? Math.floor(r * 5) % 2 : null,
      qr: random() < QR_SHARE,
    };
  };
}
