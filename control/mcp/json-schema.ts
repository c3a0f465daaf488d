/**
 * A TypeBox schema as the compact JSON Schema tools/list publishes. TypeBox spells "string or null" as an anyOf of
 * two schemas and an enumeration as an anyOf of consts; every client and model reads `type: ["string", "null"]`
 * and `enum` alike, for a fraction of the bytes. Every rewrite here accepts exactly the same values.
 *
 * In an output schema, a subschema used more than once (an analytics breakdown, one per dimension) is written once
 * under `$defs` and referred to with `$ref`: clients check outputs with a JSON Schema library (the SDK Client with
 * Ajv). Input schemas keep every field inline, since clients and models also read them field by field and not all
 * follow `$ref` (anthropics/claude-code#71807: a server with `$ref`/`$defs` schemas whose tools failed to load).
 * A definition cannot be shared between tools: clients compile each tool's schemas on their own.
 */
import type { TSchema } from "@sinclair/typebox";

export type JsonSchemaObject = { type: "object"; properties?: Record<string, object>; required?: string[]; [key: string]: unknown };
type Json = Record<string, unknown>;

/**
 * The published form of a schema: plain JSON (TypeBox's symbol keys gone), unions compacted, repeated subschemas
 * shared. `$id` is dropped because a validator such as Ajv refuses a second schema with the same `$id`, and
 * nested `title`s go once they have named their definition.
 */
export function toJsonSchema(schema: TSchema): JsonSchemaObject {
  const plain = compact(JSON.parse(JSON.stringify(schema))) as Json;
  return (SHARED in schema ? shareRepeats(plain) : dropTitles(plain)) as JsonSchemaObject;
}

const SHARED = Symbol("shared definitions");

/** An output schema whose repeated subschemas are to be written once under `$defs` (a copy; `schema` is unchanged). */
export function withSharedDefinitions<S extends TSchema>(schema: S): S {
  return Object.assign(Object.create(null), schema, { [SHARED]: true });
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const only = (s: Json, ...keys: string[]) => Object.keys(s).every((k) => keys.includes(k));

/** Compacts a schema bottom-up. */
function compact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compact);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) if (k !== "$id") out[k] = compact(v);
  if (Array.isArray(out.anyOf)) return compactUnion(out);
  return isObject(out.properties) ? compactUniformObject(out) : out;
}

/**
 * A closed object whose optional properties all take the same schema (the stats filters: one list of values per
 * dimension) is the same as its property names listed once and that schema given once.
 */
function compactUniformObject(node: Json): Json {
  const props = Object.values(node.properties as Json);
  const texts = new Set(props.map((p) => JSON.stringify(p)));
  if (node.additionalProperties !== false || node.required !== undefined || props.length < 3 || texts.size !== 1) return node;
  const { properties, ...rest } = node;
  return { ...rest, propertyNames: { enum: Object.keys(properties as Json) }, additionalProperties: props[0] };
}

/** The values a branch stands for when it is nothing but a constant, a list of constants or null. */
function constants(branch: Json): unknown[] | undefined {
  if ("const" in branch && only(branch, "const", "type")) return [branch.const];
  if (Array.isArray(branch.enum) && only(branch, "enum", "type")) return branch.enum;
  if (branch.type === "null" && only(branch, "type")) return [null];
  return undefined;
}

/**
 * An anyOf rewritten as the fewest branches accepting the same values: constants merge into one `enum`, a string
 * schema absorbs the empty-string constant when it accepts "" once its minimum length is dropped, and a single
 * schema with a plain `type` absorbs null as `type: [t, "null"]`. A description inside the only branch that has
 * one moves to the top, where clients look for it.
 */
function compactUnion(node: Json): Json {
  const { anyOf, ...rest } = node;
  const branches = (anyOf as Json[]).flatMap((b) => (Array.isArray(b.anyOf) && only(b, "anyOf") ? (b.anyOf as Json[]) : [b]));
  const values: unknown[] = [];
  let schemas: Json[] = [];
  for (const b of branches) {
    const c = constants(b);
    if (c) values.push(...c);
    else schemas.push(b);
  }
  const described = schemas.filter((s) => "description" in s);
  if (rest.description === undefined && described.length === 1) {
    rest.description = described[0].description;
    schemas = schemas.map((s) => (s === described[0] ? withoutKey(s, "description") : s));
  }
  const strings = schemas.filter((s) => s.type === "string" && s.pattern === undefined && s.format === undefined && s.const === undefined && s.enum === undefined);
  if (values.includes("") && strings.length === 1 && (strings[0].minLength === undefined || (strings[0].minLength as number) <= 1)) {
    values.splice(values.indexOf(""), 1);
    schemas = schemas.map((s) => (s === strings[0] ? withoutKey(s, "minLength") : s));
  }
  const plain = schemas.length === 1 && typeof schemas[0].type === "string" && schemas[0].anyOf === undefined;
  if (plain && values.length === 1 && values[0] === null) return { ...rest, ...schemas[0], type: [schemas[0].type, "null"] };
  if (schemas.length === 0) return { ...rest, enum: [...new Set(values)] };
  const merged = values.length ? [...schemas, { enum: [...new Set(values)] }] : schemas;
  return merged.length === 1 ? { ...rest, ...merged[0] } : { ...rest, anyOf: merged };
}

