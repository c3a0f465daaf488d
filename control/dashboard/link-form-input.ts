/**
 * The link form ⇄ the API's input (design §3.2). The form posts strings; this turns them into exactly the
 * JSON a REST client would send, so the service validates both the same way and the messages match.
 * Pure: no I/O, no page markup.
 */
import type { LinkObject } from "../../shared/schemas.ts";

export interface RuleRow { kind: string; match: string; url: string }
export interface AbRow { url: string; weight: string }

/** What the form shows: every field as the text in its input. */
export interface LinkFormValues {
  url: string;
  slug: string;
  status: string;
  expiresAt: string;
  startsAt: string;
  maxHits: string;
  password: string;
  removePassword: boolean;
  hasPassword: boolean;
  tags: string;
  folder: string;
  utmSource: string;
  utmMedium: string;
  utmCampaign: string;
  rules: RuleRow[];
  abUrls: AbRow[];
  webhookUrl: string;
  serveOg: boolean;
  ogTitle: string;
  ogDescription: string;
  ogImageUrl: string;
}

export const EMPTY_FORM: LinkFormValues = {
  url: "", slug: "", status: "active", expiresAt: "", startsAt: "", maxHits: "", password: "", removePassword: false,
  hasPassword: false, tags: "", folder: "", utmSource: "", utmMedium: "", utmCampaign: "", rules: [], abUrls: [],
  webhookUrl: "", serveOg: false, ogTitle: "", ogDescription: "", ogImageUrl: "",
};

/** ISO date → the value of a datetime-local input, in UTC (the form labels its dates as UTC). */
export function toLocalInput(iso: string | null): string {
  return iso ? iso.slice(0, 16) : "";
}

/** A datetime-local value is read as UTC; a value that already names its zone is left alone. */
export function fromLocalInput(value: string): string {
  const v = value.trim();
  if (!v) return v;
  return /(?:Z|[+-]\d{2}:?\d{2})$/i.test(v) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(v) ? v : `${v}Z`;
}

export function valuesFromLink(link: LinkObject): LinkFormValues {
  return {
    url: link.target, slug: link.slug, status: link.status, expiresAt: toLocalInput(link.expiresAt),
    startsAt: toLocalInput(link.startsAt), maxHits: link.maxHits === null ? "" : String(link.maxHits), password: "",
    removePassword: false, hasPassword: link.hasPassword, tags: link.tags.join(", "), folder: link.folder ?? "",
    utmSource: link.utmSource ?? "", utmMedium: link.utmMedium ?? "", utmCampaign: link.utmCampaign ?? "",
    rules: link.rules.map((r) => ({ kind: r.kind, match: r.match, url: r.url })),
    abUrls: link.abUrls.map((a) => ({ url: a.url, weight: String(a.weight) })),
    webhookUrl: link.webhookUrl ?? "", serveOg: link.serveOg, ogTitle: link.ogTitle ?? "",
    ogDescription: link.ogDescription ?? "", ogImageUrl: link.ogImageUrl ?? "",
  };
}

/** Rows come as repeated names (rule_kind, rule_match, rule_url …) in document order; blank rows are dropped. */
export function valuesFromForm(form: URLSearchParams): LinkFormValues {
  const s = (name: string) => form.get(name) ?? "";
  const kinds = form.getAll("rule_kind");
  const matches = form.getAll("rule_match");
  const ruleUrls = form.getAll("rule_url");
  const rules: RuleRow[] = [];
  for (let i = 0; i < Math.max(matches.length, ruleUrls.length); i++) {
    const row = { kind: kinds[i] ?? "country", match: (matches[i] ?? "").trim(), url: (ruleUrls[i] ?? "").trim() };
    if (row.match || row.url) rules.push(row);
  }
  const abUrlsIn = form.getAll("ab_url");
  const weights = form.getAll("ab_weight");
  const abUrls: AbRow[] = [];
  for (let i = 0; i < Math.max(abUrlsIn.length, weights.length); i++) {
    const row = { url: (abUrlsIn[i] ?? "").trim(), weight: (weights[i] ?? "").trim() };
    if (row.url || row.weight) abUrls.push(row);
  }
  return {
    url: s("url").trim(), slug: s("slug").trim(), status: s("status") || "active", expiresAt: s("expiresAt"),
    startsAt: s("startsAt"), maxHits: s("maxHits").trim(), password: s("password"), removePassword: form.has("removePassword"),
    hasPassword: form.get("hasPassword") === "1", tags: s("tags"), folder: s("folder"), utmSource: s("utmSource"),
    utmMedium: s("utmMedium"), utmCampaign: s("utmCampaign"), rules, abUrls, webhookUrl: s("webhookUrl").trim(),
    // Browsers send a textarea's line breaks as CRLF; the API keeps what a REST client would send.
    serveOg: form.has("serveOg"), ogTitle: s("ogTitle"), ogDescription: s("ogDescription").replaceAll("\r\n", "\n"), ogImageUrl: s("ogImageUrl").trim(),
  };
}

