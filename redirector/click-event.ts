/**
 * The last step of a counted redirect: the click event, pushed to the click buffer (never awaited), and the
 * link's webhook queued. Only a redirect decide() counted gets here: HEAD, previews, forms, 404, 410 and
 * expiredUrl redirects are not clicks.
 */
import type { Destination } from "../shared/decide.ts";
import { shortUrlOf, type ShortBase } from "../shared/domain.ts";
import { classifyUserAgent } from "../shared/facts/device.ts";
import { countryFromHeader } from "../shared/facts/geo.ts";
import type { CompiledLink } from "../shared/link.ts";
import type { ClickEvent } from "../shared/ports.ts";
import type { WebhookSender } from "../shared/webhooks/sender.ts";
import type { ClickBuffer } from "./click-buffer.ts";
import { hasQrMarker, type LazyRequestFacts } from "./request-facts.ts";

const MAX_UA = 512;

export interface ClickRecorder {
  readonly buffer: ClickBuffer;
  readonly webhooks: WebhookSender;
  /** For the webhook's shortUrl, on the domain the click came in on. */
  readonly base: ShortBase;
  /**
   * A click's webhook message id is this prefix (process and start time) and a sequence number: unique without a
   * random draw. Only clicks with a webhook get one: nothing after the queue reads an event's id (the store keys
   * clicks by batch), and a string built per click cost the hot path for nothing.
   */
  readonly idPrefix: string;
  seq: number;
}

export function createClickRecorder(buffer: ClickBuffer, webhooks: WebhookSender, base: ShortBase): ClickRecorder {
  return { buffer, webhooks, base: { baseUrl: base.baseUrl, defaultDomain: base.defaultDomain }, idPrefix: `${process.pid.toString(36)}${Date.now().toString(36)}-`, seq: 0 };
}

/** Records one click of `link` on `domain` (its links.domain) to `to` (its URL, A/B variant and matched rule) and queues its webhook. */
export function recordClick(c: ClickRecorder, facts: LazyRequestFacts, link: CompiledLink, to: Destination, now: number, domain: string): void {
  const { req, ctx } = facts;
  const ua = req.headers.get("user-agent") ?? "";
  // A country the rules already resolved is reused; else the trusted header's, else the drain looks it up.
  const known = facts.knownCountry();
  const event: ClickEvent = {
    id: link.webhookUrl ? c.idPrefix + (c.seq++).toString(36) : "",
    linkId: link.id,
    ts: now,
    ua: ua.length > MAX_UA ? ua.slice(0, MAX_UA) : ua,
    // Always asked (server.requestIP is one of the costliest calls here): the drain hashes the visitor from it.
    ip: facts.clickAddress(),
    country: known !== undefined ? known : ctx.countryHeader ? countryFromHeader(req.headers.get(ctx.countryHeader)) : null,
    referrer: req.headers.get("referer"),
    variant: to.variant,
    rule: to.rule,
    qr: hasQrMarker(facts.url),
  };
  c.buffer.push(event);
  if (link.webhookUrl && link.webhookSecret) sendWebhook(c, facts, link, event, ua, to.url, domain);
}

/** The link.clicked webhook (design §4), with the click's country, device and browser; `ua` is the whole User-Agent. */
function sendWebhook(c: ClickRecorder, facts: LazyRequestFacts, link: CompiledLink, event: ClickEvent, ua: string, destination: string, domain: string): void {
  const info = classifyUserAgent(ua);
  const lookup = facts.ctx.countryLookup;
  const country = event.country ?? (event.ip && lookup ? lookup(event.ip) : null);
  c.webhooks.send({
    id: `msg_${event.id}`,
    url: link.webhookUrl!,
    secret: link.webhookSecret!,
    accountId: link.accountId,
    linkId: link.id,
    linkVersion: link.updatedAt,
    payload: {
      event: "link.clicked", slug: link.slug, domain, shortUrl: shortUrlOf(c.base, domain, link.slug), target: link.rawTarget, destination, timestamp: new Date(event.ts).toISOString(),
      country, device: info.device, browser: info.browser, referrer: event.referrer,
    },
  });
}
