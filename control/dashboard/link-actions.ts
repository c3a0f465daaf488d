/**
 * Create, edit and delete a link from the dashboard: the form is mapped to the API's input and handed to
 * the same service functions REST and MCP call, so rules and messages cannot drift apart.
 */
import { AppError, type FieldError } from "../../shared/errors.ts";
import { createLink, deleteLink, getLink, updateLink } from "../links/service.ts";
import { htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, layout } from "./layout.ts";
import { linkForm, type LinkFormOptions } from "./link-form.ts";
import { createInputFrom, EMPTY_FORM, updateInputFrom, valuesFromForm, valuesFromLink } from "./link-form-input.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";
import { accountSuggestions } from "./suggestions.ts";
import { listDomains } from "../domains/service.ts";
import { getWorkspace } from "../workspaces/service.ts";
import type { LinkObject } from "../../shared/schemas.ts";
import { linkHref, linkNamed, type LinkPage } from "./link-paths.ts";


/** Errors a person can fix in the form; anything else (not found, unavailable …) becomes an error page. */
function formError(e: unknown): { status: number; detail: string; errors: FieldError[] } | null {
  if (!(e instanceof AppError)) return null;
  if (e.code === "slug_taken") return { status: 409, detail: e.message, errors: [{ path: "/slug", message: "is already taken" }] };
  if (e.code === "external_id_taken") return { status: 409, detail: e.message, errors: [{ path: "/externalId", message: "is already used by another of your links" }] };
  if (e.code === "invalid_input" || e.code === "slug_reserved") return { status: 400, detail: e.message, errors: e.errors ?? [] };
  return null;
}

/** The link's page `page`, named by slug and (on a custom domain) domain. */
const pageOf = (ctx: SignedInCtx, link: Pick<LinkObject, "slug" | "domain">, page: LinkPage, extra?: Record<string, string>) =>
  linkHref(link, ctx.deps.config.defaultDomain, page, extra);

/** The link the page's address names (slug, and ?domain= for a slug on several domains). */
const namedLink = (ctx: SignedInCtx) => {
  const { slug, domain } = linkNamed(ctx);
  return getLink(ctx.deps, ctx.caller, slug, domain);
};

/** Edit: the link's own addresses (the form posts to its edit page, Cancel goes to its stats). */
const editOptions = (ctx: SignedInCtx, link: LinkObject) => ({
  link: { action: pageOf(ctx, link, "edit"), cancel: pageOf(ctx, link, "stats"), domain: link.domain === ctx.deps.config.defaultDomain ? null : link.domain },
});

/** The form with the account's tags and folders to pick from. */
async function formPage(ctx: SignedInCtx, status: number, title: string, o: Omit<LinkFormOptions, "csrf" | "suggestions">): Promise<Response> {
  const on = o.link?.domain ? ` <span class="small muted">on ${esc(o.link.domain)}</span>` : "";
  const heading = o.mode === "edit" ? `<h1>Edit <span class="mono">${esc(o.values.slug)}</span>${on}</h1>` : "<h1>New link</h1>";
  const domains = o.mode === "create" ? (await listDomains(ctx.deps, ctx.caller)).domains.filter((d) => d.state === "verified").map((d) => d.hostname) : [];
  const suggestions = await accountSuggestions(ctx);
  const body = `${heading}${linkForm({ ...o, csrf: ctx.session.csrfToken, suggestions, domains, baseDomain: ctx.deps.config.defaultDomain })}`;
  return htmlResponse(status, layout({ title, body, viewer: ctx.viewer, current: o.mode === "create" ? "new" : "links" }));
}

/** The form preselects the workspace's default domain (while it is live), where a link made without one would go. */
export async function newLinkPage(ctx: SignedInCtx): Promise<Response> {
  const { defaultDomain } = await getWorkspace(ctx.deps, ctx.caller);
  return formPage(ctx, 200, "New link", { mode: "create", values: { ...EMPTY_FORM, domain: defaultDomain ?? ctx.deps.config.defaultDomain } });
}

export async function createLinkAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const values = valuesFromForm(form);
  try {
    const { link, created } = await createLink(ctx.deps, ctx.caller, createInputFrom(values));
    // An externalId that names one of the account's links makes the create an update of that link (the API's upsert).
    return redirect(pageOf(ctx, link, "stats", { flash: created ? "created" : "updated" }));
  } catch (e) {
    const err = formError(e);
    if (!err) throw e;
    return formPage(ctx, err.status, "New link", { mode: "create", values, error: err });
  }
}

export async function editLinkPage(ctx: SignedInCtx): Promise<Response> {
  const link = await namedLink(ctx);
  return formPage(ctx, 200, `Edit ${link.slug}`, { mode: "edit", values: valuesFromLink(link), webhookSecret: link.webhookSecret, ...editOptions(ctx, link) });
}

export async function updateLinkAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const current = await namedLink(ctx);
  const values = { ...valuesFromForm(form), slug: current.slug, hasPassword: current.hasPassword };
  try {
    await updateLink(ctx.deps, ctx.caller, current.slug, updateInputFrom(values, valuesFromLink(current)), current.domain);
    return redirect(pageOf(ctx, current, "stats", { flash: "updated" }));
  } catch (e) {
    const err = formError(e);
    if (!err) throw e;
    return formPage(ctx, err.status, `Edit ${current.slug}`, { mode: "edit", values, error: err, webhookSecret: current.webhookSecret, ...editOptions(ctx, current) });
  }
}

export async function deleteLinkPage(ctx: SignedInCtx): Promise<Response> {
  const link = await namedLink(ctx);
  const body = `<h1>Delete <span class="mono">${esc(link.slug)}</span>?</h1>
<div class="card"><p>The short address <span class="mono">${esc(link.shortUrl)}</span> will stop working (it answers 404). This cannot be undone.</p>
<p class="small muted">Destination: <span class="mono">${esc(link.target)}</span> · ${link.hits} click(s)</p>
<form method="post" action="${esc(pageOf(ctx, link, "delete"))}" class="actions">${csrfField(ctx.session.csrfToken)}
<button type="submit" class="btn-danger">Delete permanently</button><a class="btn" href="/dashboard/links">Cancel</a></form></div>`;
  return htmlResponse(200, layout({ title: `Delete ${link.slug}`, body, viewer: ctx.viewer, current: "links" }));
}

/**
 * Resumes a webhook paused for a failing endpoint: the link's webhookUrl is set again, which is what resumes it
 * over the API too (the edit form sends only changed fields, so retyping the same address there would send nothing).
 */
export async function resumeWebhookAction({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  const link = await namedLink(ctx);
  if (link.webhookUrl !== null && link.webhookPausedAt !== null) await updateLink(ctx.deps, ctx.caller, link.slug, { webhookUrl: link.webhookUrl }, link.domain);
  return redirect(pageOf(ctx, link, "stats", { flash: "webhook-resumed" }));
}

export async function deleteLinkAction({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  const { slug, domain } = linkNamed(ctx);
  await deleteLink(ctx.deps, ctx.caller, slug, domain);
  return redirect("/dashboard/links?flash=deleted");
}
