/**
 * GET /api/v1/links/{slug}/qr through the Elysia app in process (issue #20): a link's QR code as SVG or PNG,
 * encoding the short address with the QR marker, only for the link's owner, and every bad parameter a 400.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { qrDownload } from "../../control/dashboard/qr.ts";
import { DEFAULT_QR_STYLE, qrPng, qrSvg } from "../../control/links/qr.ts";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;

const qr = (slug: string, query = "", key = keyA) => cp.request("GET", `/api/v1/links/${slug}/qr${query}`, { key });
const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

/** A PNG's width and height, read from its IHDR chunk (after the 8-byte signature, length and type). */
function pngSize(png: Uint8Array): [number, number] {
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(new TextDecoder().decode(png.subarray(12, 16))).toBe("IHDR");
  const view = new DataView(png.buffer, png.byteOffset);
  return [view.getUint32(16), view.getUint32(20)];
}

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
  for (const json of [{ url: "https://example.com/spring", slug: "spring" }, { url: "https://example.com/crm", slug: "crm-link", externalId: "crm-7" }]) {
    expect((await cp.request("POST", "/api/v1/links", { key: keyA, json })).status).toBe(201);
  }
});
afterAll(() => cp?.close());

describe("the code", () => {
  test("is an SVG by default, of the short address with ?qr=1, as a file with the rate-limit headers", async () => {
    const res = await qr("spring");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('inline; filename="spring-qr.svg"');
    expect([res.headers.get("x-content-type-options"), res.headers.get("cache-control")]).toEqual(["nosniff", "private, no-store"]);
    expect(res.headers.get("ratelimit-limit")).toBe("100000");
    const svg = await res.text();
    expect(svg).toStartWith("<svg ");
    expect(svg).toBe(await qrSvg(`${BASE_URL}/spring?qr=1`));
    expect(svg).not.toBe(await qrSvg(`${BASE_URL}/spring`));
    expect(svg).not.toContain("width=");
  });

  test("is the same file the dashboard's download serves, and a link named by ext_ encodes its slug", async () => {
    expect(await (await qr("spring", "?format=svg")).text()).toBe(await (await qrDownload(`${BASE_URL}/spring`, "spring")).text());
    expect(await (await qr("ext_crm-7")).text()).toBe(await qrSvg(`${BASE_URL}/crm-link?qr=1`));
  });

  test("an SVG given a size carries it as its width and height", async () => {
    const svg = await (await qr("spring", "?size=300")).text();
    expect(svg).toContain('width="300" height="300"');
    expect(svg).toBe(await qrSvg(`${BASE_URL}/spring?qr=1`, 300));
  });

  test("format=png is a 512-pixel PNG of the marked address; size sets its pixels from 64 to 2048", async () => {
    const res = await qr("spring", "?format=png");
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect(res.headers.get("content-disposition")).toBe('inline; filename="spring-qr.png"');
    const png = await bytesOf(res);
    expect(pngSize(png)).toEqual([512, 512]);
    expect(png).toEqual(new Uint8Array(await qrPng(`${BASE_URL}/spring?qr=1`, 512)));
    expect(png).not.toEqual(new Uint8Array(await qrPng(`${BASE_URL}/spring`, 512)));
    for (const size of [64, 1000, 2048]) {
      expect(pngSize(await bytesOf(await qr("spring", `?size=${size}&format=png`)))).toEqual([size, size]);
    }
  });
});

