/** Shared by the stats tests: reading CSV back, and the control plane over Postgres. */
import { expect } from "bun:test";
import postgres from "postgres";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

/** An RFC 4180 reader, to check that what was written reads back as the same fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") row.push(field), (field = "");
    else if (ch === "\r" && text[i + 1] === "\n") row.push(field), rows.push(row), (row = []), (field = ""), i++;
    else field += ch;
  }
  expect(field).toBe("");
  expect(row).toEqual([]);
  return rows;
}

const pgUrl = () => process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The in-process control plane over Postgres, in a random schema dropped by close(). */
export async function startPostgresControlPlane(now: number): Promise<InProcessControlPlane> {
  const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const store = new PostgresStore(pgUrl(), { schema, max: 4 });
  await store.migrate();
  const cp = await startControlPlane({ store, now });
  return {
    ...cp,
    async close() {
      await cp.close();
      const sql = postgres(pgUrl(), { max: 1, onnotice: () => {} });
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    },
  };
}
