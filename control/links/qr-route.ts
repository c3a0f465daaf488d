/** REST route for a link's QR code (issue #20): SVG by default, PNG with ?format=png; thin over links/qr.ts. */
import { Elysia } from "elysia";
import { Type as T } from "@sinclair/typebox";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { docWithSlug, slugOf, withHeaders } from "../stats/routes.ts";
import { DEFAULT_QR_STYLE, getLinkQr, QR_FORMATS, QR_LEVELS, QR_MARGIN, QR_SIZE } from "./qr.ts";

const QrQuery = T.Object({
  format: T.Optional(T.Union(QR_FORMATS.map((f) => T.Literal(f)), { description: "svg (default) or png" })),
  size: T.Optional(T.Integer({
    minimum: QR_SIZE.min, maximum: QR_SIZE.max,
    description: `Pixels: a PNG's width and height (default ${QR_SIZE.png}); an SVG's width and height attributes when given`,
  })),
  margin: T.Optional(T.Integer({ minimum: QR_MARGIN.min, maximum: QR_MARGIN.max, description: `Quiet zone around the code in modules (default ${QR_MARGIN.default})` })),
  color: T.Optional(T.String({ pattern: "^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", description: `Module colour, #rgb or #rrggbb (%23 in a URL, or without the #; default ${DEFAULT_QR_STYLE.color})` })),
  background: T.Optional(T.String({ pattern: "^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", description: `Background colour, #rgb or #rrggbb (default ${DEFAULT_QR_STYLE.background}); must differ from color` })),
  level: T.Optional(T.Union(QR_LEVELS.map((l) => T.Literal(l)), { description: `Error correction: L (7%), M (15%, default), Q (25%) or H (30%)` })),
});
const QrImage = T.String({ description: "image/svg+xml (default) or image/png: the short address with ?qr=1, so its clicks count as via=qr" });

export const linkQrRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "link-qr-routes" })
    .get("/links/:slug/qr", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return withHeaders(await getLinkQr(deps, caller, slugOf(params), new URL(request.url).searchParams), set.headers);
    }, docWithSlug("A link's QR code (SVG, or PNG with format=png), with size, margin, colours and error-correction level", { query: QrQuery, ok: [200, QrImage], okType: "image/svg+xml", badRequest: "invalid_parameter" }))
    .all("/links/:slug/qr", () => methodNotAllowed("GET"), { parse: "none", detail: { hide: true } });
