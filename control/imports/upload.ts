/**
 * An uploaded import file, as the API and the dashboard receive it: the raw body (the file itself, options in the
 * query string) or a multipart form (a `file` part, options as fields). Read only up to 50 MB: a larger body is
 * refused with 413 before the rest of it is read (shared/net/body.ts).
 */
import { AppError } from "../../shared/errors.ts";
import { readBodyUpTo } from "../../shared/net/body.ts";
import { IMPORT_MAX_BYTES } from "./read-file.ts";

/** Room for a multipart form's boundaries and option fields around a file of the largest size. */
const FORM_OVERHEAD = 64 * 1024;

export interface Upload {
  bytes: Uint8Array;
  fileName: string | null;
  /** The form's text fields (empty for a raw body). */
  fields: Map<string, string>;
}

const tooLarge = () => new AppError("payload_too_large", "An import file must be at most 50 MB");

export async function readUpload(request: Request): Promise<Upload> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const multipart = type === "multipart/form-data";
  const body = await readBodyUpTo(request, IMPORT_MAX_BYTES + (multipart ? FORM_OVERHEAD : 0));
  if (body === null) throw tooLarge();
  if (!multipart) return { bytes: body, fileName: null, fields: new Map() };
  let form: FormData;
  try {
    form = await new Response(body, { headers: { "content-type": request.headers.get("content-type")! } }).formData();
  } catch {
    throw new AppError("malformed_file", "The multipart form could not be read");
  }
  const fields = new Map<string, string>();
  for (const [name, value] of form.entries()) {
    if (typeof value === "string" && !fields.has(name)) fields.set(name, value);
  }
  const file = form.get("file");
  if (file === null || typeof file === "string") throw new AppError("invalid_input", "The form has no file", { errors: [{ path: "/file", message: "is required" }] });
  if (file.size > IMPORT_MAX_BYTES) throw tooLarge();
  return { bytes: new Uint8Array(await file.arrayBuffer()), fileName: file.name || null, fields };
}
