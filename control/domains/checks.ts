/**
 * The ownership check of a custom domain (docs/domains.md): a DNS TXT record at `_clink-challenge.<host>` holding the
 * token, or a file at `http://<host>/.well-known/clink-challenge/<token>` holding it. The HTTP check is a request
 * the server makes to a host the caller names, so it goes through the webhooks' SSRF guard (private addresses
 * refused unless WEBHOOK_ALLOW_PRIVATE) and connects to the address the guard checked. Never throws: every outcome
 * is a result in words for the owner.
 */
import { resolveTxt as systemResolveTxt } from "node:dns/promises";
import { challengeOf, type DomainRecord } from "../../shared/domain.ts";
import { readBodyUpTo } from "../../shared/net/body.ts";
import { TimeoutError, withTimeout } from "../../shared/time.ts";
import { checkWebhookTarget, type ResolveHost } from "../../shared/webhooks/ssrf.ts";

export interface DomainChecks {
  /** TXT records of a name, each as its strings (node:dns/promises resolveTxt unless given). */
  resolveTxt?: (name: string) => Promise<string[][]>;
  /** The port of the HTTP check (80 unless given: tests serve the file on a free port). */
  httpPort?: number;
}

export interface CheckResult {
  ok: boolean;
  result: string;
}

const CHECK_TIMEOUT_MS = 5_000;
/** The file holds a token of some 30 characters; more than this is not the file. */
const MAX_FILE_BYTES = 1024;
const USER_AGENT = "clink-domain-check/1";

const DNS_MISSING = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN"]);

async function checkDns(d: DomainRecord, checks: DomainChecks): Promise<CheckResult> {
  const { name } = challengeOf({ ...d, method: "dns" }) as { name: string };
  let records: string[][];
  try {
    records = await withTimeout((checks.resolveTxt ?? systemResolveTxt)(name), CHECK_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof TimeoutError) return { ok: false, result: `DNS did not answer for ${name} within ${CHECK_TIMEOUT_MS / 1000} s` };
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && DNS_MISSING.has(code)) return { ok: false, result: `no TXT record at ${name}` };
    return { ok: false, result: `DNS lookup of ${name} failed${typeof code === "string" && /^[A-Z_]{1,32}$/.test(code) ? ` (${code})` : ""}` };
  }
  // A long TXT value comes back split into strings of up to 255 characters: joined, it is the value.
  if (records.some((r) => r.join("").trim() === d.token)) return { ok: true, result: `TXT record found at ${name}` };
  if (records.length === 0) return { ok: false, result: `no TXT record at ${name}` };
  return { ok: false, result: `${records.length} TXT record${records.length === 1 ? "" : "s"} at ${name}, none holding the token` };
}

async function checkHttp(d: DomainRecord, checks: DomainChecks, allowPrivate: boolean, resolveHost?: ResolveHost): Promise<CheckResult> {
  const url = new URL((challengeOf({ ...d, method: "http" }) as { url: string }).url);
  if (checks.httpPort !== undefined) url.port = String(checks.httpPort);
  const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    const target = await checkWebhookTarget(url.href, allowPrivate, resolveHost);
    if (!target.ok) return { ok: false, result: `refused: ${target.reason}` };
    const pinned = new URL(url);
    pinned.hostname = target.address.includes(":") ? `[${target.address}]` : target.address;
    const res = await fetch(pinned, { redirect: "manual", signal, headers: { host: url.host, "user-agent": USER_AGENT } });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => {});
      return { ok: false, result: `${url.href} answered HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}` };
    }
    const body = await readBodyUpTo(res, MAX_FILE_BYTES);
    if (body === null || new TextDecoder().decode(body).trim() !== d.token) return { ok: false, result: `${url.href} does not hold the token` };
    return { ok: true, result: `file found at ${url.href}` };
  } catch {
    return { ok: false, result: signal.aborted ? `no answer from ${url.host} within ${CHECK_TIMEOUT_MS / 1000} s` : `could not connect to ${url.host}` };
  }
}

/** Runs the domain's check now. */
export function checkDomain(d: DomainRecord, checks: DomainChecks, allowPrivate: boolean, resolveHost?: ResolveHost): Promise<CheckResult> {
  return d.method === "dns" ? checkDns(d, checks) : checkHttp(d, checks, allowPrivate, resolveHost);
}