describe("style: margin, colours and error-correction level", () => {
  test("each option changes the code as the renderer draws it with that option", async () => {
    const text = `${BASE_URL}/spring?qr=1`;
    const style = { margin: 0, color: "#112233", background: "#ffeedd", level: "H" as const };
    const svg = await (await qr("spring", "?margin=0&color=%23112233&background=ffeedd&level=H")).text();
    expect(svg).toBe(await qrSvg(text, undefined, style));
    expect(svg).toContain('fill="#ffeedd"');
    expect(svg).toContain('stroke="#112233"');
    expect(svg).not.toBe(await qrSvg(text));
    // #rgb is the same colour as #rrggbb; the defaults are black on white, margin 2, level M.
    expect(await (await qr("spring", "?color=%23123&background=%23FFF")).text()).toBe(await qrSvg(text, undefined, { ...DEFAULT_QR_STYLE, color: "#112233" }));
    expect(await (await qr("spring", "?margin=2&level=M&color=000000&background=ffffff")).text()).toBe(await qrSvg(text));
  });

  test("a higher error-correction level draws more modules; a larger margin a wider quiet zone", async () => {
    const modules = (svg: string) => Number(/viewBox="0 0 (\d+) /.exec(svg)![1]);
    const [low, high] = [await (await qr("spring", "?level=L&margin=0")).text(), await (await qr("spring", "?level=H&margin=0")).text()];
    expect(modules(high)).toBeGreaterThan(modules(low));
    const wide = await (await qr("spring", "?level=L&margin=16")).text();
    expect(modules(wide)).toBe(modules(low) + 32);
  });

  test("a PNG takes the same options", async () => {
    const res = await qr("spring", "?format=png&size=128&margin=4&color=%23800000&level=Q");
    expect(res.status).toBe(200);
    const png = await bytesOf(res);
    expect(pngSize(png)).toEqual([128, 128]);
    expect(png).toEqual(new Uint8Array(await qrPng(`${BASE_URL}/spring?qr=1`, 128, { ...DEFAULT_QR_STYLE, margin: 4, color: "#800000", level: "Q" })));
  });
});

describe("who may have it", () => {
  test("no key, a malformed key or an unknown key answers 401 unauthorized", async () => {
    await problemOf(await cp.request("GET", "/api/v1/links/spring/qr"), 401, "unauthorized");
    await problemOf(await qr("spring", "", "not-a-key"), 401, "unauthorized");
    await problemOf(await qr("spring", "?format=png", `ck_${"0".repeat(40)}`), 401, "unauthorized");
  });

  test("another account's link answers exactly as an unknown slug: 404 not_found", async () => {
    const [foreign, unknown] = [await problemOf(await qr("spring", "", keyB), 404, "not_found"), await problemOf(await qr("nobodys-link", "", keyB), 404, "not_found")];
    expect(JSON.stringify(foreign).replace("spring", "SLUG")).toBe(JSON.stringify(unknown).replace("nobodys-link", "SLUG"));
    await problemOf(await qr("ext_crm-7", "?format=png", keyB), 404, "not_found");
  });

  test("other methods answer 405 naming GET", async () => {
    const res = await cp.request("POST", "/api/v1/links/spring/qr", { key: keyA });
    expect(res.headers.get("allow")).toBe("GET");
    await problemOf(res, 405, "method_not_allowed");
  });
});

describe("bad parameters", () => {
  const cases: [query: string, param: string][] = [
    ["?format=gif", "format"], ["?format=", "format"], ["?format=PNG", "format"], ["?format=svg&format=png", "format"],
    ["?size=63", "size"], ["?size=2049", "size"], ["?size=abc", "size"], ["?size=", "size"], ["?size=512.5", "size"],
    ["?size=-64", "size"], ["?size=1e3", "size"], ["?format=png&size=0", "size"], ["?size=256&size=256", "size"],
    ["?width=256", "width"], ["?format=png&qr=1", "qr"],
    ["?size=10000", "size"], ["?format=png&size=10000", "size"], ["?size=100000", "size"],
    ["?margin=17", "margin"], ["?margin=-1", "margin"], ["?margin=2.5", "margin"], ["?margin=", "margin"], ["?margin=1&margin=2", "margin"],
    ["?color=red", "color"], ["?color=%2312345", "color"], ["?color=%23gggggg", "color"], ["?color=", "color"], ["?color=%23ffffffff", "color"],
    ["?background=rgb(0,0,0)", "background"], ["?background=%23%3Cscript%3E", "background"],
    ["?color=%23fff&background=ffffff", "color"], ["?color=000&background=000000", "color"],
    ["?level=X", "level"], ["?level=h", "level"], ["?level=", "level"], ["?level=L&level=H", "level"],
  ];
  for (const [query, param] of cases) {
    test(`${query} answers 400 invalid_parameter naming ${param}`, async () => {
      const problem = await problemOf(await qr("spring", query), 400, "invalid_parameter");
      expect(problem.errors?.map((e) => e.path)).toEqual([`/${param}`]);
      expect(problem.detail).toStartWith(`${param}: `);
    });
  }
});

test("the OpenAPI document lists the route with its slug, format, size and style", async () => {
  const doc = await jsonOf(await cp.request("GET", "/api/v1/openapi.json"));
  const get = doc.paths["/api/v1/links/{slug}/qr"].get;
  expect(get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(
    ["path:slug", "query:domain", "query:format", "query:size", "query:margin", "query:color", "query:background", "query:level"],
  );
  expect(get.parameters[3].schema).toMatchObject({ type: "integer", minimum: 64, maximum: 2048 });
  expect(get.responses["400"].description).toBe("invalid_parameter");
  expect(Object.keys(doc.paths["/api/v1/links/{slug}/qr"])).toEqual(["get"]);
});
