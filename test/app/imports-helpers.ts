/** What the import tests share: sending a sample file to POST /api/v1/imports and waiting for its job to end. */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BASE_URL, jsonOf, type InProcessControlPlane } from "../helpers/in-process.ts";

export const FIXTURES = join(import.meta.dir, "..", "fixtures", "imports");
export const fixture = (name: string) => readFileSync(join(FIXTURES, name));

/** POST /api/v1/imports with the bytes as the body and the options in the query string. */
export function postImport(cp: InProcessControlPlane, key: string, body: Uint8Array | string, query: Record<string, string>) {
  const qs = new URLSearchParams(query).toString();
  return cp.handle(new Request(`${BASE_URL}/api/v1/imports?${qs}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "text/csv" }, body: body as BodyInit }));
}

/** The job, read until it has ended (done, failed or interrupted). */
export async function finished(cp: InProcessControlPlane, key: string, id: string): Promise<any> {
  for (let i = 0; i < 2000; i++) {
    const job = await jsonOf(await cp.request("GET", `/api/v1/imports/${id}`, { key }));
    if (!["queued", "validating", "writing"].includes(job.status)) return job;
    await Bun.sleep(5);
  }
  throw new Error(`import ${id} did not end`);
}

/** Imports a file (202 expected) and returns the ended job. */
export async function importToEnd(cp: InProcessControlPlane, key: string, body: Uint8Array | string, query: Record<string, string>): Promise<any> {
  const res = await postImport(cp, key, body, query);
  expect(res.status).toBe(202);
  const job = await jsonOf(res);
  expect(res.headers.get("location")).toBe(`/api/v1/imports/${job.id}`);
  return finished(cp, key, job.id);
}

/** The row reports of a job as "row outcome code" strings, in row order. */
export const reportsOf = (job: any) => job.rows.map((r: any) => `${r.row} ${r.outcome} ${r.code}`);

/** A link of the account by slug, as the API shows it. */
export async function linkBySlug(cp: InProcessControlPlane, key: string, slug: string): Promise<any> {
  const res = await cp.request("GET", `/api/v1/links/${encodeURIComponent(slug)}`, { key });
  expect(res.status).toBe(200);
  return jsonOf(res);
}
