/**
 * The custom-domains role of the store (issue #24). A hostname is unique across every account: the store refuses
 * a second one whoever adds it. Links name their domain by hostname (links.domain), so a domain's links are found
 * by it; deleting a domain that still has links is decided here, in one transaction with what happens to them.
 */
import type { DomainRecord } from "../domain.ts";

/** What happens to a domain's links when it is deleted: nothing (refused if it has any), deleted, or moved. */
export type LinkDisposal = { kind: "refuse" } | { kind: "delete" } | { kind: "move"; toDomain: string };

export type DomainDeletion =
  | { ok: true; links: { id: string; slug: string }[] }
  /** has_links: the domain has links and the disposal was refuse; slug_conflict: the target has some of the slugs. */
  | { ok: false; reason: "has_links" | "slug_conflict"; count: number };

/** A verified domain as the redirectors keep it in memory. */
export type ServedDomain = Pick<DomainRecord, "hostname" | "rootRedirect" | "notFoundRedirect">;

export interface DomainStore {
  /** false: the hostname is taken (by any account), and nothing was written. */
  createDomain(d: DomainRecord): Promise<boolean>;
  getDomain(id: string): Promise<DomainRecord | null>;
  getDomainByHostname(hostname: string): Promise<DomainRecord | null>;
  /** An account's domains, oldest first. */
  listDomains(accountId: string): Promise<DomainRecord[]>;
  /** Every verified domain (what the redirectors serve), in hostname order. */
  listVerifiedDomains(): Promise<ServedDomain[]>;
  /**
   * Writes every field but id, accountId, hostname and createdAt, only over the version read (`expectedUpdatedAt`):
   * false when the domain is gone or was changed meanwhile (the caller reads it again).
   */
  updateDomain(d: DomainRecord, expectedUpdatedAt: number): Promise<boolean>;
  /** How many links are on a domain (by hostname). */
  countDomainLinks(hostname: string): Promise<number>;
  /**
   * Deletes the domain with `id`, and its links as `disposal` says, in one transaction. A move keeps each link's
   * slug on `toDomain` and is refused (nothing changes) when any of them is taken there. `links`: those deleted or moved.
   */
  deleteDomain(id: string, disposal: LinkDisposal): Promise<DomainDeletion>;
}

/** The HotState bus channel a domain change is published on; redirectors re-read the verified domains on it. */
export const DOMAINS_CHANGED_CHANNEL = "domains:changed";
