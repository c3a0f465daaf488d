/** The embedded front door: which request URLs go to the control plane and which are short addresses. */
import { describe, expect, test } from "bun:test";
import { CONTROL_SEGMENTS, isControlPath } from "../../control/http/front-door.ts";
import { RESERVED_SLUGS } from "../../shared/link-input.ts";

const at = (path: string) => `http://clink.test${path}`;

describe("isControlPath", () => {
  test("each control segment, alone, with a path, a query or a fragment after it", () => {
    for (const s of CONTROL_SEGMENTS) {
      for (const tail of ["", "/", "/x/y", "?a=1", "#top"]) expect([s, tail, isControlPath(at(`/${s}${tail}`))]).toEqual([s, tail, true]);
    }
  });

  test("the root, with or without a slash, is the dashboard's", () => {
    expect(isControlPath("http://clink.test")).toBe(true);
    expect(isControlPath(at("/"))).toBe(true);
    expect(isControlPath(at("/?x=1"))).toBe(true);
  });

  test("short addresses are not, also those that only start or end like a segment, or differ in case", () => {
    for (const path of ["/abc123", "/apis", "/ap", "/api-docs", "/xapi", "/mcpx", "/API", "/Dashboard", "/oauth2", "/health", "/staticx/y", "/favicon.icx", "/a?api", "/a#api"]) {
      expect([path, isControlPath(at(path))]).toEqual([path, false]);
    }
  });

  test("a slug can never take a control segment: every one but the root is reserved", () => {
    for (const s of CONTROL_SEGMENTS) if (s !== "") expect([s, RESERVED_SLUGS.has(s)]).toEqual([s, true]);
  });
});
