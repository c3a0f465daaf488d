/** The links role of the store: the source of truth for links (the redirector only reads it, on cache misses). */
import type { LinkRecord, LinkState, LinkStatus } from "../link.ts";
import type { WebhookEventRecord } from "./event-webhooks.ts";

/**
 * The outbox rows of a link change (event webhooks, issue #25), written in the change's own transaction: the change
 * and its events commit together or not at all. Each names its link by `linkId`; an event whose link the change did
 * not write (a taken slug, a lost compare-and-set, a link already gone) is not written either. Empty or left out
 * when no endpoint is subscribed: the change then writes nothing more than before.
 */
export type LinkEvents = readonly WebhookEventRecord[];

export interface LinkFilter {
  limit: number;
  /** Opaque to callers: the id of the last link on the previous page. */
  cursor?: string;
  /**
   * Tag and folder match whole values ignoring case (ASCII letters on SQLite; every letter on Postgres, as the
   * search's ILIKE does).
   */
  tag?: string;
  folder?: string;
  status?: LinkStatus;
  /** Links in this live state at `now` (linkState in link.ts); limit_reached reads the stored hit count. */
  state?: { state: LinkState; now: number };
  /** The link with this externalId (unique per account). */
  externalId?: string;
  /** The links on this domain (links.domain: the base one, or a custom domain's hostname). */
  domain?: string;
  q?: string;
}

/** What a filter matches, paging aside. */
export type LinkMatch = Omit<LinkFilter, "limit" | "cursor">;

/** The account's own tags and folders, as written (for suggestions), each list sorted ignoring case. */
export interface TagsAndFolders {
  tags: string[];
  folders: string[];
}

/** A link's hits as the store holds them for maxHits (design §8). */
export interface StoredHits {
  /** Clicks recorded: behind the clicks served by those still queued or lost in a crash. */
  hits: number;
  /** Hits reserved for counters (hitReservations): no click served under the limit is beyond this. */
  reserved: number;
}

/** A link's hits after a reservation (LinkHitReservations.reserveHits). */
export interface HitReservation extends StoredHits {
  /** The limit as stored now, which no reservation exceeds. */
  maxHits: number;
}

/**
 * maxHits' durable side: counters (memory, Redis) serve a link's hits only once the store has reserved them, a
 * block at a time, so a counter lost in a crash restarts from max(hits, reserved), above every hit it served.
 */
export interface LinkHitReservations {
  /**
   * The link's recorded and reserved hits; null when there is no such link. A counter started now starts from
   * max(hits, reserved): every hit served under the limit, recorded or not, is within it.
   */
  storedHits(linkId: string): Promise<StoredHits | null>;
  /**
   * One atomic step: raises the reservation to max(reserved, hits) + `block`, but not beyond the stored maxHits
   * (nor ever lowers it). Null when the link is gone or has no maxHits (then it has no reservation).
   */
  reserveHits(linkId: string, block: number): Promise<HitReservation | null>;
  /**
   * Lowers the reservation to `served` when it is above: the hits a counter stopping cleanly will never serve.
   * Only for the one counter a link has (an embedded process's, on shutdown); never below what was served.
   */
  releaseHits(linkId: string, served: number): Promise<void>;
}

export interface LinkStore extends LinkHitReservations {
  /**
   * One multi-row write. Returns, per input row, whether it was inserted (false: domain+slug, or the account's
   * externalId, taken). The events of the inserted links are written with them.
   */
  insertLinks(links: LinkRecord[], events?: LinkEvents): Promise<boolean[]>;
  getLink(domain: string, slug: string): Promise<LinkRecord | null>;
  getLinkById(id: string): Promise<LinkRecord | null>;
  /**
   * Writes every field of the link but its hit count and createdAt. With `expectedUpdatedAt`, only over that
   * version (compare and set on updatedAt, which every update raises). Returns whether a row was written; the
   * events are written only with it.
   */
  updateLink(link: LinkRecord, expectedUpdatedAt?: number, events?: LinkEvents): Promise<boolean>;
  /** Deletes the link (its tags, clicks and rollups with it); the events are written only when there was one. */
  deleteLink(id: string, events?: LinkEvents): Promise<void>;
  /** Newest first. */
  listLinks(accountId: string, filter: LinkFilter): Promise<{ links: LinkRecord[]; nextCursor: string | null }>;
  /** How many of the account's links the filter matches; with `max`, at most that (a bounded count). */
  countLinks(accountId: string, filter: LinkMatch, max?: number): Promise<number>;
  /**
   * The distinct tags and folders of the account's `recentLinks` newest links: suggestions whose cost stays
   * bounded however many links the account has.
   */
  listTagsAndFolders(accountId: string, recentLinks: number): Promise<TagsAndFolders>;
}
