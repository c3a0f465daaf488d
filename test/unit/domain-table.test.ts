/**
 * DomainTable (redirector/domain-table.ts) on its own: a request's Host, in any spelling, names the base domain, a
 * verified custom domain or nothing; spellings it has resolved are remembered (bounded) until the next read of the
 * domains, which also forgets those of a domain no longer verified.
 */
import { afterAll, expect, test } from "bun:test";
import { DomainTable } from "../../redirector/domain-table.ts";
import { MemoryHotState } from "../../shared/adapters/memory/hot-state.ts";
import { loadConfig } from "../../shared/config.ts";

const verified = [{ hostname: "go.brand.example", rootRedirect: null, notFoundRedirect: "https://brand.example/404" }];
const table = new DomainTable(
  { listVerifiedDomains: async () => verified },
  new MemoryHotState(),
  loadConfig({ BASE_URL: "http://short.example:8080", LOG_LEVEL: "silent" }),
  { refreshMs: 60_000 },
);
afterAll(() => table.close());

test("every spelling of a host answers as its name does, however many spellings come", async () => {
  await table.ready;
  for (let round = 0; round < 2; round++) {
    expect(table.resolve("GO.Brand.Example.:443")?.domain).toBe("go.brand.example");
    expect(table.resolve("go.brand.example")?.notFoundRedirect).toBe("https://brand.example/404");
    expect(table.resolve("short.example:8080")?.domain).toBe("short.example:8080");
    expect(table.resolve("SHORT.example")?.domain).toBe("short.example:8080");
    expect(table.resolve("elsewhere.example")).toBeNull();
    expect(table.resolve("pending.brand.example:443")).toBeNull();
  }
  // More address spellings than are remembered: each still answers the base domain.
  for (let port = 1; port <= 3_000; port++) expect(table.resolve(`127.0.0.1:${port}`)?.domain).toBe("short.example:8080");
  expect(table.resolve("[::1]:9")?.domain).toBe("short.example:8080");
});

test("a domain no longer verified answers nothing after the next read, in the spellings seen before too", async () => {
  expect(table.resolve("Go.Brand.Example:8443")?.domain).toBe("go.brand.example");
  verified.length = 0;
  await table.refresh();
  expect(table.resolve("Go.Brand.Example:8443")).toBeNull();
  expect(table.resolve("go.brand.example")).toBeNull();
  expect(table.resolve("short.example:8080")?.domain).toBe("short.example:8080");
});