/** A number when the text is one (so the schema can judge its range), else the text (so it says "Expected integer"). */
function numberOrText(text: string): number | string {
  const n = Number(text);
  return text !== "" && Number.isFinite(n) ? n : text;
}

const rulesInput = (rows: RuleRow[]) => rows.map((r) => ({ kind: r.kind, match: r.match, url: r.url }));
const abInput = (rows: AbRow[]) => rows.map((r) => ({ url: r.url, weight: numberOrText(r.weight) }));

/** Fields create and update both send. Empty addresses become null: the schema wants a URL or null there. */
function common(v: LinkFormValues, clear: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (key: string, value: unknown, empty: boolean) => {
    if (!empty) out[key] = value;
    else if (clear) out[key] = key === "tags" ? "" : null;
  };
  put("status", v.status, false);
  put("expiresAt", fromLocalInput(v.expiresAt), !v.expiresAt.trim());
  put("startsAt", fromLocalInput(v.startsAt), !v.startsAt.trim());
  put("maxHits", numberOrText(v.maxHits), !v.maxHits);
  put("tags", v.tags, !v.tags.trim());
  for (const k of ["folder", "utmSource", "utmMedium", "utmCampaign", "ogTitle", "ogDescription"] as const) put(k, v[k], !v[k].trim());
  put("webhookUrl", v.webhookUrl, !v.webhookUrl);
  put("ogImageUrl", v.ogImageUrl, !v.ogImageUrl);
  put("rules", rulesInput(v.rules), !v.rules.length);
  put("abUrls", abInput(v.abUrls), !v.abUrls.length);
  out.serveOg = v.serveOg;
  return out;
}

/** POST /api/v1/links body: blank fields are left out, as a REST client would. */
export function createInputFrom(v: LinkFormValues): Record<string, unknown> {
  const out: Record<string, unknown> = { url: v.url, ...common(v, false) };
  if (v.slug) out.slug = v.slug;
  if (v.password) out.password = v.password;
  return out;
}

/** Each form field and the PATCH field it sets. */
const UPDATE_FIELDS: [keyof LinkFormValues, string][] = [
  ["url", "targetUrl"], ["status", "status"], ["expiresAt", "expiresAt"], ["startsAt", "startsAt"], ["maxHits", "maxHits"],
  ["tags", "tags"], ["folder", "folder"], ["utmSource", "utmSource"], ["utmMedium", "utmMedium"], ["utmCampaign", "utmCampaign"],
  ["rules", "rules"], ["abUrls", "abUrls"], ["webhookUrl", "webhookUrl"], ["serveOg", "serveOg"], ["ogTitle", "ogTitle"],
  ["ogDescription", "ogDescription"], ["ogImageUrl", "ogImageUrl"],
];

/** Form values compared as a person reads them: surrounding spaces and line-break style do not count. */
const asRead = (_key: string, v: unknown) => (typeof v === "string" ? v.trim().replaceAll("\r\n", "\n") : v);
const sameValue = (a: unknown, b: unknown) => JSON.stringify(a, asRead) === JSON.stringify(b, asRead);

/**
 * PATCH body: a blank field clears it. Only fields that differ from `shown` (what the form displayed) are sent,
 * so saving a form unchanged rewrites nothing: the form cannot show everything exactly (dates to the minute, tags
 * joined by commas), and an untouched field must keep its value. The password is the exception: blank keeps the
 * current one, "remove password" clears it.
 */
export function updateInputFrom(v: LinkFormValues, shown?: LinkFormValues): Record<string, unknown> {
  const out: Record<string, unknown> = { targetUrl: v.url, ...common(v, true) };
  if (shown) for (const [field, key] of UPDATE_FIELDS) if (sameValue(v[field], shown[field])) delete out[key];
  if (v.password) out.password = v.password;
  else if (v.removePassword) out.password = null;
  return out;
}
