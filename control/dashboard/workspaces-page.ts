/**
 * Workspaces in the dashboard (issue #24, docs/teams.md): the header's switch, a new workspace, and the settings
 * page (rename: admins; delete: owners, never a personal workspace, confirmed by typing its name; leave: anyone
 * but the last owner). Every operation is a function of workspaces/service.ts, the one REST calls; this file only
 * renders and turns the service's answers into pages. Forms post and redirect (a reload repeats nothing).
 */
import { AppError } from "../../shared/errors.ts";
import { roleAtLeast } from "../auth/roles.ts";
import { WORKSPACE_NAME_MAX, type WorkspaceObject } from "../workspaces/model.ts";
import {
  createWorkspace, deleteWorkspace, getWorkspace, leaveWorkspace, listMembers, updateWorkspace, switchWorkspace,
} from "../workspaces/service.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs, type FormProblem } from "./form-errors.ts";
import { field, htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, flashBox, fmtDate, layout } from "./layout.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

const NAME_FIELDS: FieldRefs = { "/name": { label: "Name", id: "ws-name" } };
const CONFIRM_FIELDS: FieldRefs = { "/confirm": { label: "Workspace name", id: "ws-confirm" } };

/** The refusals a settings form answers on its own page (the form's problem), not as an error page. */
const FORM_REFUSALS = new Set(["invalid_input", "last_owner", "personal_workspace"]);

const problemOf = (e: AppError): FormProblem => ({ detail: e.message, errors: e.errors ?? [] });

/** The name input, for the new-workspace form and the rename form alike. */
function nameInput(value: string, error: FormProblem | undefined, label: string): string {
  const errors = error?.errors ?? [];
  return `<label for="ws-name">${label} <span class="hint">(1-${WORKSPACE_NAME_MAX} characters)</span></label>
<input id="ws-name" name="name" required maxlength="${WORKSPACE_NAME_MAX}" value="${esc(value)}"${invalidAttrs(errors, "/name", "ws-name")}>${fieldProblems(errors, "/name", NAME_FIELDS["/name"])}`;
}

// --- Switch and create ---------------------------------------------------------------------------------------------

/** The header's switcher: acts for the chosen workspace from the next page on, and lands on its links. */
export async function switchAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  await switchWorkspace(ctx.deps, ctx.session, field(form, "workspace"));
  return redirect("/dashboard/links?flash=workspace-switched");
}

function newWorkspacePage(ctx: SignedInCtx, name = "", error?: FormProblem): string {
  const body = `<h1>New workspace</h1>
<p class="muted">A workspace holds links, domains, keys and webhooks that its members share. You will be its owner and can invite people from its Members page.</p>
<form method="post" action="/dashboard/workspaces" class="card">${csrfField(ctx.session.csrfToken)}
${error ? errorSummary(error, NAME_FIELDS) : ""}${nameInput(name, error, "Name")}
<div class="actions"><button type="submit" class="btn-primary">Create workspace</button></div></form>`;
  return layout({ title: "New workspace", body, viewer: ctx.viewer });
}

export async function newWorkspaceForm(ctx: SignedInCtx): Promise<Response> {
  return htmlResponse(200, newWorkspacePage(ctx));
}

/** Makes the workspace (its maker the owner), switches the session to it, and opens its members page to invite people. */
export async function createWorkspaceAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const name = field(form, "name");
  try {
    const made = await createWorkspace(ctx.deps, ctx.account.id, { name });
    await switchWorkspace(ctx.deps, ctx.session, made.id);
    return redirect("/dashboard/members?flash=workspace-created");
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "invalid_input") throw e;
    return htmlResponse(400, newWorkspacePage(ctx, name, problemOf(e)));
  }
}

// --- Settings ------------------------------------------------------------------------------------------------------

interface SettingsView {
  name?: string;
  /** A refused rename: the name as typed and its problems. */
  renameError?: FormProblem;
  /** A refused delete or leave: shown at the top. */
  error?: FormProblem;
  confirmError?: FormProblem;
  flash?: string | null;
}

function renameCard(ctx: SignedInCtx, w: WorkspaceObject, v: SettingsView): string {
  if (!roleAtLeast(w.role, "admin")) {
    return `<section class="card" aria-labelledby="ws-name-title"><h2 id="ws-name-title">Name</h2><p>${esc(w.name)}</p><p class="small muted">Admins and owners can rename the workspace.</p></section>`;
  }
  return `<form method="post" action="/dashboard/workspace/rename" class="card" aria-labelledby="ws-name-title">${csrfField(ctx.session.csrfToken)}
<h2 id="ws-name-title">Name</h2>${v.renameError ? errorSummary(v.renameError, NAME_FIELDS) : ""}
${nameInput(v.name ?? w.name, v.renameError, "Workspace name")}
<div class="actions"><button type="submit" class="btn-primary">Save name</button></div></form>`;
}

