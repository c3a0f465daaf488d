/** REST routes for imports (issue #25): thin handlers over imports/service.ts. */
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import { IMPORT_STATUSES } from "../../shared/ports/imports.ts";
import { FORMAT_NAMES } from "./formats.ts";
import { importRunner } from "./runner.ts";
import { getImport, listImports, ON_CONFLICT, startImport } from "./service.ts";
import { readUpload } from "./upload.ts";

const Count = t.Integer({ minimum: 0 });
const ImportJobDoc = t.Object({
  id: t.String(),
  status: t.Union(IMPORT_STATUSES.map((x) => t.Literal(x))),
  format: t.Union(FORMAT_NAMES.map((x) => t.Literal(x))),
  onConflict: t.Union(ON_CONFLICT.map((x) => t.Literal(x))),
  fileName: t.Union([t.String(), t.Null()]),
  totalRows: Count,
  progress: t.Number({ minimum: 0, maximum: 1 }),
  counts: t.Object({ created: Count, skipped: Count, renamed: Count, failed: Count }),
  rows: t.Array(t.Object({
    row: t.Integer({ minimum: 2, description: "As a spreadsheet numbers it: the header is row 1" }),
    outcome: t.Union([t.Literal("skipped"), t.Literal("failed"), t.Literal("renamed")]),
    code: t.String(), message: t.String(), slug: t.Optional(t.String()), newSlug: t.Optional(t.String()),
  }), { description: "The first 1,000 rows not created as they were" }),
  rowsTruncated: t.Boolean(),
  error: t.Union([t.Object({ code: t.String(), message: t.String() }), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  finishedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
}, { description: "An import job (docs/imports.md)" });

export function importRoutes(deps: Deps, api: ApiContext) {
  // A process starting: jobs a stopped one left under way will never finish there.
  void importRunner(deps).interruptLeftovers();
  return new Elysia({ name: "import-routes" })
    .post("/imports", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write");
      const upload = await readUpload(request);
      const q = new URL(request.url).searchParams;
      const option = (name: string) => upload.fields.get(name) ?? q.get(name);
      const { job } = await startImport(deps, caller, upload.bytes, {
        format: option("format"), onConflict: option("onConflict"), mapping: option("mapping"), fileName: upload.fileName ?? option("fileName"),
      });
      set.status = 202;
      set.headers.location = `/api/v1/imports/${job.id}`;
      return job;
    }, doc("Import links from a Bitly, Shlink, Kutt or YOURLS export or any CSV (202: a job; the body is the file, or a multipart form with a file part)", { ok: [202, ImportJobDoc], badRequest: "invalid_parameter, invalid_encoding, missing_header or malformed_file" }))
    .get("/imports", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return listImports(deps, caller);
    }, doc("The account's import jobs, newest first (at most 50)", { ok: [200, t.Object({ imports: t.Array(ImportJobDoc) })] }))
    .get("/imports/:id", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return getImport(deps, caller, params.id);
    }, doc("An import job: status, progress, counts and why rows were skipped, renamed or refused", { ok: [200, ImportJobDoc] }))
    .all("/imports", () => methodNotAllowed("GET, POST"), { parse: "none", detail: { hide: true } })
    .all("/imports/:id", () => methodNotAllowed("GET"), { parse: "none", detail: { hide: true } });
}
