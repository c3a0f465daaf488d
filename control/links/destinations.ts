/**
 * A verified custom domain, anyone's, is never a link's destination, nor where a domain's root or unknown slugs
 * send visitors (issue #24): the redirector serves it, so the visitor would come back to a short address, the
 * link's own perhaps, and loop. The base host and OWN_HOSTS are
 * refused by the input rules (link-input.ts checkAddress), from configuration; custom domains change at run time,
 * so they are read from the store when a link is created or changed (never on the redirect path): one indexed
 * lookup per distinct destination host in a call, a bulk's 500 rows to one host asking once.
 */
import { invalidInput, type FieldError } from "../../shared/errors.ts";
import { destinationsOf, type LinkChanges } from "../../shared/link-input.ts";
import { parseIp } from "../../shared/net/ip.ts";
import type { Deps } from "../deps.ts";

/** Answers of one call, by hostname: whether it is a verified domain. */
export type ServedHostMemo = Map<string, Promise<boolean>>;

/**
 * The host of an address as domains are stored: the URL parser has lower-cased it and mapped an IDN to punycode;
 * trailing dots go and the port does not matter (the redirector serves a domain's Host on any port). Null for an
 * address literal or a single label, which no domain is.
 */
function domainNameOf(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return null;
  }
  while (host.endsWith(".")) host = host.slice(0, -1);
  return host.includes(".") && !host.startsWith("[") && parseIp(host) === null ? host : null;
}

function isServed(deps: Deps, hostname: string, memo: ServedHostMemo): Promise<boolean> {
  let served = memo.get(hostname);
  if (served === undefined) memo.set(hostname, (served = deps.store.getDomainByHostname(hostname).then((d) => d?.state === "verified")));
  return served;
}

/**
 * The addresses on a verified custom domain (or on `self`, a domain whose own redirects these are, verified or not
 * yet), as field errors at their paths.
 */
export async function servedAddressErrors(
  deps: Deps, addresses: readonly { path: string; url: string }[], memo: ServedHostMemo = new Map(), self?: string,
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  for (const { path, url } of addresses) {
    const host = domainNameOf(url);
    if (host !== null && (host === self || (await isServed(deps, host, memo)))) errors.push(servedError(path, host));
  }
  return errors;
}

/**
 * servedAddressErrors for many rows at once (a bulk create): each distinct host looked up once, one after the other,
 * then every row checked without a promise of its own. The errors of each row, in the rows' order.
 */
export async function servedAddressErrorsOfRows(deps: Deps, rows: readonly (readonly { path: string; url: string }[])[]): Promise<FieldError[][]> {
  const hosts = rows.map((addresses) => addresses.map(({ url }) => domainNameOf(url)));
  const served = new Map<string, boolean>();
  for (const host of new Set(hosts.flat())) if (host !== null) served.set(host, (await deps.store.getDomainByHostname(host))?.state === "verified");
  return rows.map((addresses, i) => addresses.flatMap(({ path }, j) => {
    const host = hosts[i][j];
    return host !== null && served.get(host) ? [servedError(path, host)] : [];
  }));
}

const servedError = (path: string, host: string): FieldError => ({ path, message: `must not point to ${host}, a custom domain this service serves (the redirect would loop)` });

/** The destinations of these changes that are on a verified custom domain, as field errors. */
export function servedDomainErrors(deps: Deps, changes: LinkChanges, op: "create" | "update", memo: ServedHostMemo = new Map()): Promise<FieldError[]> {
  return servedAddressErrors(deps, destinationsOf(changes, op), memo);
}

/** Throws invalid_input naming each destination on a verified custom domain. */
export async function refuseServedDomains(deps: Deps, changes: LinkChanges, op: "create" | "update", memo?: ServedHostMemo): Promise<void> {
  const errors = await servedDomainErrors(deps, changes, op, memo);
  if (errors.length) throw invalidInput(errors);
}
