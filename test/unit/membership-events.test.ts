/** Whom a membership change concerns (control/workspaces/membership-events.ts): cached callers are forgotten by it. */
import { expect, test } from "bun:test";
import { concerns, membershipMessage } from "../../control/workspaces/membership-events.ts";

const alice = { workspaceId: "ws_1", accountId: "alice" };

test("a change of a member concerns that member's callers in that workspace only", () => {
  expect(concerns(membershipMessage("ws_1", "alice"), alice)).toBe(true);
  expect(concerns(membershipMessage("ws_1", "bob"), alice)).toBe(false);
  expect(concerns(membershipMessage("ws_2", "alice"), alice)).toBe(false);
});

test("a deleted workspace concerns all its members", () => {
  expect(concerns(membershipMessage("ws_1", "*"), alice)).toBe(true);
  expect(concerns(membershipMessage("ws_2", "*"), alice)).toBe(false);
});

test("a message in another form concerns everyone (forgetting too much is only slower)", () => {
  for (const m of ["", "ws_1", "ws_1 alice extra", "changed"]) expect(concerns(m, alice)).toBe(true);
});
