/**
 * The export file's workspace records (control/ops/export-format.ts, issue #24): workspaces and members parse, a
 * member with a role that does not exist or a workspace without a name is refused naming the line and the field
 * (never the value), and the end record of a file from before workspaces counts none of them.
 */
import { describe, expect, test } from "bun:test";
import { ExportFileError, parseLine } from "../../control/ops/export-format.ts";

const line = (type: string, data: unknown) => JSON.stringify({ type, data });
const refusal = (text: string, at: number) => {
  try {
    parseLine(text, at);
  } catch (err) {
    return err instanceof ExportFileError ? err.message : String(err);
  }
  return "accepted";
};

describe("workspace records of an export file", () => {
  test("a personal and a shared workspace, a member, and a key with its maker parse as they are", () => {
    const personal = { id: "acct-1", name: "Personal", personalOf: "acct-1", createdAt: 1 };
    const shared = { id: "ws-1", name: "Acme ünï", personalOf: null, createdAt: 2 };
    const member = { workspaceId: "ws-1", accountId: "acct-1", role: "admin", createdAt: 3 };
    // With a default domain, or none (null), or, from a file written before default domains, without the field.
    const withDefault = { id: "ws-2", name: "Brand", personalOf: null, defaultDomain: "go.brand.example", createdAt: 4 };
    const noDefault = { ...withDefault, id: "ws-3", defaultDomain: null };
    for (const [type, data] of [["workspace", personal], ["workspace", shared], ["member", member], ["workspace", withDefault], ["workspace", noDefault]] as const) {
      expect(parseLine(line(type, data), 2)).toEqual({ kind: "record", record: { type, data } } as never);
    }
    const key = { id: "k", accountId: "ws-1", createdBy: "acct-1", name: "ci", keyHash: "h", prefix: "ck_AbC1", createdAt: 1, lastUsedAt: null, revokedAt: null, scopes: null };
    expect(parseLine(line("apiKey", key), 3)).toEqual({ kind: "record", record: { type: "apiKey", data: key } });
  });

  test("a member of an unknown role, a workspace without a name, a member without its account: refused, naming the field", () => {
    expect(refusal(line("member", { workspaceId: "w", accountId: "a", role: "superuser", createdAt: 1 }), 7)).toBe(
      "line 7: invalid member record at /role: must be viewer, member, admin or owner",
    );
    expect(refusal(line("workspace", { id: "w", name: "", personalOf: null, createdAt: 1 }), 8)).toStartWith("line 8: invalid workspace record at /name:");
    expect(refusal(line("member", { workspaceId: "w", role: "viewer", createdAt: 1 }), 9)).toStartWith("line 9: invalid member record at /accountId:");
    expect(refusal(line("workspace", { id: "w", name: "n", personalOf: null, defaultDomain: 7, createdAt: 1 }), 10)).toStartWith("line 10: invalid workspace record at /defaultDomain:");
  });

  test("the end record of a file from before workspaces counts none of them", () => {
    const counts = { account: 1, apiKey: 0, link: 0, cell: 0, webhookEndpoint: 0, webhookDelivery: 0, domain: 0 };
    expect(parseLine(JSON.stringify({ type: "end", counts }), 4)).toEqual({ kind: "end", counts: { ...counts, rollup: 0, workspace: 0, member: 0 } });
  });
});
