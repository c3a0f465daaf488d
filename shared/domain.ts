/**
 * The custom domain (issue #24), declared once: the stored record, the API's domain object and the create/update
 * inputs are TypeBox schemas here (types, validation and OpenAPI come from them), and the hostname rule that a
 * schema cannot express is `normaliseHostname`. A domain belongs to an account for now; hostnames are unique
 * across every account, so nobody can add a domain someone else has.
 */
import { domainToASCII } from "node:url";
import { Type as T, type Static } from "@sinclair/typebox";
import { listed, oneOf } from "./enums.ts";
import { parseIp } from "./net/ip.ts";

/** dns: a TXT record at `_clink-challenge.<host>`; http: a file at `http://<host>/.well-known/clink-challenge/<token>`. */
export const DOMAIN_METHODS = ["dns", "http"] as const;
export const DomainMethod = oneOf(DOMAIN_METHODS, { description: "How ownership is shown: dns (a TXT record) or http (a file on the host)." });
export type DomainMethod = Static<typeof DomainMethod>;

/** pending: not (or no longer) shown to be the owner's, serves nothing; verified: the last check passed, serves links. */
export const DOMAIN_STATES = ["pending", "verified"] as const;
export const DomainState = oneOf(DOMAIN_STATES, { description: "pending serves nothing; verified serves its links (the last check passed)." });
export type DomainState = Static<typeof DomainState>;

/** Where the TXT record lives and where the HTTP file is fetched. */
export const DNS_CHALLENGE_LABEL = "_clink-challenge";
export const HTTP_CHALLENGE_PATH = "/.well-known/clink-challenge/";

const Address = (description: string) =>
  T.Union([T.String({ minLength: 1, maxLength: 2048, format: "uri" }), T.Literal(""), T.Null()], { description: `${description} (http or https); null or "" removes it.` });
const NullableMillis = T.Union([T.Integer({ minimum: 0 }), T.Null()]);
const NullableString = T.Union([T.String(), T.Null()]);

/** The domain as stored (both SQL stores, shared/adapters/*\/domains.ts). */
export const DomainRecord = T.Object({
  id: T.String({ minLength: 1 }),
  accountId: T.String({ minLength: 1 }),
  /** Normalised (normaliseHostname): lower case, punycode, no trailing dot, no port. */
  hostname: T.String({ minLength: 1, maxLength: 253 }),
  method: DomainMethod,
  token: T.String({ minLength: 1 }),
  state: DomainState,
  /** The last check: when, whether it passed, and what it found in words (null before the first). */
  checkedAt: NullableMillis,
  checkOk: T.Union([T.Boolean(), T.Null()]),
  checkResult: NullableString,
  verifiedAt: NullableMillis,
  rootRedirect: NullableString,
  notFoundRedirect: NullableString,
  createdAt: T.Integer({ minimum: 0 }),
  updatedAt: T.Integer({ minimum: 0 }),
});
export type DomainRecord = Static<typeof DomainRecord>;

export const CreateDomainInput = T.Object(
  {
    hostname: T.String({ minLength: 1, maxLength: 300, description: "The domain, such as go.example.com (IDN allowed; stored as punycode)." }),
    method: T.Optional(DomainMethod),
    rootRedirect: T.Optional(Address("Where the domain's root (/) sends visitors")),
    notFoundRedirect: T.Optional(Address("Where unknown slugs on the domain send visitors")),
  },
  { additionalProperties: false, title: "CreateDomainInput" },
);
export type CreateDomainInput = Static<typeof CreateDomainInput>;

export const UpdateDomainInput = T.Object(
  {
    method: T.Optional(DomainMethod),
    rootRedirect: T.Optional(Address("Where the domain's root (/) sends visitors")),
    notFoundRedirect: T.Optional(Address("Where unknown slugs on the domain send visitors")),
  },
  { additionalProperties: false, minProperties: 1, title: "UpdateDomainInput" },
);
export type UpdateDomainInput = Static<typeof UpdateDomainInput>;

/** What the owner must publish: the TXT record, or the file and its content. */
export const DomainChallenge = T.Union([
  T.Object({ method: T.Literal("dns"), type: T.Literal("TXT"), name: T.String(), value: T.String() }),
  T.Object({ method: T.Literal("http"), url: T.String(), body: T.String() }),
]);

