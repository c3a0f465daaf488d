/**
 * The password a visitor posted on a password link's form. Only the form body is read (never the query string),
 * and at most 16 KiB of it, whatever Content-Length says: a chunked body has none, and it must not be read to
 * the server's 8 MiB limit just to find a field of at most 200 characters.
 */
const MAX_FORM_BYTES = 16_384;
const MAX_PASSWORD = 200;

/** The body's bytes, or null when it is larger than `max` (reading stops there). */
async function bodyUpTo(req: Request, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > max) return null;
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}

/** The posted password, or "" when there is none, the form is malformed or too large, or it is too long. */
export async function postedPassword(req: Request): Promise<string> {
  const type = req.headers.get("content-type") ?? "";
  const urlencoded = type.startsWith("application/x-www-form-urlencoded");
  if (!urlencoded && !type.startsWith("multipart/form-data")) return "";
  try {
    const body = await bodyUpTo(req, MAX_FORM_BYTES);
    if (body === null) return "";
    const value = urlencoded
      ? new URLSearchParams(new TextDecoder().decode(body)).get("password")
      : (await new Response(body, { headers: { "content-type": type } }).formData()).get("password");
    return typeof value === "string" && value.length <= MAX_PASSWORD ? value : "";
  } catch {
    return "";
  }
}
