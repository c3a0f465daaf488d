/**
 * A link's page: its short address (copy, QR), settings at a glance, and its analytics over a range kept in the
 * URL (analytics-section.ts), from the same getLinkAnalytics as REST and MCP.
 */
import { hasScope } from "../auth/scopes.ts";
import type { LinkObject } from "../../shared/schemas.ts";
import { getLink } from "../links/service.ts";
import { getLinkAnalytics } from "../stats/service.ts";
import { defaultValueLabel, type ValueLabel } from "./analytics-cards.ts";
import { analyticsSection } from "./analytics-section.ts";
import { htmlResponse } from "./http.ts";
import { csrfField, esc, flashBox, fmtDate, layout } from "./layout.ts";
import { inlineQr, qrDownload } from "./qr.ts";
import { linkHref, linkNamed, linkPath, type LinkPage } from "./link-paths.ts";
import type { SignedInCtx } from "./session.ts";
import { stateBadge, stateReason, webhookPauseNote } from "./state-badge.ts";

/** `writes`: the caller may change links (a viewer sees no resume, edit or delete). `page`: the link's pages. */
function facts(l: LinkObject, csrf: string, writes: boolean, page: (p: LinkPage) => string): string {
  const row = (label: string, value: string) => `<dt>${label}</dt><dd>${value}</dd>`;
  const none = '<span class="muted">—</span>';
  const tags = l.tags.map((t) => `<a class="tag" href="/dashboard/links?tag=${encodeURIComponent(t)}">${esc(t)}</a>`).join("");
  const folder = l.folder ? `<a href="/dashboard/links?folder=${encodeURIComponent(l.folder)}">${esc(l.folder)}</a>` : none;
  const extras = [
    l.hasPassword && "password",
    l.rules.length && `${l.rules.length} rule(s)`,
    l.abUrls.length && `${l.abUrls.length} A/B variant(s)`,
    l.serveOg && "preview card",
    l.webhookUrl && "webhook",
    (l.utmSource || l.utmMedium || l.utmCampaign) && "UTM",
  ].filter(Boolean) as string[];
  const pause = webhookPauseNote(l);
  return `<dl class="facts">
${row("Destination", `<a class="mono" href="${esc(l.target)}" rel="noopener noreferrer" target="_blank">${esc(l.target)}</a>`)}
${row("State", `${stateBadge(l)} <span class="small muted">${esc(stateReason(l))}</span>`)}
${row("Tags", tags || none)}${row("Folder", folder)}
${row("Created", fmtDate(l.createdAt))}
${row("Starts", l.startsAt ? fmtDate(l.startsAt) : none)}${row("Expires", l.expiresAt ? fmtDate(l.expiresAt) : none)}
${row("Features", extras.length ? esc(extras.join(" · ")) : none)}
${pause ? row("Webhook", `<span class="status state-paused">paused</span> <span class="small muted">${esc(pause)}</span>
${writes ? `<form method="post" action="${esc(page("webhook/resume"))}" class="inline">${csrfField(csrf)}<button type="submit" class="btn-small">Resume webhook</button></form>` : ""}`) : ""}
</dl>`;
}

/** Variant and rule indices read as the link's own destinations and rules; other values as everywhere. */
function linkValueLabel(l: LinkObject): ValueLabel {
  const where = (url: string) => {
    try {
      const u = new URL(url);
      return u.host + u.pathname;
    } catch {
      return url;
    }
  };
  return (d, value) => {
    const i = value !== null && /^\d+$/.test(value) ? Number(value) : -1;
    if (d === "variant" && l.abUrls[i]) return `${i + 1}: ${where(l.abUrls[i]!.url)}`;
    if (d === "rule" && l.rules[i]) return `${i + 1}: ${l.rules[i]!.kind} ${l.rules[i]!.match}`;
    return defaultValueLabel(d, value);
  };
}

export async function statsPage(ctx: SignedInCtx): Promise<Response> {
  const { slug, domain } = linkNamed(ctx);
  const link = await getLink(ctx.deps, ctx.caller, slug, domain);
  const page = (p: LinkPage) => linkHref(link, ctx.deps.config.defaultDomain, p);
  const section = await analyticsSection({
    // The paths name the link by slug; the `domain` the address came with stays in every link and form of the page.
    path: linkPath(link.slug, "stats"),
    csvPath: linkPath(link.slug, "clicks.csv"),
    keep: ["domain"],
    baseDomain: ctx.deps.config.defaultDomain,
    url: ctx.url,
    now: ctx.deps.now(),
    ask: (raw) => getLinkAnalytics(ctx.deps, ctx.caller, link.slug, raw, link.domain),
    labelOf: linkValueLabel(link),
    extraTiles: () => [["Click limit", link.maxHits === null ? "none" : `${link.hits} / ${link.maxHits}`, "click-limit"]],
  });
  const writes = hasScope(ctx.caller, "links:write");
  const body = `<h1>Link <span class="mono">${esc(link.slug)}</span></h1>${flashBox(ctx.url.searchParams.get("flash"))}
<section class="card overview"><div>
<div class="copyrow"><input id="short-url" class="mono" readonly value="${esc(link.shortUrl)}" aria-label="Short URL">
<button type="button" class="btn-primary" data-copy="${esc(link.shortUrl)}">Copy</button></div>
${facts(link, ctx.session.csrfToken, writes, page)}
<div class="actions">${writes ? `<a class="btn" href="${esc(page("edit"))}">Edit</a>` : ""}<a class="btn" href="${esc(page("qr.svg"))}" download>Download QR (SVG)</a>${writes ? `<a class="btn" href="${esc(page("delete"))}">Delete</a>` : ""}</div>
</div><div class="qr">${await inlineQr(link.shortUrl)}</div></section>
<h2>Clicks</h2>${section.html}
${ctx.deps.config.geoipDb ? "" : DBIP_CREDIT}`;
  return htmlResponse(section.status, layout({ title: `Stats for ${link.slug}`, body, viewer: ctx.viewer, current: "links" }));
}

/** The shipped country database (DB-IP Lite, CC BY 4.0) asks pages showing its results to credit it. */
const DBIP_CREDIT = `<p class="hint">Country data: <a href="https://db-ip.com">IP Geolocation by DB-IP</a></p>`;

export async function qrFile(ctx: SignedInCtx): Promise<Response> {
  const { slug, domain } = linkNamed(ctx);
  const link = await getLink(ctx.deps, ctx.caller, slug, domain);
  return qrDownload(link.shortUrl, link.slug);
}
