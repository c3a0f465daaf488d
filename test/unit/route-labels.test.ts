/** The metrics' route label: route words kept, everything else a parameter, so series stay bounded. */
import { describe, expect, test } from "bun:test";
import { routeOf } from "../../control/ops/observe-control.ts";

describe("routeOf", () => {
  test("the analytics routes keep their words", () => {
    expect(routeOf("/api/v1/links/spring/stats")).toBe("/api/v1/links/:param/stats");
    expect(routeOf("/api/v1/links/spring/clicks.csv")).toBe("/api/v1/links/:param/clicks.csv");
    expect(routeOf("/api/v1/clicks.csv")).toBe("/api/v1/clicks.csv");
    expect(routeOf("/api/v1/stats")).toBe("/api/v1/stats");
    expect(routeOf("/dashboard/analytics")).toBe("/dashboard/analytics");
    expect(routeOf("/dashboard/analytics/clicks.csv")).toBe("/dashboard/analytics/clicks.csv");
  });

  test("the audit log's routes keep their word", () => {
    expect(routeOf("/api/v1/audit")).toBe("/api/v1/audit");
    expect(routeOf("/dashboard/audit")).toBe("/dashboard/audit");
  });

  test("slugs and ids are parameters; deep paths are cut", () => {
    expect(routeOf("/api/v1/links/anything-else")).toBe("/api/v1/links/:param");
    expect(routeOf("/a/b/c/d/e/f/g/h")).toBe("/:param/:param/:param/:param/:param/:param/…");
  });
});
