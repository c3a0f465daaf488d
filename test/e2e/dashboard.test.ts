/**
 * The dashboard against the real embedded server process: only what needs the process itself. Sessions past their
 * expiry are purged by the control plane when it starts (control/main.ts starts the purge), with nobody presenting
 * them. Everything else of the dashboard (sign-in, cookies, CSRF and Origin, the sign-in limit, escaping, the link
 * form, pages, keys shown once, other accounts' links, SIGNUP=closed) is tested in process in
 * test/app/dashboard.test.ts, test/app/dashboard-link-form.test.ts and test/app/e2e-ported.test.ts.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Visitor } from "../helpers/dashboard-visitor.ts";
import { waitFor } from "../helpers/scale.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

async function signUp(server: TestServer, email: string, password = "correct horse battery"): Promise<Visitor> {
  const v = new Visitor(server.url);
  const res = await v.submit("/dashboard/signup", "/dashboard/signup", { email, password });
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe("/dashboard/links?flash=welcome");
  return v;
}

describe("dashboard sessions past their expiry", () => {
  test("are removed when the control plane starts (and hourly after), without anyone presenting them", async () => {
    const server = await startServer();
    try {
      const kept = await signUp(server, "kept@example.com");
      await signUp(server, "aged@example.com");
      const db = new Database(join(server.dataDir, "clink.sqlite"));
      try {
        // Aged in place while the server runs (WAL lets a second connection write); nobody presents it again.
        db.run("UPDATE sessions SET expires_at = ? WHERE account_id = (SELECT id FROM accounts WHERE email = ?)", [Date.now() - 1000, "aged@example.com"]);
        const owners = () => db.query<{ email: string }, []>("SELECT a.email FROM sessions s JOIN accounts a ON a.id = s.account_id ORDER BY a.email").all().map((r) => r.email);
        expect(owners()).toEqual(["aged@example.com", "kept@example.com"]);
        await server.restart();
        await waitFor("the expired session purged", () => owners().length === 1 || null);
        expect(owners()).toEqual(["kept@example.com"]);
      } finally {
        db.close();
      }
      expect((await kept.get("/dashboard/links")).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