function withoutKey(s: Json, key: string): Json {
  const { [key]: _dropped, ...rest } = s;
  return rest;
}

/** Where a repeated subschema occurs: its text, how often, and the property names it stands under. */
interface Repeat {
  text: string;
  count: number;
  title?: string;
  keys: Set<string>;
  parents: Set<string>;
}

/** A repeat pays for its definition once its copies are longer than the `$ref`s that replace them. */
const MIN_SHARED_LENGTH = 80;

/**
 * Writes each object subschema that occurs more than once (and is long enough to gain from it) once under `$defs`,
 * named by its title or by the property it stands under, largest first so a definition holds the smaller ones
 * as references too.
 */
function shareRepeats(root: Json): Json {
  const defs: Record<string, Json> = {};
  for (;;) {
    const best = largestRepeat(root, defs);
    if (!best) break;
    const name = uniqueName(nameOf(best), defs);
    const definition = JSON.parse(best.text) as Json;
    delete definition.title;
    const ref = { $ref: `#/$defs/${name}` };
    root = replaceAll(root, best.text, ref) as Json;
    for (const [k, d] of Object.entries(defs)) defs[k] = replaceAll(d, best.text, ref) as Json;
    defs[name] = definition;
  }
  const out = dropTitles(root) as Json;
  return Object.keys(defs).length ? { ...out, $defs: defs } : out;
}

function largestRepeat(root: Json, defs: Record<string, Json>): Repeat | undefined {
  const seen = new Map<string, Repeat>();
  const visit = (node: unknown, key: string, parent: string) => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, key, parent));
    if (!isObject(node)) return;
    if (node.type !== undefined || node.anyOf !== undefined || node.enum !== undefined) {
      const text = JSON.stringify(node);
      const r = seen.get(text) ?? { text, count: 0, title: node.title as string | undefined, keys: new Set(), parents: new Set() };
      r.count++;
      r.keys.add(key);
      r.parents.add(parent);
      seen.set(text, r);
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === "properties" && isObject(v)) for (const [name, p] of Object.entries(v)) visit(p, name, key);
      else visit(v, key, parent);
    }
  };
  visit(root, "", "");
  for (const d of Object.values(defs)) visit(d, "", "");
  let best: Repeat | undefined;
  const gain = (r: Repeat) => (r.count - 1) * r.text.length;
  for (const r of seen.values()) {
    if (r.count > 1 && r.text.length >= MIN_SHARED_LENGTH && (!best || gain(r) > gain(best))) best = r;
  }
  return best;
}

/** A definition's name: its title, else the one property name (or the one parent's) it always stands under. */
function nameOf(r: Repeat): string {
  if (r.title) return r.title;
  const [key] = r.keys;
  if (r.keys.size === 1 && key) return key;
  const [parent] = r.parents;
  if (r.parents.size === 1 && parent) return `${parent}Item`;
  return "shared";
}

function uniqueName(name: string, defs: Record<string, Json>): string {
  let n = name;
  for (let i = 2; n in defs; i++) n = `${name}${i}`;
  return n;
}

function replaceAll(node: unknown, text: string, ref: Json): unknown {
  if (Array.isArray(node)) return node.map((n) => replaceAll(n, text, ref));
  if (!isObject(node)) return node;
  if (JSON.stringify(node) === text) return ref;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, replaceAll(v, text, ref)]));
}

/** Titles below the top only named definitions; the top's title names the tool's result. */
function dropTitles(node: unknown, top = true): unknown {
  if (Array.isArray(node)) return node.map((n) => dropTitles(n, false));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) if (!(k === "title" && !top && typeof v === "string")) out[k] = dropTitles(v, false);
  return out;
}
