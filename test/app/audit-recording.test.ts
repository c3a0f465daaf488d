/**
 * What the audit log records, in process (issue #24): each link operation through REST, MCP and the service's bulk
 * and import paths writes one entry naming the actor's key, what changed (field names, never values) and on what;
 * a failing audit write never fails the operation, and is counted for /metrics.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auditWrites } from "../../control/audit/service.ts";
import type { ListedAuditEntry } from "../../shared/ports.ts";
import { Metrics } from "../../shared/observability/metrics.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, type InProcessControlPlane, type TestKey } from "../helpers/in-process.ts";
import { importToEnd } from "./imports-helpers.ts";
import { signedInVisitor, Visitor } from "../helpers/dashboard-visitor.ts";
import { OAuthTestClient } from "../helpers/oauth-client.ts";

let cp: InProcessControlPlane;
let owner: TestKey;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000", WEBHOOK_ALLOW_PRIVATE: "true" } });
  owner = await cp.createKey("audit-recording@example.com");
});
afterAll(async () => {
  await cp?.close();
});

/** The workspace's entries recorded by `run`, oldest first. */
async function recorded(run: () => Promise<unknown>, workspaceId = owner.caller.workspaceId): Promise<ListedAuditEntry[]> {
  cp.clock.advance(60_000);
  const from = cp.clock.now();
  await run();
  return (await cp.deps.store.listAudit(workspaceId, { limit: 100, from })).reverse();
}
const call = async (method: string, path: string, json?: unknown, status = 200) => {
  const res = await cp.request(method, path, { key: owner.key, json });
  expect(res.status).toBe(status);
  return jsonOf(res);
};
/** Who: the owner, with the key. */
const byKey = () => ({ actorAccountId: owner.account.id, actorKeyId: owner.caller.keyId, actorGrantId: null, actorEmail: "audit-recording@example.com" });

describe("links", () => {
  test("REST create, update (the fields given, no values), delete: one entry each, by the key", async () => {
    let id = "";
    const created = await recorded(async () => {
      await call("POST", "/api/v1/links", { url: "https://example.com/a", slug: "audited-a" }, 201);
      id = (await cp.deps.store.getLink(cp.deps.config.defaultDomain, "audited-a"))!.id;
    });
    expect(created).toEqual([{
      id: expect.any(String), workspaceId: owner.caller.workspaceId, at: expect.any(Number), ...byKey(), action: "link.created",
      targetType: "link", targetId: id, detail: { slug: "audited-a", domain: cp.deps.config.defaultDomain },
    }]);
    const updated = await recorded(() => call("PATCH", "/api/v1/links/audited-a", { targetUrl: "https://example.com/b", password: "hunter2-secret", tags: ["x"] }));
    expect(updated.map((e) => [e.action, e.targetId, e.detail])).toEqual([
      ["link.updated", id, { slug: "audited-a", domain: cp.deps.config.defaultDomain, fields: ["password", "tags", "target"] }],
    ]);
    expect(JSON.stringify(updated)).not.toContain("hunter2");
    const deleted = await recorded(() => call("DELETE", "/api/v1/links/audited-a", undefined, 204));
    expect(deleted.map((e) => [e.action, e.targetId, e.detail.slug])).toEqual([["link.deleted", id, "audited-a"]]);
  });

  test("a create naming an existing externalId is recorded as that link's update", async () => {
    await call("POST", "/api/v1/links", { url: "https://example.com/ext", externalId: "crm-audit-1" }, 201);
    const upsert = await recorded(() => call("POST", "/api/v1/links", { url: "https://example.com/ext2", externalId: "crm-audit-1" }, 200));
    expect(upsert.map((e) => [e.action, e.detail.fields])).toEqual([["link.updated", ["externalId", "target"]]]);
  });

  test("MCP create_link: an entry with the key MCP was called with", async () => {
    const client = new Client({ name: "audit-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${owner.key}` } },
      fetch: (url, init) => cp.handle(new Request(url, init)),
    }));
    try {
      const entries = await recorded(async () => {
        const r = await client.callTool({ name: "create_link", arguments: { url: "https://example.com/mcp", slug: "audited-mcp" } });
        expect(r.isError).toBeFalsy();
      });
      expect(entries.map((e) => [e.action, e.actorKeyId, e.actorAccountId, e.detail.slug])).toEqual([["link.created", owner.caller.keyId, owner.account.id, "audited-mcp"]]);
    } finally {
      await client.close();
    }
  });

  test("bulk create, change and delete: one entry per call with the count and the slugs", async () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ url: `https://example.com/bulk/${i}`, slug: `audited-bulk-${i}` }));
    const slugs = rows.map((r) => r.slug);
    const created = await recorded(() => call("POST", "/api/v1/bulk", [...rows, { url: "javascript:alert(1)" }]));
    expect(created.map((e) => [e.action, e.targetType, e.detail])).toEqual([
      ["links.bulk_created", null, { count: 25, slugs: slugs.slice(0, 20), created: 25, updated: 0, failed: 1 }],
    ]);
    const changed = await recorded(() => call("PATCH", "/api/v1/links/bulk", { slugs: slugs.slice(0, 3), changes: { folder: "archive" } }));
    expect(changed.map((e) => [e.action, e.detail])).toEqual([["links.bulk_updated", { count: 3, slugs: slugs.slice(0, 3), fields: ["folder"], failed: 0 }]]);
    const deleted = await recorded(() => call("POST", "/api/v1/links/bulk-delete", { slugs: [...slugs.slice(0, 2), "no-such-link"] }));
    expect(deleted.map((e) => [e.action, e.detail])).toEqual([["links.bulk_deleted", { count: 2, slugs: slugs.slice(0, 2), failed: 1 }]]);
    // A call that changed nothing leaves no entry.
    expect(await recorded(() => call("POST", "/api/v1/links/bulk-delete", { slugs: ["no-such-link"] }))).toEqual([]);
  });

  test("an import: one entry when it finishes, with its counts (not one per chunk of links)", async () => {
    const csv = "long_url,link\nhttps://example.com/imp1,https://bit.ly/audit-one\nhttps://example.com/imp2,https://bit.ly/audit-two\n";
    let jobId = "";
    const entries = await recorded(async () => {
      jobId = (await importToEnd(cp, owner.key, csv, { format: "bitly" })).id;
    });
    expect(entries.map((e) => [e.action, e.targetType, e.targetId, e.detail.status, e.detail.created, e.actorKeyId])).toEqual([
      ["import.finished", "import", jobId, "done", 2, owner.caller.keyId],
    ]);
  });
});

