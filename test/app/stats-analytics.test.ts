/** The analytics API over SQLite, in process (checks in stats-suite.ts, shared with the Postgres run), and its OpenAPI entries. */
import { expect, test } from "bun:test";
import { DIMENSION_NAMES } from "../../shared/clicks/dimensions.ts";
import { jsonOf, startControlPlane } from "../helpers/in-process.ts";
import { NOW, runAnalyticsApiSuite } from "./stats-suite.ts";

runAnalyticsApiSuite("SQLite", () => startControlPlane({ now: NOW }));

test("the OpenAPI document lists the analytics routes, every dimension as a filter parameter, and CSV as text/csv", async () => {
  const cp = await startControlPlane({ now: NOW });
  try {
    const { paths } = await jsonOf(await cp.request("GET", "/api/v1/openapi.json"));
    const names = (path: string) => paths[path].get.parameters.map((p: { name: string }) => p.name);
    expect(names("/api/v1/links/{slug}/stats")).toEqual(["slug", "domain", "from", "to", "interval", "tz", "groupBy", "bots", "limit", ...DIMENSION_NAMES]);
    expect(names("/api/v1/stats")).toEqual(["from", "to", "interval", "tz", "groupBy", "bots", "limit", ...DIMENSION_NAMES, "link", "tag", "folder"]);
    for (const path of ["/api/v1/links/{slug}/clicks.csv", "/api/v1/clicks.csv"]) {
      expect(Object.keys(paths[path].get.responses[200].content)).toEqual(["text/csv"]);
    }
    expect(names("/api/v1/clicks.csv")).toEqual(["from", "to", "tz"]);
    expect(names("/api/v1/links/{slug}/clicks.csv")).toEqual(["slug", "domain", "from", "to", "tz"]);
    expect(paths["/api/v1/stats"].get.responses[400].description).toContain("too_many_points");
  } finally {
    await cp.close();
  }
});