export const DomainObject = T.Object(
  {
    id: T.String(),
    hostname: T.String(),
    state: DomainState,
    method: DomainMethod,
    challenge: DomainChallenge,
    lastCheck: T.Union([T.Object({ at: T.String(), ok: T.Boolean(), result: T.String() }), T.Null()]),
    verifiedAt: T.Union([T.String(), T.Null()]),
    rootRedirect: NullableString,
    notFoundRedirect: NullableString,
    createdAt: T.String(),
    updatedAt: T.String(),
  },
  { title: "Domain" },
);
export type DomainObject = Static<typeof DomainObject>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The challenge of a domain: what its owner publishes for the check to find. */
export function challengeOf(d: Pick<DomainRecord, "hostname" | "method" | "token">): Static<typeof DomainChallenge> {
  return d.method === "dns"
    ? { method: "dns", type: "TXT", name: `${DNS_CHALLENGE_LABEL}.${d.hostname}`, value: d.token }
    : { method: "http", url: `http://${d.hostname}${HTTP_CHALLENGE_PATH}${d.token}`, body: d.token };
}

export function toDomainObject(d: DomainRecord): DomainObject {
  return {
    id: d.id, hostname: d.hostname, state: d.state, method: d.method, challenge: challengeOf(d),
    lastCheck: d.checkedAt === null ? null : { at: iso(d.checkedAt)!, ok: d.checkOk === true, result: d.checkResult ?? "" },
    verifiedAt: iso(d.verifiedAt), rootRedirect: d.rootRedirect, notFoundRedirect: d.notFoundRedirect,
    createdAt: iso(d.createdAt)!, updatedAt: iso(d.updatedAt)!,
  };
}

/** What a short address is made from: BASE_URL, and the base domain's links.domain (config.ts). */
export interface ShortBase {
  readonly baseUrl: string;
  readonly defaultDomain: string;
}

/**
 * The short address of `slug` on `domain`: under BASE_URL on the base domain, `https://<domain>/` on a custom one
 * (custom domains are served over HTTPS, Caddy's on-demand TLS: docs/domains.md). The one rule for every shortUrl:
 * the API's link (toLinkObject), bulk rows, analytics, event webhooks, the redirector's preview card and click webhooks.
 */
export const shortUrlOf = (base: ShortBase, domain: string, slug: string): string =>
  `${domain === base.defaultDomain ? base.baseUrl : `https://${domain}`}/${slug}`;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** Characters that make a host something else: a port, a path, credentials, a query, an address literal. */
const NOT_A_HOST = /[\s/\\:@?#[\]%]/;

/**
 * A hostname as stored and compared: lower case, IDN as punycode (`domainToASCII`, the WHATWG URL host parser),
 * one trailing dot dropped, and nothing but a name: no port, path, credentials or IP address (in any spelling
 * the URL parser reads as one, such as `0x7f.1`), at least two labels. Answers the name or what is wrong with it.
 */
export function normaliseHostname(raw: string): { ok: true; hostname: string } | { ok: false; message: string } {
  const trimmed = raw.trim();
  if (trimmed === "" || NOT_A_HOST.test(trimmed)) return { ok: false, message: "must be a host name only, such as go.example.com (no scheme, port or path)" };
  const ascii = domainToASCII(trimmed.endsWith(".") ? trimmed.slice(0, -1) : trimmed);
  if (ascii === "") return { ok: false, message: "is not a valid host name" };
  if (parseIp(ascii) !== null || /^[0-9.]+$/.test(ascii)) return { ok: false, message: "must be a name, not an IP address" };
  const labels = ascii.split(".");
  if (ascii.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l))) {
    return { ok: false, message: "must be a host name of at least two labels (letters, digits and -), such as go.example.com" };
  }
  return { ok: true, hostname: ascii };
}

/**
 * The host a request names, as the redirector compares it with domains: `authority` is the URL's host[:port]
 * (what the Host header said); lower case, port and one trailing dot dropped. Address literals stay as they are.
 */
export function requestHostname(authority: string): string {
  let host = authority.toLowerCase();
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const colon = host.lastIndexOf(":");
  if (colon >= 0) host = host.slice(0, colon);
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

export const describeMethods = listed(DOMAIN_METHODS);
