/**
 * A link's page: its short address (copy, QR), settings at a glance, totals and the charts of design §3.4
 * (24-hour bars, device, browser, country and A/B variant breakdowns), from the same getLinkStats as REST.
 */
import type { LinkObject, LinkStats } from "../../shared/schemas.ts";
import { getLink } from "../links/service.ts";
import { getLinkStats } from "../stats/service.ts";
import { breakdownChart, hourlyChart } from "./charts.ts";
import { htmlResponse } from "./http.ts";
import { csrfField, esc, flashBox, fmtDate, layout } from "./layout.ts";
import { inlineQr, qrDownload } from "./qr.ts";
import type { SignedInCtx } from "./session.ts";
import { stateBadge, stateReason, webhookPauseNote } from "./state-badge.ts";

const linkPath = (slug: string) => `/dashboard/links/${encodeURIComponent(slug)}`;
const capitalise = (s: string) => (s ? s[0].toUpperCase() + s.slice(1) : s);

function facts(l: LinkObject, csrf: string): string {
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
<form method="post" action="${linkPath(l.slug)}/webhook/resume" class="inline">${csrfField(csrf)}<button type="submit" class="btn-small">Resume webhook</button></form>`) : ""}
</dl>`;
}

function totals(l: LinkObject, s: LinkStats): string {
  const day = s.last24h.reduce((sum, b) => sum + b.clicks, 0);
  const peak = s.last24h.reduce((best, b) => (b.clicks > best.clicks ? b : best), s.last24h[0]);
  const tile = (label: string, value: string, id: string) => `<div class="card"><div class="muted small">${label}</div><div class="num" id="${id}">${value}</div></div>`;
  return `<div class="totals">
${tile("Total clicks", String(s.totalClicks), "total-clicks")}
${tile("Last 24 hours", String(day), "clicks-24h")}
${tile("Busiest hour (UTC)", peak && peak.clicks ? esc(`${peak.hour.slice(11, 16)} · ${peak.clicks}`) : "—", "peak-hour")}
${tile("Click limit", l.maxHits === null ? "none" : esc(`${l.hits} / ${l.maxHits}`), "click-limit")}
</div>`;
}

function variantLabel(l: LinkObject): (key: string) => string {
  return (key) => {
    const v = l.abUrls[Number(key)];
    if (!v) return `Variant ${Number(key) + 1}`;
    let where = v.url;
    try {
      const u = new URL(v.url);
      where = u.host + u.pathname;
    } catch {
      /* keep the raw URL */
    }
    return `${Number(key) + 1}: ${where}`;
  };
}

export async function statsPage(ctx: SignedInCtx): Promise<Response> {
  const slug = ctx.params.slug ?? "";
  const link = await getLink(ctx.deps, ctx.caller, slug);
  const stats = await getLinkStats(ctx.deps, ctx.caller, slug);
  const variants = link.abUrls.length || Object.keys(stats.byVariant).length
    ? breakdownChart("A/B variants", stats.byVariant, variantLabel(link))
    : "";
  const body = `<h1>Link <span class="mono">${esc(link.slug)}</span></h1>${flashBox(ctx.url.searchParams.get("flash"))}
<section class="card overview"><div>
<div class="copyrow"><input id="short-url" class="mono" readonly value="${esc(link.shortUrl)}" aria-label="Short URL">
<button type="button" class="btn-primary" data-copy="${esc(link.shortUrl)}">Copy</button></div>
${facts(link, ctx.session.csrfToken)}
<div class="actions"><a class="btn" href="${linkPath(link.slug)}/edit">Edit</a><a class="btn" href="${linkPath(link.slug)}/qr.svg" download>Download QR (SVG)</a><a class="btn" href="${linkPath(link.slug)}/delete">Delete</a></div>
</div><div class="qr">${await inlineQr(link.shortUrl)}</div></section>
<h2>Clicks</h2>${totals(link, stats)}
<section class="card chart"><h2>Last 24 hours <span class="hint">(per hour, UTC)</span></h2>${hourlyChart(stats.last24h)}</section>
<div class="charts">
${breakdownChart("Devices", stats.byDevice, capitalise)}
${breakdownChart("Browsers", stats.byBrowser)}
${breakdownChart("Countries", stats.byCountry, (k) => (k === "unknown" ? "Unknown" : k))}
${variants}</div>
${ctx.deps.config.geoipDb ? "" : DBIP_CREDIT}`;
  return htmlResponse(200, layout({ title: `Stats for ${link.slug}`, body, viewer: ctx.viewer, current: "links" }));
}

/** The shipped country database (DB-IP Lite, CC BY 4.0) asks pages showing its results to credit it. */
const DBIP_CREDIT = `<p class="hint">Country data: <a href="https://db-ip.com">IP Geolocation by DB-IP</a></p>`;

export async function qrFile(ctx: SignedInCtx): Promise<Response> {
  const link = await getLink(ctx.deps, ctx.caller, ctx.params.slug ?? "");
  return qrDownload(link.shortUrl, link.slug);
}
