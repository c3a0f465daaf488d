/** The audit log's pure parts: the entry builder, ids that keep one process's order, bulk samples, the query and cursor. */
import { describe, expect, test } from "bun:test";
import { AUDIT_LIST_MAX, auditEntry, auditId, linkDetail, sampled } from "../../control/audit/service.ts";
import { auditCursor, parseAuditQuery } from "../../control/audit/query.ts";
import { AUDIT_ACTIONS } from "../../control/audit/service.ts";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";

describe("auditEntry", () => {
  test("a Caller's key and grant become the actor; a system actor has neither", () => {
    const caller = { workspaceId: "w1", accountId: "a1", role: "owner" as const, keyId: "k1", scopes: [], grantId: "g1" };
    expect(auditEntry(caller, "link.deleted", { type: "link", id: "l1" }, { slug: "s" }, 5, "id1")).toEqual({
      id: "id1", workspaceId: "w1", at: 5, actorAccountId: "a1", actorKeyId: "k1", actorGrantId: "g1", action: "link.deleted",
      targetType: "link", targetId: "l1", detail: { slug: "s" },
    });
    expect(auditEntry({ workspaceId: "w1", accountId: null }, "session.signed_in", null, {}, 5, "id2")).toMatchObject({
      actorAccountId: null, actorKeyId: null, actorGrantId: null, targetType: null, targetId: null,
    });
  });

  test("a link's detail names the fields given, sorted, never their values", () => {
    expect(linkDetail({ slug: "s", domain: "d" }, { target: "https://x", password: "secret" })).toEqual({ slug: "s", domain: "d", fields: ["password", "target"] });
    expect(linkDetail({ slug: "s", domain: "d" })).toEqual({ slug: "s", domain: "d" });
  });

  test("a bulk sample keeps the count and the first AUDIT_LIST_MAX", () => {
    const slugs = Array.from({ length: AUDIT_LIST_MAX + 5 }, (_, i) => `s${i}`);
    expect(sampled(slugs)).toEqual({ count: AUDIT_LIST_MAX + 5, sample: slugs.slice(0, AUDIT_LIST_MAX) });
  });

  test("ids made one after another sort in that order (entries of one instant read back as recorded)", () => {
    const ids = Array.from({ length: 5_000 }, auditId);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 10)) expect(id).toMatch(/^[0-9A-Za-z]{21}$/);
  });
});

test("every action the filter offers is recorded by some service outside control/audit (no dead vocabulary)", () => {
  const root = join(import.meta.dir, "../../control");
  const sources = [...new Glob("**/*.ts").scanSync(root)].filter((f) => !f.startsWith("audit/")).map((f) => readFileSync(join(root, f), "utf8")).join("\n");
  expect(AUDIT_ACTIONS.filter((a) => !sources.includes(`"${a}"`))).toEqual([]);
});

describe("parseAuditQuery", () => {
  test("defaults, and a cursor read back as the position it was made from", () => {
    expect(parseAuditQuery({})).toEqual({ limit: 50 });
    const q = parseAuditQuery({ limit: "10", cursor: auditCursor({ at: 1_700_000_000_000, id: "0abcXYZ" }), action: "key.revoked", actor: " Ana@Example.COM " });
    expect(q).toEqual({ limit: 10, after: { at: 1_700_000_000_000, id: "0abcXYZ" }, action: "key.revoked", actor: "ana@example.com" });
    expect(parseAuditQuery({ from: "2030-01-01", to: "2030-01-02T10:00:00+02:00" })).toEqual({ limit: 50, from: Date.UTC(2030, 0, 1), to: Date.UTC(2030, 0, 2, 8) });
  });
});
