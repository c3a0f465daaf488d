/** Validation of untrusted input against the TypeBox schemas, turning failures into `invalid_input`. */
import { CloneType, type TSchema, type Static } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { listed } from "./enums.ts";
import { invalidInput, type FieldError } from "./errors.ts";
import { schemaMessage } from "./messages.ts";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker<S extends TSchema>(schema: S): TypeCheck<S> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(withoutFormats(CloneType(schema)));
    compiled.set(schema, c);
  }
  return c as TypeCheck<S>;
}

/**
 * The schema without its `format`s. A format is what the published schema promises (uri, date-time); the field
 * rule behind it (link-input.ts: checkAddress, the date rule) judges the value, more precisely and in words. TypeBox
 * would instead look the format up in a process-wide registry that Elysia fills with its own, stricter checks.
 */
function withoutFormats<S>(node: S): S {
  if (Array.isArray(node)) node.forEach(withoutFormats);
  else if (typeof node === "object" && node !== null) {
    if (typeof (node as { format?: unknown }).format === "string") delete (node as { format?: unknown }).format;
    Object.values(node).forEach(withoutFormats);
  }
  return node;
}

/** Field errors for a value, at most one per path, in the words of messages.ts. */
export function schemaErrors(schema: TSchema, value: unknown, prefix = ""): FieldError[] {
  const c = checker(schema);
  if (c.Check(value)) return [];
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of c.Errors(value)) {
    const path = prefix + (e.path || "") || "/";
    if (seen.has(path)) continue;
    seen.add(path);
    // A union with one variant of the value's kind (a list of tags, "x or null"): report what is wrong inside it
    // ("must have at most 20 items") rather than every kind the union takes.
    const anyOf = (e.schema.anyOf as TSchema[] | undefined)?.filter((v) => v.const !== "" && v.type !== "null");
    const ofItsKind = anyOf?.filter((v) => v.const === undefined && ofKind(v, e.value));
    const variant = ofItsKind?.length === 1 ? ofItsKind[0] : anyOf?.length === 1 && e.value !== null ? anyOf[0] : undefined;
    if (variant && e.path) {
      out.push(...schemaErrors(variant, e.value, prefix + e.path));
    } else {
      const message = e.schema.anyOf ? unionMessage(e.schema) : schemaMessage(e, path.split("/").at(-1) ?? "");
      out.push({ path, message });
    }
    if (out.length >= 50) break;
  }
  return out.slice(0, 50);
}

/** Whether a value is of the JSON kind a schema takes (an integer schema takes any number, to say which it must be). */
function ofKind(schema: TSchema, value: unknown): boolean {
  const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  return schema.type === kind || (schema.type === "integer" && kind === "number");
}

const ARTICLE: Record<string, string> = { array: "an array", object: "an object", string: "a string", integer: "an integer", number: "a number", boolean: "true or false", null: "null" };

/** What a union accepts, said plainly ("Expected union value" tells nobody anything). */
function unionMessage(schema: TSchema): string {
  const variants = schema.anyOf as TSchema[];
  // An enumeration (shared/enums.ts): "must be active, paused or archived".
  if (variants.every((v) => typeof v.const === "string")) return `must be ${listed(variants.map((v) => v.const as string))}`;
  if (variants.every((v) => v.const !== undefined || v.type === "null" || v.type === "boolean")) {
    const values = variants.map((v) => (v.type === "boolean" ? "true, false" : JSON.stringify(v.const ?? null)));
    return `must be one of ${values.join(", ")}`;
  }
  const kinds = [...new Set(variants.map((v) => (v.const !== undefined ? JSON.stringify(v.const) : ARTICLE[v.type as string] ?? String(v.type))))];
  const description = typeof schema.description === "string" ? ` (${schema.description})` : "";
  return `must be ${kinds.slice(0, -1).join(", ")}${kinds.length > 1 ? " or " : ""}${kinds.at(-1)}${description}`;
}

/** Returns the value typed by its schema, or throws `invalid_input` listing every invalid field. */
export function validate<S extends TSchema>(schema: S, value: unknown): Static<S> {
  const errors = schemaErrors(schema, value);
  if (errors.length) throw invalidInput(errors);
  return value as Static<S>;
}
