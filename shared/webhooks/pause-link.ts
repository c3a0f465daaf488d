/**
 * Stores a webhook pause on its link (webhookPausedAt, webhookPausedReason) and drops the link's cached copies,
 * so every process reads it again and stops sending (compileLink gives a paused link no webhookUrl), and the
 * owner sees why in the API and the dashboard. The sender's `onPause` (control/main.ts, redirector/main.ts).
 */
import { linkKey } from "../link.ts";
import type { LinkCache } from "../ports/hot-state.ts";
import type { LinkStore } from "../ports/links.ts";
import type { WebhookPause } from "./sender.ts";

/** Times the pause is re-applied to a link another writer changed meanwhile. */
const ATTEMPTS = 3;

/**
 * Returns whether the pause was stored: not when the link is gone, already paused, or has another webhookUrl
 * by now (the owner changed it: the new one deserves its own chances).
 */
export async function pauseLinkWebhook(
  store: Pick<LinkStore, "getLinkById" | "updateLink">,
  cache: Pick<LinkCache, "invalidateLink">,
  pause: WebhookPause,
): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const link = await store.getLinkById(pause.linkId);
    if (!link || link.webhookUrl !== pause.url || link.webhookPausedAt !== null) return false;
    const paused = {
      ...link,
      webhookPausedAt: pause.at,
      webhookPausedReason: pause.reason,
      updatedAt: Math.max(pause.at, link.updatedAt + 1),
    };
    if (await store.updateLink(paused, link.updatedAt)) {
      await cache.invalidateLink(linkKey(link.domain, link.slug)).catch(() => {});
      return true;
    }
  }
  return false;
}
