/**
 * OAuth connections act for a workspace (issue #24): consent given while the dashboard works in a shared workspace
 * connects the application to that workspace, as the person, with the token's scopes that their role allows; once
 * the person is removed, the token is refused on the next request.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { csrfOf } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { OAuthTestClient } from "../helpers/oauth-client.ts";
import { team, type Team } from "./workspaces-helpers.ts";

let cp: InProcessControlPlane;
let oauth: OAuthTestClient;
let t: Team;

beforeAll(async () => {
  cp = await startControlPlane();
  oauth = new OAuthTestClient(BASE_URL, cp.handle);
  t = await team(cp, "oauth-owner@example.com", "OAuth Team");
});
afterAll(() => cp?.close());

test("a viewer's connection made in the team acts there as a viewer, and stops when the viewer is removed", async () => {
  const viewer = await t.join("oauth-viewer@example.com", "viewer");
  const v = oauth.visitor();
  await oauth.signIn(v, viewer.email, passwordOf(viewer.email));
  const links = await v.get("/dashboard/links");
  expect((await v.post("/dashboard/workspace/switch", { _csrf: csrfOf(links.html), workspace: t.workspaceId })).status).toBe(303);

  const client = (await oauth.register()).body;
  const { params } = oauth.authorizationParams(client.client_id, { resource: `${BASE_URL}/api/v1` });
  const consent = await v.get((await v.get(`/oauth/authorize?${new URLSearchParams(params)}`)).headers.get("location")!);
  expect(consent.html).toContain("<dt>Workspace</dt><dd>OAuth Team");

  const { tokens, status } = await oauth.connect(v, { resource: `${BASE_URL}/api/v1` });
  expect(status).toBe(200);
  const token = tokens.access_token as string;
  expect(await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: token }))).toMatchObject({ id: t.workspaceId, role: "viewer" });
  const created = await cp.request("POST", "/api/v1/links", { key: token, json: { url: "https://example.com/oauth" } });
  expect((await problemOf(created, 403, "forbidden_role")).detail).toContain("needs the member role");

  const ownerKey = await t.keyOf(t.owner);
  expect((await cp.request("DELETE", `/api/v1/workspace/members/${viewer.id}`, { key: ownerKey })).status).toBe(204);
  await problemOf(await cp.request("GET", "/api/v1/workspace", { key: token }), 401, "unauthorized");
});
