/**
 * Request bodies read up to a limit, whatever Content-Length says: a chunked body has none, and a body must never be
 * read past the limit just to learn it is too large. Every body the service reads comes through here, which is why
 * Bun.serve's own maxRequestBodySize can stay out of the way (it answers a bare 413 before the app sees the request,
 * and a chunked body over it fails the read, which used to surface as a 500).
 */

/** What a server passes Bun.serve as maxRequestBodySize: never reached, so every 413 is the app's problem+json. */
export const UNBOUNDED_BODY = Number.MAX_SAFE_INTEGER;

/** The body's bytes, or null when it is larger than `max` bytes (reading stops there, the rest is never read). */
export async function readBodyUpTo(req: Pick<Request, "headers" | "body">, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > max) return null;
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
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
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}
