/** Validation of untrusted input against the TypeBox schemas, turning failures into `invalid_input`. */
import type { TSchema, Static } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { invalidInput, type FieldError } from "./errors.ts";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker<S extends TSchema>(schema: S): TypeCheck<S> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c as TypeCheck<S>;
}

/** Field errors for a value, at most one per path, readable by people. */
export function schemaErrors(schema: TSchema, value: unknown, prefix = ""): FieldError[] {
  const c = checker(schema);
  if (c.Check(value)) return [];
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of c.Errors(value)) {
    const path = prefix + (e.path || "") || "/";
    if (seen.has(path)) continue;
    seen.add(path);
    // "x or null" unions: report what is wrong inside the x rather than "Expected union value".
    const variants = (e.schema.anyOf as TSchema[] | undefined)?.filter((v) => v.type !== "null" && v.const !== "");
    if (variants?.length === 1 && e.value !== null && e.path) {
      out.push(...schemaErrors(variants[0], e.value, prefix + e.path));
    } else {
      const message = e.message === "Unexpected property" ? "unknown field" : e.schema.anyOf ? unionMessage(e.schema) : e.message;
      out.push({ path, message });
    }
    if (out.length >= 50) break;
  }
  return out.slice(0, 50);
}

const ARTICLE: Record<string, string> = { array: "an array", object: "an object", string: "a string", integer: "an integer", number: "a number", boolean: "true or false", null: "null" };

/** What a union accepts, said plainly ("Expected union value" tells nobody anything). */
function unionMessage(schema: TSchema): string {
  const variants = schema.anyOf as TSchema[];
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
