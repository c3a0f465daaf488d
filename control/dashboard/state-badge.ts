/**
 * The link's live state (LinkObject.state: what a visitor gets now) as a badge, with the reason in words. The
 * owner's status alone said "active" for links that had expired, not started or used up their clicks.
 */
import type { LinkObject } from "../../shared/schemas.ts";
import { esc } from "./layout.ts";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "2026-01-03T12:00:00.000Z" → "3 Jan 2026 12:00 UTC". */
export function dayAndTime(iso: string): string {
  const d = new Date(iso);
  const hm = d.toISOString().slice(11, 16);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${hm} UTC`;
}

/** "limit_reached" → "limit reached". */
export const stateLabel = (state: string) => state.replaceAll("_", " ");

type Facts = Pick<LinkObject, "state" | "expiresAt" | "startsAt" | "maxHits" | "hits" | "expiredUrl">;

const clicks = (n: number | null) => `${n} click${n === 1 ? "" : "s"}`;

/** What an ended link's visitors get: its expiredUrl, or the 410 page. */
const endedVisitors = (l: Facts) => (l.expiredUrl ? `visitors are sent to ${l.expiredUrl}` : "visitors get a 410 page");

/** Why the link is in its state, in words: "expired 3 Jan 2026 12:00 UTC; visitors get a 410 page". */
export function stateReason(l: Facts): string {
  switch (l.state) {
    case "live": {
      const limits = [l.expiresAt && `expires ${dayAndTime(l.expiresAt)}`, l.maxHits !== null && `${l.hits} of ${clicks(l.maxHits)} used`];
      return ["serving redirects", ...limits].filter(Boolean).join("; ");
    }
    case "scheduled":
      return `starts${l.startsAt ? ` ${dayAndTime(l.startsAt)}` : " later"}; until then visitors get a 425 page`;
    case "expired":
      return `expired${l.expiresAt ? ` ${dayAndTime(l.expiresAt)}` : ""}; ${endedVisitors(l)}`;
    case "limit_reached":
      return `served its limit of ${clicks(l.maxHits)}; ${endedVisitors(l)}`;
    case "paused":
      return "paused by its owner; visitors get a 404 page";
    case "archived":
      return `archived by its owner; ${endedVisitors(l)}`;
  }
}

/** The badge: the state as its label and style, the reason as its tooltip. */
export function stateBadge(l: Facts): string {
  return `<span class="status state-${esc(l.state)}" title="${esc(stateReason(l))}">${esc(stateLabel(l.state))}</span>`;
}

/** "webhook paused 3 Jan 2026 12:00 UTC: <reason>" when the sender paused the link's webhook, else null. */
export function webhookPauseNote(l: Pick<LinkObject, "webhookPausedAt" | "webhookPausedReason">): string | null {
  if (l.webhookPausedAt === null) return null;
  return `webhook paused ${dayAndTime(l.webhookPausedAt)}: ${l.webhookPausedReason ?? "its endpoint kept failing"}`;
}
