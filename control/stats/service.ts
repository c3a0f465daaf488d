/** Per-link statistics (design §3.4), read from hourly rollups so the cost does not grow with clicks. */
import type { LinkStats } from "../../shared/schemas.ts";
import type { Caller, Deps } from "../deps.ts";
import { findOwnLink } from "../links/service.ts";

const HOUR = 3_600_000;

/** Exactly 24 hourly buckets, oldest first, the last being the current hour, zeros included. */
export function last24Hours(hourly: { hour: number; clicks: number }[], now: number) {
  const current = now - (now % HOUR);
  const byHour = new Map(hourly.map((h) => [h.hour, h.clicks]));
  return Array.from({ length: 24 }, (_, i) => {
    const hour = current - (23 - i) * HOUR;
    return { hour: new Date(hour).toISOString(), clicks: byHour.get(hour) ?? 0 };
  });
}

export async function getLinkStats(deps: Deps, caller: Caller, slug: string): Promise<LinkStats> {
  const link = await findOwnLink(deps, caller, slug);
  const now = deps.now();
  const from = now - (now % HOUR) - 23 * HOUR;
  const s = await deps.store.getStats(link.id, from);
  return {
    slug: link.slug,
    totalClicks: s.total,
    byDevice: s.byDevice,
    byBrowser: s.byBrowser,
    byCountry: s.byCountry,
    byVariant: s.byVariant,
    last24h: last24Hours(s.hourly, now),
  };
}