describe("domains, webhooks, sessions and OAuth connections", () => {
  test("a domain added, changed, verified and deleted", async () => {
    const hostname = `audit-${crypto.randomUUID().slice(0, 8)}.example.com`;
    let d: { id: string; challenge: { value: string } } = { id: "", challenge: { value: "" } };
    const added = await recorded(async () => (d = await call("POST", "/api/v1/domains", { hostname }, 201)));
    expect(added.map((e) => [e.action, e.targetType, e.targetId, e.detail, e.actorKeyId])).toEqual([
      ["domain.created", "domain", d.id, { hostname, method: "dns" }, owner.caller.keyId],
    ]);
    const changed = await recorded(() => call("PATCH", `/api/v1/domains/${d.id}`, { rootRedirect: "https://example.com/home" }));
    expect(changed.map((e) => [e.action, e.detail])).toEqual([["domain.updated", { hostname, fields: ["rootRedirect"] }]]);
    // A failed check records nothing; the first passing one records the verification, a second one nothing more.
    cp.deps.domainChecks = { resolveTxt: async () => [] };
    expect(await recorded(() => call("POST", `/api/v1/domains/${d.id}/verify`))).toEqual([]);
    cp.deps.domainChecks = { resolveTxt: async () => [[d.challenge.value]] };
    const verified = await recorded(async () => {
      expect((await call("POST", `/api/v1/domains/${d.id}/verify`)).state).toBe("verified");
      await call("POST", `/api/v1/domains/${d.id}/verify`);
    });
    expect(verified.map((e) => [e.action, e.detail])).toEqual([["domain.verified", { hostname, method: "dns" }]]);
    const deleted = await recorded(() => call("DELETE", `/api/v1/domains/${d.id}`, undefined, 204));
    expect(deleted.map((e) => [e.action, e.detail])).toEqual([["domain.deleted", { hostname, links: 0, linksDeleted: false }]]);
  });

  test("an API key made and revoked: its name and scopes, never the key", async () => {
    let made = { key: "", id: "" };
    const entries = await recorded(async () => {
      const k = await cp.createKey("audit-recording@example.com", "deploy bot");
      made = { key: k.key, id: k.caller.keyId! };
      await cp.auth.revoke(owner.caller, made.id);
    });
    expect(entries.map((e) => [e.action, e.targetId, e.detail.name, e.actorAccountId, e.actorKeyId])).toEqual([
      ["key.created", made.id, "deploy bot", owner.account.id, null],
      ["key.revoked", made.id, "deploy bot", owner.account.id, owner.caller.keyId],
    ]);
    expect(JSON.stringify(entries)).not.toContain(made.key);
  });

  test("a webhook endpoint created and deleted; its secret and URL path are not in the entry", async () => {
    let endpoint: { id: string; secret: string } = { id: "", secret: "" };
    const entries = await recorded(async () => {
      endpoint = await call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["link.created"] }, 201);
      await call("DELETE", `/api/v1/webhooks/${endpoint.id}`, undefined, 204);
    });
    expect(entries.map((e) => [e.action, e.targetId, e.detail])).toEqual([
      ["webhook.created", endpoint.id, { host: "127.0.0.1:9", events: ["link.created"] }],
      ["webhook.deleted", endpoint.id, {}],
    ]);
    expect(JSON.stringify(entries)).not.toContain(endpoint.secret);
  });

  test("dashboard sign-in and sign-out, by the person with no key", async () => {
    const email = "audit-session@example.com";
    const account = await cp.account(email);
    const entries = await recorded(async () => {
      const v = await signedInVisitor(cp, BASE_URL, email, passwordOf(email));
      expect((await v.submit("/dashboard/links", "/dashboard/signout", {})).status).toBe(303);
    }, account.id);
    expect(entries.map((e) => [e.action, e.actorAccountId, e.actorKeyId, e.actorEmail])).toEqual([
      ["session.signed_in", account.id, null, email],
      ["session.signed_out", account.id, null, email],
    ]);
  });

  test("a wrong password for an account is recorded as a failed sign-in; an unknown email records nothing", async () => {
    const email = "audit-failed@example.com";
    const account = await cp.account(email);
    const entries = await recorded(async () => {
      const v = new Visitor(BASE_URL, cp.handle);
      expect((await v.submit("/dashboard/signin", "/dashboard/signin", { email, password: "not-the-password" })).status).toBe(401);
      expect((await v.submit("/dashboard/signin", "/dashboard/signin", { email: "nobody-here@example.com", password: "whatever-1234" })).status).toBe(401);
    }, account.id);
    expect(entries.map((e) => [e.action, e.actorAccountId, e.actorKeyId, e.targetType, e.detail])).toEqual([["session.sign_in_failed", account.id, null, null, {}]]);
  });

  test("an OAuth application connected, acting through its grant, and disconnected", async () => {
    const oauth = new OAuthTestClient(BASE_URL, cp.handle);
    const email = "audit-oauth@example.com";
    const account = await cp.account(email);
    const v = oauth.visitor();
    await oauth.signIn(v, email, passwordOf(email));
    let token = "";
    const connected = await recorded(async () => {
      const c = await oauth.connect(v, { resource: `${BASE_URL}/api/v1` });
      token = c.tokens.access_token;
    }, account.id);
    const grantId = connected[0]?.targetId;
    expect(connected.map((e) => [e.action, e.targetType, e.actorAccountId, e.detail.scopes])).toEqual([
      ["oauth.connected", "oauth_grant", account.id, ["links:read", "links:write"]],
    ]);
    const created = await recorded(async () => {
      const res = await cp.request("POST", "/api/v1/links", { headers: { authorization: `Bearer ${token}` }, json: { url: "https://example.com/oauth" } });
      expect(res.status).toBe(201);
    }, account.id);
    expect(created.map((e) => [e.action, e.actorAccountId, e.actorKeyId, e.actorGrantId])).toEqual([["link.created", account.id, null, grantId]]);
    const revoked = await recorded(async () => {
      expect((await oauth.form("/oauth/revoke", { token, client_id: connected[0]!.detail.clientId as string })).status).toBe(200);
      // Revoked again later: the grant keeps its first revocation, and its one entry.
      cp.clock.advance(1);
      expect((await oauth.form("/oauth/revoke", { token, client_id: connected[0]!.detail.clientId as string })).status).toBe(200);
    }, account.id);
    expect(revoked.map((e) => [e.action, e.targetId, e.actorAccountId, e.actorGrantId])).toEqual([["oauth.disconnected", grantId, account.id, grantId]]);
  });
});

describe("a failing audit write", () => {
  test("never fails the operation: it is logged, counted, and shown by /metrics", async () => {
    const store = cp.deps.store;
    const append = store.appendAudit;
    const before = auditWrites.failed;
    const warn = console.warn;
    const warned: string[] = [];
    console.warn = (msg: string) => void warned.push(msg);
    cp.deps.config.logLevel = "info";
    store.appendAudit = async () => {
      throw new Error("disk full");
    };
    try {
      await call("POST", "/api/v1/links", { url: "https://example.com/unaudited", slug: "audited-fails" }, 201);
    } finally {
      store.appendAudit = append;
      console.warn = warn;
      cp.deps.config.logLevel = "silent";
    }
    expect(await cp.deps.store.getLink(cp.deps.config.defaultDomain, "audited-fails")).not.toBeNull();
    expect(auditWrites.failed).toBe(before + 1);
    expect(warned).toEqual(["audit log: 1 entry (link.created) not written: disk full"]);
    const metrics = new Metrics("control", { defaultMetrics: false });
    metrics.watchAuditWrites(auditWrites);
    expect(await metrics.registry.getSingleMetricAsString("clink_audit_write_failures_total")).toContain(`clink_audit_write_failures_total ${before + 1}`);
  });
});
