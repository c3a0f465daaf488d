/**
 * REST routes for the caller's workspace, its members and invitations (docs/teams.md): thin handlers over
 * workspaces/service.ts. Reading needs links:read, changing links:write (as domains do), and the service checks the
 * role (admins manage members and invitations, owners delete the workspace). Making workspaces, switching and
 * accepting invitations are a person's own acts, done in the dashboard with a session.
 */
import { Elysia, t } from "elysia";
import { requireRole } from "../auth/roles.ts";
import { requireScope } from "../auth/scopes.ts";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import { CreatedInvitation, InvitationInput, InvitationObject, MemberObject, RoleInput, WorkspaceObject, WorkspaceUpdateInput } from "./model.ts";
import * as workspaces from "./service.ts";

const noContent = (headers: unknown) => new Response(null, { status: 204, headers: headers as Record<string, string> });

/** Under /api/v1. */
export const workspaceRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "workspace-routes" })
    .get("/workspace", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return workspaces.getWorkspace(deps, caller);
    }, doc("The workspace your key or token acts for, with your role in it", { ok: [200, WorkspaceObject] }))
    .patch("/workspace", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      return workspaces.updateWorkspace(deps, caller, await api.body(request));
    }, doc("Rename the workspace or set its default domain (admins and owners)", { body: WorkspaceUpdateInput, ok: [200, WorkspaceObject], badRequest: "invalid_input, invalid_json or unknown_domain" }))
    .delete("/workspace", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write", "owner");
      await workspaces.deleteWorkspace(deps, caller);
      return noContent(set.headers);
    }, doc("Delete the workspace and everything in it (owners; not a personal workspace: 409 personal_workspace)", { ok: [204, t.Null()] }))
    .get("/workspace/members", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return workspaces.listMembers(deps, caller);
    }, doc("List the workspace's members and their roles", { ok: [200, t.Object({ members: t.Array(MemberObject) })] }))
    .patch("/workspace/members/:accountId", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      return workspaces.changeMemberRole(deps, caller, params.accountId, await api.body(request));
    }, doc("Change a member's role (admins; only owners make or unmake owners; 409 last_owner)", { body: RoleInput, ok: [200, MemberObject], badRequest: "invalid_input or invalid_json" }))
    .delete("/workspace/members/:accountId", async ({ request, set, params }) => {
      // Leaving (your own account id) is anyone's right with any key; removing another is an admin's, with links:write.
      const caller = await api.guard(request, set.headers);
      if (params.accountId === caller.accountId) requireScope(caller, "links:read", deps.config.baseUrl, "api");
      else {
        requireRole(caller, "admin", "This call");
        requireScope(caller, "links:write", deps.config.baseUrl, "api");
      }
      await workspaces.removeMember(deps, caller, params.accountId);
      return noContent(set.headers);
    }, doc("Remove a member (admins; only owners remove owners), or leave with your own account id; their keys here are revoked", { ok: [204, t.Null()] }))
    .get("/workspace/invitations", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:read", "admin");
      return workspaces.listInvitations(deps, caller);
    }, doc("List the workspace's invitations, newest first (admins)", { ok: [200, t.Object({ invitations: t.Array(InvitationObject) })] }))
    .post("/workspace/invitations", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      const created = await workspaces.createInvitation(deps, caller, await api.body(request));
      set.status = 201;
      return created;
    }, doc("Invite by link (admins; only owners invite owners); the url is shown this once", { body: InvitationInput, ok: [201, CreatedInvitation], badRequest: "invalid_input or invalid_json" }))
    .delete("/workspace/invitations/:id", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      await workspaces.revokeInvitation(deps, caller, params.id);
      return noContent(set.headers);
    }, doc("Revoke a pending invitation (admins); its link stops working", { ok: [204, t.Null()] }))
    .all("/workspace", () => methodNotAllowed("GET, PATCH, DELETE"), { parse: "none", detail: { hide: true } })
    .all("/workspace/members", () => methodNotAllowed("GET"), { parse: "none", detail: { hide: true } })
    .all("/workspace/members/:accountId", () => methodNotAllowed("PATCH, DELETE"), { parse: "none", detail: { hide: true } })
    .all("/workspace/invitations", () => methodNotAllowed("GET, POST"), { parse: "none", detail: { hide: true } })
    .all("/workspace/invitations/:id", () => methodNotAllowed("DELETE"), { parse: "none", detail: { hide: true } });
