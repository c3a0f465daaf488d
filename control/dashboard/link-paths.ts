/**
 * A link's dashboard pages name it as the API does: by slug, and `?domain=` when it is on a custom domain (a slug
 * may be on several of the workspace's domains, and without it the base domain's link is found first). The one
 * place these addresses are built, and the one place a page reads which domain it is about.
 */
import type { LinkObject } from "../../shared/schemas.ts";
import type { SignedInCtx } from "./session.ts";

export type LinkPage = "stats" | "edit" | "delete" | "qr.svg" | "clicks.csv" | "webhook/resume";
type Named = Pick<LinkObject, "slug" | "domain">;

/** The `?domain=` that names the link: nothing for the base domain's (its addresses stay as they always were). */
export const domainParams = (link: Named, defaultDomain: string): Record<string, string> =>
  link.domain === defaultDomain ? {} : { domain: link.domain };

/** `/dashboard/links/{slug}/{page}`: the page by slug alone. */
export const linkPath = (slug: string, page: LinkPage): string => `/dashboard/links/${encodeURIComponent(slug)}/${page}`;

/** The link's page, with its domain and `extra` parameters in its query. */
export function linkHref(link: Named, defaultDomain: string, page: LinkPage, extra: Record<string, string> = {}): string {
  const qs = new URLSearchParams({ ...domainParams(link, defaultDomain), ...extra }).toString();
  return `${linkPath(link.slug, page)}${qs ? `?${qs}` : ""}`;
}

/** The slug and domain a link page's address names (the route's :slug, and ?domain= as the API takes it). */
export const linkNamed = (ctx: SignedInCtx): { slug: string; domain: string | undefined } => ({
  slug: ctx.params.slug ?? "",
  domain: ctx.url.searchParams.get("domain") ?? undefined,
});

/**
 * The link as the dashboard names it, in a bulk box's value and in the overview's top links: its slug, or
 * `domain/slug` for a custom domain's (a slug never holds "/"), so the same slug on two domains is two boxes and two
 * rows; `bulkTargets` reads the boxes back.
 */
export const linkName = (link: Named, defaultDomain: string): string =>
  link.domain === defaultDomain ? link.slug : `${link.domain}/${link.slug}`;

/** The posted boxes grouped by domain (undefined: named by slug alone), each group's slugs in order. */
export function bulkTargets(values: string[]): Map<string | undefined, string[]> {
  const groups = new Map<string | undefined, string[]>();
  for (const v of values) {
    const at = v.indexOf("/");
    const [domain, slug] = at < 0 ? [undefined, v] : [v.slice(0, at), v.slice(at + 1)];
    groups.set(domain, [...(groups.get(domain) ?? []), slug]);
  }
  return groups;
}
