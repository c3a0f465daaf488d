/**
 * Audit-log retention in the real embedded process (control/main.ts starts it): entries older than
 * AUDIT_RETENTION_DAYS are deleted when the control plane starts, younger ones stay. The prune itself (bounds,
 * batches, 0 keeps everything) is tested in process against a test clock in test/app/audit-retention.test.ts.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { Visitor } from "../helpers/dashboard-visitor.ts";
import { waitFor } from "../helpers/scale.ts";
import { startServer } from "../helpers/server.ts";

const DAY = 86_400_000;

test("entries past AUDIT_RETENTION_DAYS are deleted when the control plane starts; younger ones stay", async () => {
  const server = await startServer({ env: { AUDIT_RETENTION_DAYS: "30" } });
  try {
    for (const email of ["old@example.com", "young@example.com"]) {
      const res = await new Visitor(server.url).submit("/dashboard/signup", "/dashboard/signup", { email, password: "correct horse battery" });
      expect(res.status).toBe(303);
    }
    const db = new Database(join(server.dataDir, "clink.sqlite"));
    try {
      const signIns = () => db.query<{ email: string }, []>(
        "SELECT u.email FROM audit_log a JOIN accounts u ON u.id = a.actor_account_id WHERE a.action = 'session.signed_in' ORDER BY u.email",
      ).all().map((r) => r.email);
      expect(signIns()).toEqual(["old@example.com", "young@example.com"]);
      // Aged in place while the server runs (WAL lets a second connection write): 31 and 29 days old.
      const age = (email: string, days: number) =>
        db.run("UPDATE audit_log SET at = ? WHERE actor_account_id = (SELECT id FROM accounts WHERE email = ?)", [Date.now() - days * DAY, email]);
      age("old@example.com", 31);
      age("young@example.com", 29);
      await server.restart();
      await waitFor("the old entry pruned", () => signIns().length === 1 || null);
      expect(signIns()).toEqual(["young@example.com"]);
    } finally {
      db.close();
    }
  } finally {
    await server.stop();
  }
});
