/**
 * The create/edit form covering every field of design §3.2, including the rule and A/B rows. Rows post as
 * repeated names (link-form-input.ts reads them back); without JavaScript two blank rows are always offered,
 * with it an "Add" button clones more.
 */
import type { FieldError } from "../../shared/errors.ts";
import { csrfField, errorsBox, esc, fieldErrors } from "./layout.ts";
import type { AbRow, LinkFormValues, RuleRow } from "./link-form-input.ts";

export interface LinkFormOptions {
  mode: "create" | "edit";
  values: LinkFormValues;
  csrf: string;
  error?: { detail: string; errors: FieldError[] };
  /** Edit mode: the link's webhook secret, shown so the owner can verify signatures. */
  webhookSecret?: string | null;
}

export const FIELD_LABELS: Record<string, string> = {
  "/url": "Destination URL", "/targetUrl": "Destination URL", "/slug": "Slug", "/status": "Status",
  "/expiresAt": "Expires at", "/startsAt": "Starts at", "/maxHits": "Click limit", "/password": "Password",
  "/tags": "Tags", "/folder": "Folder", "/utmSource": "UTM source", "/utmMedium": "UTM medium", "/utmCampaign": "UTM campaign",
  "/rules": "Rules", "/rules/*/kind": "Rule # kind", "/rules/*/match": "Rule # match", "/rules/*/url": "Rule # URL",
  "/abUrls": "A/B variants", "/abUrls/*/url": "Variant # URL", "/abUrls/*/weight": "Variant # weight",
  "/webhookUrl": "Webhook URL", "/serveOg": "Serve preview card", "/ogTitle": "Preview title",
  "/ogDescription": "Preview description", "/ogImageUrl": "Preview image URL",
};

const MAX_RULES = 50;
const MAX_AB = 10;
const BLANK_ROWS = 2;

type Errors = FieldError[];

function input(name: string, label: string, value: string, errors: Errors, o: { type?: string; hint?: string; attrs?: string; path?: string } = {}): string {
  const id = `f-${name}`;
  const hint = o.hint ? ` <span class="hint">${o.hint}</span>` : "";
  return `<div><label for="${id}">${label}${hint}</label><input id="${id}" name="${name}" type="${o.type ?? "text"}" value="${esc(value)}" ${o.attrs ?? ""}>${fieldErrors(errors, o.path ?? `/${name}`)}</div>`;
}

function rowErrors(errors: Errors, prefix: string, i: number, label: string): string {
  return errors
    .filter((e) => e.path.startsWith(`${prefix}/${i}/`))
    .map((e) => `<p class="err">${label} ${i + 1} ${esc(e.path.split("/").pop())}: ${esc(e.message)}</p>`)
    .join("");
}

function ruleRow(r: RuleRow, i: number, errors: Errors): string {
  const opt = (v: string, label: string) => `<option value="${v}"${r.kind === v ? " selected" : ""}>${label}</option>`;
  return `<div class="row"><select name="rule_kind" aria-label="Rule ${i + 1} kind">${opt("country", "Country")}${opt("device", "Device")}</select>
<input name="rule_match" value="${esc(r.match)}" maxlength="16" placeholder="US or mobile" aria-label="Rule ${i + 1} match">
<input name="rule_url" class="url" type="url" value="${esc(r.url)}" maxlength="2048" placeholder="https://…" aria-label="Rule ${i + 1} URL"></div>${rowErrors(errors, "/rules", i, "Rule")}`;
}

function abRow(a: AbRow, i: number, errors: Errors): string {
  return `<div class="row"><input name="ab_url" class="url" type="url" value="${esc(a.url)}" maxlength="2048" placeholder="https://…" aria-label="Variant ${i + 1} URL">
<input name="ab_weight" value="${esc(a.weight)}" inputmode="decimal" placeholder="weight" aria-label="Variant ${i + 1} weight"></div>${rowErrors(errors, "/abUrls", i, "Variant")}`;
}

function rows<T>(kind: string, items: T[], blank: T, max: number, render: (item: T, i: number) => string): string {
  const all = [...items];
  for (let i = 0; i < BLANK_ROWS && all.length < max; i++) all.push(blank);
  return `<div class="rows${kind === "ab" ? " ab" : ""}" data-rows="${kind}" data-max="${max}">${all.map(render).join("")}</div>
<button type="button" class="btn-small" data-add-row="${kind}">+ Add a row</button>`;
}

function passwordField(v: LinkFormValues, mode: string, errors: Errors): string {
  const hint = mode === "edit" && v.hasPassword ? "(set; leave blank to keep it)" : "(optional; visitors must enter it)";
  const remove = mode === "edit" && v.hasPassword
    ? `<label class="check"><input type="checkbox" name="removePassword" value="1"${v.removePassword ? " checked" : ""}>Remove the password</label>`
    : "";
  return `<div>${input("password", "Password", "", errors, { type: "password", hint, attrs: 'maxlength="200" autocomplete="new-password"' })}${remove}<input type="hidden" name="hasPassword" value="${v.hasPassword ? "1" : "0"}"></div>`;
}