function leaveCard(ctx: SignedInCtx, w: WorkspaceObject, lastOwner: boolean): string {
  if (w.personal) return "";
  const body = lastOwner
    ? `<p>You are this workspace's only owner: make another member owner on the <a href="/dashboard/members">Members</a> page before you leave, or delete the workspace.</p>`
    : `<p>You lose access to its links, domains and keys; the keys you made in it are revoked. An admin can invite you again.</p>
<form method="post" action="/dashboard/workspace/leave" data-confirm="Leave “${esc(w.name)}”? The keys you made in it are revoked.">${csrfField(ctx.session.csrfToken)}<button type="submit" class="btn-danger">Leave workspace</button></form>`;
  return `<section class="card" aria-labelledby="ws-leave-title"><h2 id="ws-leave-title">Leave this workspace</h2>${body}</section>`;
}

function deleteCard(ctx: SignedInCtx, w: WorkspaceObject, v: SettingsView): string {
  if (w.personal) return `<section class="card" aria-labelledby="ws-delete-title"><h2 id="ws-delete-title">Delete</h2><p class="muted">This is your personal workspace: it cannot be deleted or left.</p></section>`;
  if (w.role !== "owner") return "";
  const errors = v.confirmError?.errors ?? [];
  return `<form method="post" action="/dashboard/workspace/delete" class="card" aria-labelledby="ws-delete-title">${csrfField(ctx.session.csrfToken)}
<h2 id="ws-delete-title">Delete this workspace</h2>${v.confirmError ? errorSummary(v.confirmError, CONFIRM_FIELDS) : ""}
<p>Deletes every link (their short addresses stop working at once), their clicks, and the workspace's domains, keys, webhooks and members. This cannot be undone.</p>
<label for="ws-confirm">Type <strong>${esc(w.name)}</strong> to confirm</label>
<input id="ws-confirm" name="confirm" required autocomplete="off"${invalidAttrs(errors, "/confirm", "ws-confirm")}>${fieldProblems(errors, "/confirm", CONFIRM_FIELDS["/confirm"])}
<div class="actions"><button type="submit" class="btn-danger">Delete workspace</button></div></form>`;
}

async function settingsPage(ctx: SignedInCtx, status: number, v: SettingsView = {}): Promise<Response> {
  const w = await getWorkspace(ctx.deps, ctx.caller);
  const { members } = await listMembers(ctx.deps, ctx.caller);
  const lastOwner = w.role === "owner" && members.filter((m) => m.role === "owner").length <= 1;
  const body = `<h1>Workspace settings</h1>${flashBox(v.flash ?? null)}${v.error ? errorSummary(v.error) : ""}
<dl class="facts card"><dt>Workspace</dt><dd>${esc(w.name)}${w.personal ? ' <span class="status">personal</span>' : ""}</dd>
<dt>Your role</dt><dd>${w.role}</dd><dt>Members</dt><dd><a href="/dashboard/members">${members.length} member${members.length === 1 ? "" : "s"}</a></dd><dt>Created</dt><dd>${fmtDate(w.createdAt)}</dd></dl>
${renameCard(ctx, w, v)}${leaveCard(ctx, w, lastOwner)}${deleteCard(ctx, w, v)}`;
  return htmlResponse(status, layout({ title: "Workspace settings", body, viewer: ctx.viewer }));
}

export const settingsIndex = (ctx: SignedInCtx): Promise<Response> => settingsPage(ctx, 200, { flash: ctx.url.searchParams.get("flash") });

/** Runs `act`; a refusal that belongs to the form shows the settings page again with it, anything else is thrown. */
async function onSettings(ctx: SignedInCtx, act: () => Promise<Response>, view: (p: FormProblem) => SettingsView): Promise<Response> {
  try {
    return await act();
  } catch (e) {
    if (!(e instanceof AppError) || !FORM_REFUSALS.has(e.code)) throw e;
    return settingsPage(ctx, e.status, view(problemOf(e)));
  }
}

export const renameAction = ({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> =>
  onSettings(ctx, async () => {
    await updateWorkspace(ctx.deps, ctx.caller, { name: field(form, "name") });
    return redirect("/dashboard/workspace?flash=workspace-renamed");
  }, (p) => ({ name: field(form, "name"), renameError: p }));

/** Deletes the workspace once its name is typed exactly; the session falls back to the personal workspace. */
export const deleteAction = ({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> =>
  onSettings(ctx, async () => {
    const w = await getWorkspace(ctx.deps, ctx.caller);
    if (field(form, "confirm").trim() !== w.name) {
      const message = `must be the workspace's name, “${w.name}”, typed exactly`;
      return settingsPage(ctx, 400, { confirmError: { detail: message, errors: [{ path: "/confirm", message }] } });
    }
    await deleteWorkspace(ctx.deps, ctx.caller);
    return redirect("/dashboard/links?flash=workspace-deleted");
  }, (p) => ({ error: p }));

export const leaveAction = ({ ctx }: FormCtx<SignedInCtx>): Promise<Response> =>
  onSettings(ctx, async () => {
    await leaveWorkspace(ctx.deps, ctx.caller);
    return redirect("/dashboard/links?flash=workspace-left");
  }, (p) => ({ error: p }));
