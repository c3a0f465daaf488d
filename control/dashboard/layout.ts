/**
 * The page shell and the small pieces every page uses. Every value that did not come from this file goes
 * through `esc` (shared/html.ts): link fields, emails, key names, query strings, error messages.
 */
import { escapeHtml as esc } from "../../shared/html.ts";
import type { WorkspaceObject } from "../workspaces/model.ts";
import { htmlResponse } from "./http.ts";
import { assetUrl } from "./static.ts";

export { esc };

/** Who is looking at a signed-in page: shown in the header; the token protects the sign-out form. */
export interface Viewer {
  email: string;
  csrfToken: string;
  /** The workspace the session acts for and every workspace of the person (with their role): the header's switcher. */
  workspaces?: { currentId: string; all: WorkspaceObject[] };
}

export type Section = "links" | "new" | "analytics" | "keys" | "imports";

export interface PageOptions {
  title: string;
  body: string;
  viewer?: Viewer;
  current?: Section;
  /** Sign-in and sign-up: a narrow centred column. */
  narrow?: boolean;
}

export const csrfField = (token: string) => `<input type="hidden" name="_csrf" value="${esc(token)}">`;

/**
 * The header's workspace switcher (issue #24): the current workspace's name opens the person's workspaces, each a
 * button of one form posting the switch (POST-redirect-GET, the session's CSRF token), and the workspace's pages.
 * A <details>, so it opens and closes with no script and is announced as a disclosure. On a phone it shares the
 * brand's row with Sign out, and the email moves into it (static.ts), so the header keeps two rows.
 */
function switcher(viewer: Viewer): string {
  if (!viewer.workspaces) return "";
  const { currentId, all } = viewer.workspaces;
  const current = all.find((w) => w.id === currentId);
  const items = all.map((w) => `<li><button type="submit" name="workspace" value="${esc(w.id)}"${w.id === currentId ? ' aria-current="true"' : ""}><span class="ws-item">${esc(w.name)}</span><span class="small muted">${w.role}</span></button></li>`).join("");
  return `<details class="ws"><summary><span class="sr-only">Workspace: </span><span class="ws-name">${esc(current?.name ?? "Workspace")}</span></summary>
<div class="ws-menu"><p class="ws-who small muted">Signed in as ${esc(viewer.email)}</p><form method="post" action="/dashboard/workspace/switch" aria-label="Switch workspace">${csrfField(viewer.csrfToken)}<ul>${items}</ul></form>
<ul class="ws-links"><li><a href="/dashboard/workspace">Workspace settings</a></li><li><a href="/dashboard/members">Members</a></li>${current?.role === "admin" || current?.role === "owner" ? '<li><a href="/dashboard/audit">Audit log</a></li>' : ""}<li><a href="/dashboard/workspaces/new">New workspace</a></li></ul></div></details>`;
}

/** The signed-in header: who and sign-out beside the brand, the section links on a row of their own on a phone. */
function nav(viewer: Viewer, current?: Section): string {
  const item = (section: Section, href: string, label: string) =>
    `<a href="${href}"${current === section ? ' aria-current="page"' : ""}>${label}</a>`;
  // A viewer's role writes no links (control/auth/roles.ts): no New link, no Import.
  const role = viewer.workspaces?.all.find((w) => w.id === viewer.workspaces?.currentId)?.role;
  const writes = role !== "viewer";
  return `${switcher(viewer)}<nav aria-label="Main">${item("links", "/dashboard/links", "Links")}${writes ? item("new", "/dashboard/links/new", "New link") : ""}${item("analytics", "/dashboard/analytics", "Analytics")}${writes ? item("imports", "/dashboard/imports", "Import") : ""}${item("keys", "/dashboard/keys", "API keys")}</nav>
<div class="who"><span class="email" title="${esc(viewer.email)}">${esc(viewer.email)}</span><form method="post" action="/dashboard/signout" class="inline">${csrfField(viewer.csrfToken)}<button type="submit">Sign out</button></form></div>`;
}

export function layout(o: PageOptions): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${esc(o.title)} · clink</title>
<link rel="stylesheet" href="${assetUrl("app.css")}">
<script src="${assetUrl("app.js")}" defer></script>
</head><body>
<header class="top"><div class="bar"><a class="brand" href="/dashboard">clink</a>${o.viewer ? nav(o.viewer, o.current) : ""}</div></header>
<main${o.narrow ? ' class="narrow"' : ""}>${o.body}</main>
</body></html>`;
}

/** Messages shown after a redirect, chosen by a fixed code in the query string (never text from the URL). */
const FLASH: Record<string, string> = {
  created: "Link created.",
  updated: "Link saved.",
  deleted: "Link deleted.",
  "webhook-resumed": "Webhook resumed: the next click is delivered again.",
  revoked: "API key revoked. Requests using it are refused from now on.",
  welcome: "Welcome! Your account is ready.",
  "signed-out": "You are signed out.",
  "workspace-switched": "Switched workspace.",
  "workspace-created": "Workspace created. Invite people below.",
  "workspace-renamed": "Workspace renamed.",
  "workspace-deleted": "Workspace deleted. You are in your personal workspace.",
  "workspace-left": "You left the workspace. You are in your personal workspace.",
  "role-changed": "Role changed.",
  "member-removed": "Member removed. The keys they made in this workspace are revoked.",
  "invitation-revoked": "Invitation revoked. Its link no longer works.",
  "invitation-accepted": "Welcome! You joined the workspace.",
};

export function flashBox(code: string | null): string {
  const text = code && Object.hasOwn(FLASH, code) ? FLASH[code] : undefined; // not "constructor" or "__proto__"
  return text ? `<p class="flash" role="status">${esc(text)}</p>` : "";
}

export function fmtDate(value: string | number | null): string {
  if (value === null) return "—";
  const d = new Date(value);
  const text = `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `<time datetime="${esc(d.toISOString())}">${esc(text)}</time>`;
}

export function errorPage(status: number, title: string, message: string, viewer?: Viewer, extra: Record<string, string> = {}): Response {
  const body = `<h1>${esc(title)}</h1><p>${esc(message)}</p><p><a href="/dashboard">Back to the dashboard</a></p>`;
  return htmlResponse(status, layout({ title, body, viewer, narrow: !viewer }), extra);
}