export function linkForm(o: LinkFormOptions): string {
  const v = o.values;
  const errors = o.error?.errors ?? [];
  const edit = o.mode === "edit";
  const status = (s: string) => `<option value="${s}"${v.status === s ? " selected" : ""}>${s}</option>`;
  const slug = edit
    ? `<div><label>Slug</label><p class="mono">${esc(v.slug)}</p></div>`
    : input("slug", "Slug", v.slug, errors, { hint: "(optional; 3-40 of A-Z a-z 0-9 - _)", attrs: 'maxlength="40" autocomplete="off"' });
  const secret = edit && o.webhookSecret
    ? `<p class="small">Signing secret: <code class="mono">${esc(o.webhookSecret)}</code> <button type="button" class="btn-small" data-copy="${esc(o.webhookSecret)}">Copy</button></p>`
    : "";
  return `${o.error ? errorsBox(o.error.detail, errors, FIELD_LABELS) : ""}
<form method="post" action="${edit ? `/dashboard/links/${encodeURIComponent(v.slug)}/edit` : "/dashboard/links"}" novalidate>${csrfField(o.csrf)}
<fieldset><legend>Link</legend>
${input("url", "Destination URL", v.url, errors, { type: "url", attrs: 'required maxlength="2048" placeholder="https://example.com/page"', path: edit ? "/targetUrl" : "/url" })}
<div class="grid">${slug}
<div><label for="f-status">Status</label><select id="f-status" name="status">${status("active")}${status("paused")}${status("archived")}</select>${fieldErrors(errors, "/status")}</div>
${input("tags", "Tags", v.tags, errors, { hint: "(comma-separated)", attrs: 'maxlength="900"' })}
${input("folder", "Folder", v.folder, errors, { attrs: 'maxlength="80"' })}</div></fieldset>
<fieldset><legend>Schedule and limits</legend><div class="grid">
${input("startsAt", "Starts at", v.startsAt, errors, { type: "datetime-local", hint: "(UTC)" })}
${input("expiresAt", "Expires at", v.expiresAt, errors, { type: "datetime-local", hint: "(UTC)" })}
${input("maxHits", "Click limit", v.maxHits, errors, { type: "number", hint: "(1-1,000,000)", attrs: 'min="1" max="1000000" step="1"' })}
${passwordField(v, o.mode, errors)}</div></fieldset>
<fieldset><legend>UTM parameters</legend><div class="grid">
${input("utmSource", "utm_source", v.utmSource, errors, { attrs: 'maxlength="200"' })}
${input("utmMedium", "utm_medium", v.utmMedium, errors, { attrs: 'maxlength="200"' })}
${input("utmCampaign", "utm_campaign", v.utmCampaign, errors, { attrs: 'maxlength="200"' })}</div></fieldset>
<fieldset><legend>Targeting rules</legend>
<p class="hint">First matching rule wins. Country: a two-letter code (US, DE). Device: desktop, mobile, tablet, ios or android. Clear a row to remove it.</p>
${fieldErrors(errors, "/rules")}${rows("rules", v.rules, { kind: "country", match: "", url: "" }, MAX_RULES, (r, i) => ruleRow(r, i, errors))}</fieldset>
<fieldset><legend>A/B rotation</legend>
<p class="hint">Used when no rule matches: each visitor gets one of these destinations, chosen by weight. Clear a row to remove it.</p>
${fieldErrors(errors, "/abUrls")}${rows("ab", v.abUrls, { url: "", weight: "" }, MAX_AB, (a, i) => abRow(a, i, errors))}</fieldset>
<fieldset><legend>Social preview card</legend>
<label class="check"><input type="checkbox" name="serveOg" value="on"${v.serveOg ? " checked" : ""}>Serve a preview card to social crawlers</label>${fieldErrors(errors, "/serveOg")}
<div class="grid">${input("ogTitle", "Title", v.ogTitle, errors, { attrs: 'maxlength="300"' })}
${input("ogImageUrl", "Image URL", v.ogImageUrl, errors, { type: "url", attrs: 'maxlength="2048"' })}</div>
<label for="f-ogDescription">Description</label><textarea id="f-ogDescription" name="ogDescription" maxlength="1000">${esc(v.ogDescription)}</textarea>${fieldErrors(errors, "/ogDescription")}
</fieldset>
<fieldset><legend>Click webhook</legend>
${input("webhookUrl", "Webhook URL", v.webhookUrl, errors, { type: "url", hint: "(receives a signed POST for every click)", attrs: 'maxlength="2048"' })}${secret}
</fieldset>
<div class="actions"><button type="submit" class="btn-primary">${edit ? "Save changes" : "Create link"}</button><a class="btn" href="${edit ? `/dashboard/links/${encodeURIComponent(v.slug)}/stats` : "/dashboard/links"}">Cancel</a></div>
</form>`;
}
