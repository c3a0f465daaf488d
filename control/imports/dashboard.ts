/**
 * The dashboard's import pages (issue #25), over the same service as the API:
 *
 *   GET  /dashboard/imports        the upload form (file, format, mapping, on conflict) and the account's recent jobs
 *   POST /dashboard/imports        multipart; 303 to the job's page (POST-redirect-GET), or the form again with why
 *   GET  /dashboard/imports/:id    a <progress> bar, reloaded (Refresh header) while the job runs, then what was
 *                                  created, skipped and refused, and why, row by row
 */
import { AppError } from "../../shared/errors.ts";
import { htmlResponse, redirect } from "../dashboard/http.ts";
import { csrfField, esc, errorPage, fmtDate, layout } from "../dashboard/layout.ts";
import { requireScope } from "../auth/scopes.ts";
import { originAllowed, signedIn, toSignIn, tokensMatch, type RequestCtx, type SignedInCtx } from "../dashboard/session.ts";
import { FORMAT_NAMES, SOURCE_FORMATS } from "./formats.ts";
import { getImport, listImports, ON_CONFLICT, startImport, type ImportObject } from "./service.ts";
import { readUpload } from "./upload.ts";

/** Seconds between refreshes of a running job's page. */
const REFRESH_SECONDS = 2;
const RUNNING = new Set(["queued", "validating", "writing"]);
const OUTCOME_WORDS = { skipped: "Skipped", failed: "Refused", renamed: "Renamed" } as const;

const option = (value: string, label: string, chosen: string) => `<option value="${esc(value)}"${value === chosen ? " selected" : ""}>${esc(label)}</option>`;

function uploadForm(s: SignedInCtx, chosen: { format?: string; onConflict?: string; mapping?: string }, problem?: string): string {
  const formats = FORMAT_NAMES.map((f) => option(f, SOURCE_FORMATS[f].label, chosen.format ?? "bitly")).join("");
  const conflicts = ON_CONFLICT.map((c) => option(c, c === "skip" ? "Skip the row" : "Rename (slug-2, slug-3…)", chosen.onConflict ?? "skip")).join("");
  return `${problem ? `<p class="error" role="alert">${esc(problem)}</p>` : ""}
<form method="post" action="/dashboard/imports" enctype="multipart/form-data" class="card">${csrfField(s.viewer.csrfToken)}
<label for="import-file">Export file <span class="hint">(CSV or Kutt JSON, UTF-8, at most 50 MB)</span></label>
<input id="import-file" name="file" type="file" required accept=".csv,.json,.txt,text/csv,application/json">
<label for="import-format">From</label><select id="import-format" name="format">${formats}</select>
<label for="import-mapping">Column mapping <span class="hint">(only for “Any CSV”: e.g. {"url":"Long URL","slug":"Back-half","title":"Name","tags":"Labels"})</span></label>
<input id="import-mapping" name="mapping" maxlength="2000" value="${esc(chosen.mapping ?? "")}" autocomplete="off">
<label for="import-conflict">When a slug is taken</label><select id="import-conflict" name="onConflict">${conflicts}</select>
<p><button type="submit" class="btn-primary">Import</button></p>
<p class="small muted">The whole file is checked before anything is written. Importing the same file again changes nothing.</p></form>`;
}

