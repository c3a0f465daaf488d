/**
 * control/mcp/json-schema.ts: the compact schemas tools/list publishes accept exactly what TypeBox's own JSON
 * accepts, judged by the SDK Client's validator (Ajv, with formats) on valid and invalid inputs and outputs of
 * the tools; and what the compaction writes (type arrays, enums, $defs only in outputs).
 */
import { describe, expect, test } from "bun:test";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { Type as T } from "@sinclair/typebox";
import { toJsonSchema, withSharedDefinitions } from "../../control/mcp/json-schema.ts";
import { LINK_TOOLS } from "../../control/mcp/tools.ts";
import { linkObject } from "../helpers/in-process.ts";

const tool = (name: string) => LINK_TOOLS.find((t) => t.name === name)!;

/** The verdicts of TypeBox's plain JSON and of the published schema on each value. */
function verdicts(schema: object, published: object, values: unknown[]): [boolean[], boolean[]] {
  const check = (s: object) => {
    const validate = new AjvJsonSchemaValidator().getValidator(s as never);
    return values.map((v) => validate(v).valid);
  };
  return [check(schema), check(published)];
}

const plain = (s: object) => JSON.parse(JSON.stringify(s));

const U = "https://example.com/";
const INPUTS: unknown[] = [
  { url: U }, { url: U, slug: "spring-sale", tags: "a, b", folder: "", maxHits: "", expiresAt: "2030-01-31T12:00:00Z", startsAt: null },
  { url: U, tags: ["a", "b"], serveOg: "on", rules: [{ kind: "device", match: "ios", url: U }], abUrls: [{ url: U, weight: 0.5 }] },
  { url: U, rules: "", abUrls: null, webhookUrl: "", ogImageUrl: null, externalId: "crm-1", password: null, status: "paused" },
  {}, { url: "" }, { url: 5 }, { url: U, slug: "a b" }, { url: U, slug: "ab" }, { url: U, maxHits: 0 }, { url: U, maxHits: 1.5 },
  { url: U, tags: Array(21).fill("t") }, { url: U, tags: ["t".repeat(41)] }, { url: U, serveOg: "yes" }, { url: U, status: "gone" },
  { url: U, rules: [{ kind: "planet", match: "x", url: U }] }, { url: U, abUrls: [{ url: U, weight: 0 }] }, { url: U, extra: 1 },
  { url: U, expiresAt: "soon" }, { url: U, expiresAt: 5 }, { url: U, folder: "f".repeat(81) }, { url: "not a uri" }, null, [],
];

describe("the published schemas accept exactly what TypeBox's JSON accepts", () => {
  test("create_link, bulk_create_links and update_link inputs, valid and invalid", () => {
    const [given, published] = verdicts(plain(tool("create_link").input), toJsonSchema(tool("create_link").input), INPUTS);
    expect(published).toEqual(given);
    expect(given.filter(Boolean).length).toBe(4);
    const bulk = INPUTS.map((i) => ({ links: [i] }));
    const [b1, b2] = verdicts(plain(tool("bulk_create_links").input), toJsonSchema(tool("bulk_create_links").input), bulk);
    expect(b2).toEqual(b1);
    const updates = INPUTS.map((i) => (i && typeof i === "object" && !Array.isArray(i) ? { slug: "spring-sale", ...i, url: undefined } : i));
    const [u1, u2] = verdicts(plain(tool("update_link").input), toJsonSchema(tool("update_link").input), JSON.parse(JSON.stringify(updates)));
    expect(u2).toEqual(u1);
  });

  test("get_link_stats filters: a closed object of equal properties written as property names and one schema", () => {
    const values = [{}, { filters: { country: ["DE", null] } }, { filters: { colour: ["red"] } }, { filters: { device: [] } }, { filters: { tag: ["x".repeat(201)] } }];
    const published = toJsonSchema(tool("get_link_stats").input);
    const filters = (published.properties as any).filters;
    expect([filters.properties, filters.propertyNames.enum.includes("country"), filters.propertyNames.enum.includes("link"), filters.additionalProperties.type])
      .toEqual([undefined, true, true, "array"]);
    const [given, compacted] = verdicts(plain(tool("get_link_stats").input), published, values);
    expect([compacted, given]).toEqual([[true, true, false, false, false], [true, true, false, false, false]]);
  });

  test("the link output, valid and broken, and the analytics output through $ref", () => {
    const link = linkObject("spring", U, { rules: [{ kind: "country", match: "DE", url: U }], expiresAt: "2031-01-01T00:00:00.000Z" });
    const links = [link, { ...link, state: "gone" }, { ...link, createdAt: 5 }, { ...link, rules: [{ kind: "device", match: "fridge", url: U }] }, { ...link, maxHits: 0 }, { ...link, tags: null }];
    const [given, published] = verdicts(plain(tool("get_link").output), toJsonSchema(tool("get_link").output), links);
    expect([given, published]).toEqual([[true, false, false, false, false, false], [true, false, false, false, false, false]]);
    const counts = { clicks: 1, visitors: 1 };
    const analytics = { from: "2030-01-01T00:00:00Z", to: "2030-01-02T00:00:00Z", interval: "hour", tz: "UTC", bots: "exclude", filters: {}, totals: counts, series: [], breakdowns: { country: { rows: [{ value: "DE", ...counts }], other: counts } } };
    const stats = [analytics, { ...analytics, breakdowns: { country: { rows: [{ value: "DE", clicks: "1", visitors: 1 }], other: counts } } }, { ...analytics, interval: "minute" }];
    const out = toJsonSchema(tool("get_link_stats").output);
    expect(JSON.stringify(out)).toContain('"$ref":"#/$defs/');
    const [g, p] = verdicts(plain(tool("get_link_stats").output), out, stats);
    expect([g, p]).toEqual([[true, false, false], [true, false, false]]);
  });
});

describe("what the compaction writes", () => {
  test("null and constants: type arrays and one enum; the empty string kept apart from a format it does not meet", () => {
    const s = T.Object({
      a: T.Union([T.String({ maxLength: 3 }), T.Null()], { description: "a" }),
      b: T.Union([T.Literal("x"), T.Literal("y"), T.Null()], { description: "b" }),
      c: T.Union([T.String({ minLength: 1, maxLength: 9, description: "c" }), T.Literal(""), T.Null()]),
      d: T.Union([T.String({ format: "uri" }), T.Literal(""), T.Null()], { description: "d" }),
    }, { title: "Named" });
    expect(toJsonSchema(s)).toEqual({
      title: "Named", type: "object", required: ["a", "b", "c", "d"], properties: {
        a: { description: "a", maxLength: 3, type: ["string", "null"] },
        b: { description: "b", enum: ["x", "y", null] },
        c: { description: "c", maxLength: 9, type: ["string", "null"] },
        d: { description: "d", anyOf: [{ format: "uri", type: "string" }, { enum: ["", null] }] },
      },
    });
  });

  test("a subschema repeated in an output schema is defined once, named by its title; never in an input schema", () => {
    const Item = T.Object({ x: T.Integer({ description: "a number that is long enough to share" }), y: T.String() }, { title: "Item" });
    const s = T.Object({ one: Item, two: Item, many: T.Array(Item) });
    const shared = toJsonSchema(withSharedDefinitions(s));
    expect(shared.properties).toEqual({ one: { $ref: "#/$defs/Item" }, two: { $ref: "#/$defs/Item" }, many: { type: "array", items: { $ref: "#/$defs/Item" } } });
    expect((shared.$defs as any).Item.title).toBeUndefined();
    expect(JSON.stringify(toJsonSchema(s))).not.toContain("$ref");
  });
});
