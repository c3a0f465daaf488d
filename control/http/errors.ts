/**
 * The control plane's edge: request bodies parsed under the contract's rules (JSON only, 1 MiB) and
 * every thrown value turned into problem+json once, here. Internals never reach the client.
 */
import { AppError, problemResponse, toAppError, type FieldError } from "../../shared/errors.ts";
import { readBodyUpTo } from "../../shared/net/body.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

/** Parses a JSON request body or throws the matching AppError (415, 413, 400 invalid_json). */
export async function parseJsonBody(request: Request): Promise<unknown> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json" && !type.endsWith("+json")) {
    throw new AppError("unsupported_media_type", "Send the body as application/json");
  }
  const bytes = await readBodyUpTo(request, MAX_BODY_BYTES);
  if (bytes === null) throw new AppError("payload_too_large", "The body must be at most 1 MiB");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AppError("invalid_json", "The body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("invalid_json", "The body is not valid JSON");
  }
}

interface ElysiaValidationIssue { path?: string; message?: string; summary?: string }

/** Maps an error Elysia raised itself (validation, routing, parsing) onto our contract. */
export function fromElysiaError(code: unknown, error: unknown): AppError {
  if (error instanceof AppError) return error;
  switch (code) {
    case "VALIDATION": {
      const all = ((error as { all?: ElysiaValidationIssue[] }).all ?? []).slice(0, 50);
      const errors: FieldError[] = all.map((e) => ({
        path: e.path || "/",
        message: e.message === "Unexpected property" ? "unknown field" : (e.message ?? "is invalid"),
      }));
      return new AppError("invalid_input", "One or more fields are invalid", { errors });
    }
    case "NOT_FOUND":
      return new AppError("not_found", "No such resource");
    case "PARSE":
      return new AppError("invalid_json", "The body is not valid JSON");
    default:
      return toAppError(error);
  }
}

export function errorResponse(err: AppError, headers?: Record<string, unknown>): Response {
  const extra: Record<string, string> = {};
  if (headers) for (const [k, v] of Object.entries(headers)) if (typeof v === "string") extra[k] = v;
  return problemResponse(err, extra);
}

/** 405 for a known path asked with a method it does not answer; `allow` lists the methods it does. */
export function methodNotAllowed(allow: string, detail = `Use ${allow}`): Response {
  return errorResponse(new AppError("method_not_allowed", detail), { allow });
}