function jobsTable(jobs: ImportObject[]): string {
  if (!jobs.length) return `<p class="muted">No imports yet.</p>`;
  const rows = jobs.map((j) => `<tr><td data-label="Started">${fmtDate(j.createdAt)}</td><td data-label="File"><a href="/dashboard/imports/${encodeURIComponent(j.id)}">${esc(j.fileName ?? j.id)}</a></td>
<td data-label="From">${esc(j.format)}</td><td data-label="Status">${esc(j.status)}</td><td data-label="Created">${j.counts.created}</td><td data-label="Skipped">${j.counts.skipped}</td><td data-label="Refused">${j.counts.failed}</td></tr>`);
  return `<table class="responsive"><thead><tr><th>Started</th><th>File</th><th>From</th><th>Status</th><th>Created</th><th>Skipped</th><th>Refused</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

async function importsPage(s: SignedInCtx, status = 200, chosen: Parameters<typeof uploadForm>[1] = {}, problem?: string): Promise<Response> {
  const { imports } = await listImports(s.deps, s.caller);
  const body = `<h1>Import links</h1>
<p class="muted">From Bitly, Shlink, Kutt, YOURLS or any spreadsheet: slugs, destinations, titles, tags, creation dates and click totals.</p>
${uploadForm(s, chosen, problem)}<h2>Recent imports</h2>${jobsTable(imports)}`;
  return htmlResponse(status, layout({ title: "Import links", body, viewer: s.viewer, current: "imports" }));
}

export const importsIndex = (s: SignedInCtx) => importsPage(s);

/** The upload: the session's CSRF token and our Origin required, as every dashboard form; then 303 to the job. */
export async function importUpload(ctx: RequestCtx): Promise<Response> {
  const s = await signedIn(ctx);
  if (!s) return toSignIn(ctx);
  requireScope(s.caller, "links:write", ctx.deps.config.baseUrl, "api"); // a viewer imports nothing: 403 forbidden_role
  const refused = () => errorPage(403, "Form refused", "This form could not be verified (it may have expired or come from another site). Reload the page and try again.", s.viewer);
  if (!originAllowed(ctx.deps, ctx.request)) return refused();
  let chosen: Parameters<typeof uploadForm>[1] = {};
  try {
    const upload = await readUpload(ctx.request);
    if (!tokensMatch(upload.fields.get("_csrf"), s.session.csrfToken)) return refused();
    chosen = { format: upload.fields.get("format"), onConflict: upload.fields.get("onConflict"), mapping: upload.fields.get("mapping") };
    const { job } = await startImport(ctx.deps, s.caller, upload.bytes, { ...chosen, fileName: upload.fileName });
    return redirect(`/dashboard/imports/${encodeURIComponent(job.id)}`);
  } catch (e) {
    if (!(e instanceof AppError) || e.status >= 500) throw e;
    return importsPage(s, e.status, chosen, e.message);
  }
}

function reportTable(job: ImportObject): string {
  if (!job.rows.length) return "";
  const rows = job.rows.map((r) => `<tr><td data-label="Row">${r.row}</td><td data-label="What">${OUTCOME_WORDS[r.outcome]}</td><td data-label="Slug" class="mono">${esc(r.slug ?? "")}${r.newSlug ? ` → ${esc(r.newSlug)}` : ""}</td>
<td data-label="Code" class="mono">${esc(r.code)}</td><td data-label="Why">${esc(r.message)}</td></tr>`);
  const more = job.rowsTruncated ? `<p class="small muted">The first ${job.rows.length} rows are listed; the counts above cover all.</p>` : "";
  return `<h2>Rows not imported as they were</h2><table class="responsive"><thead><tr><th>Row</th><th>What</th><th>Slug</th><th>Code</th><th>Why</th></tr></thead><tbody>${rows.join("")}</tbody></table>${more}`;
}

export async function importJobPage(s: SignedInCtx): Promise<Response> {
  const job = await getImport(s.deps, s.caller, s.params.id ?? "");
  const running = RUNNING.has(job.status);
  const percent = Math.round(job.progress * 100);
  const c = job.counts;
  const body = `<h1>Import of ${esc(job.fileName ?? job.id)}</h1>
<p><progress max="100" value="${percent}" aria-label="Import progress">${percent}%</progress> <span role="status">${esc(job.status)} · ${percent}%${job.totalRows ? ` of ${job.totalRows} rows` : ""}</span></p>
${job.error ? `<p class="error" role="alert">${esc(job.error.message)} <span class="mono small">(${esc(job.error.code)})</span></p>` : ""}
<dl class="summary"><dt>Created</dt><dd>${c.created}${c.renamed ? ` (${c.renamed} renamed)` : ""}</dd><dt>Skipped</dt><dd>${c.skipped}</dd><dt>Refused</dt><dd>${c.failed}</dd></dl>
${reportTable(job)}
<p><a href="/dashboard/imports">Import another file</a> · <a href="/dashboard/links">Your links</a> · started ${fmtDate(job.createdAt)}</p>`;
  // The Refresh header (every browser honours it, no script needed under the CSP) reloads the page while it runs.
  return htmlResponse(200, layout({ title: "Import", body, viewer: s.viewer, current: "imports" }), running ? { refresh: String(REFRESH_SECONDS) } : {});
}
