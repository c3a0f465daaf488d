/** The links role of the store: the source of truth for links (the redirector only reads it, on cache misses). */
import type { LinkRecord, LinkState, LinkStatus } from "../link.ts";

export interface LinkFilter {
  limit: number;
  /** Opaque to callers: the id of the last link on the previous page. */
  cursor?: string;
  tag?: string;
  folder?: string;
  status?: LinkStatus;
  /** Links in this live state at `now` (linkState in link.ts); limit_reached reads the stored hit count. */
  state?: { state: LinkState; now: number };
  /** The link with this externalId (unique per account). */
  externalId?: string;
  q?: string;
}

export interface LinkStore {
  /** One multi-row write. Returns, per input row, whether it was inserted (false: domain+slug, or the account's externalId, taken). */
  insertLinks(links: LinkRecord[]): Promise<boolean[]>;
  getLink(domain: string, slug: string): Promise<LinkRecord | null>;
  getLinkById(id: string): Promise<LinkRecord | null>;
  /** Writes every field of the link (by id) except hits and createdAt. */
  /**
   * Writes every field of the link but its hit count. With `expectedUpdatedAt`, only over that version (compare
   * and set on updatedAt, which every update raises). Returns whether a row was written.
   */
  updateLink(link: LinkRecord, expectedUpdatedAt?: number): Promise<boolean>;
  deleteLink(id: string): Promise<void>;
  /** Newest first. */
  listLinks(accountId: string, filter: LinkFilter): Promise<{ links: LinkRecord[]; nextCursor: string | null }>;
}
