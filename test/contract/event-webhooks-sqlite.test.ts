/** The EventWebhookStore contract against SQLite, on a real file (WAL) in a fresh temporary directory, and what only SQLite needs. */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { runEventWebhookContract } from "./event-webhooks.contract.ts";

const dir = join(tmpdir(), `clink-event-webhooks-${crypto.randomUUID()}`);

runEventWebhookContract("SQLite", async () => new SqliteStore(join(dir, "clink.db")), async () => rmSync(dir, { recursive: true, force: true }));

describe("SQLite event webhooks specifics", () => {
  test("the worker's writes wait for another connection's write lock (the click writer thread's) without blocking the event loop", async () => {
    const file = join(dir, "locked.db");
    const store = new SqliteStore(file);
    const writer = new Database(file);
    try {
      await store.migrate();
      await store.createAccount({ id: "a", email: "a@example.com", passwordHash: "h", createdAt: 0 });
      await store.createWebhookEndpoint({ id: "e", accountId: "a", url: "https://hooks.example.com/", secret: "whsec_c2VjcmV0", events: ["link.created"], active: true, createdAt: 0, updatedAt: 0 });
      await store.enqueueWebhookEvents([{ id: "ev", type: "link.created", accountId: "a", linkId: "l", payload: "{}", at: 1, giveUpAt: 1e12 }]);
      writer.run("BEGIN IMMEDIATE");
      let claimed: number | null = null;
      const claim = store.claimWebhookDeliveries(10, 1_000, 2, 10).then((r) => (claimed = r.length));
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      await Bun.sleep(30);
      clearInterval(timer);
      expect(claimed).toBeNull(); // still waiting for the lock...
      expect(ticks).toBeGreaterThan(5); // ...while timers kept running
      writer.run("COMMIT");
      await claim;
      expect(claimed as number | null).toBe(1);
    } finally {
      writer.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
