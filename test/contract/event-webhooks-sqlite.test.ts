/** The EventWebhookStore contract against SQLite, on a real file (WAL) in a fresh temporary directory, and what only SQLite needs. */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUSY_TIMEOUT_MS } from "../../shared/adapters/sqlite/connection.ts";
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
      const sleptFrom = performance.now();
      const claim = store.claimWebhookDeliveries(10, 1_000, 2, 10).then((r) => (claimed = r.length));
      // A write that waited inside SQLite (busy_timeout) would hold the event loop until the lock's 5 s timeout: the
      // claim's call, and the 30 ms timer after it, would end only then. Counting 1 ms ticks instead failed on a machine whose cores a full run
      // saturated (1 tick in 30 ms), so the bound is what blocking would cost, not the timer's precision.
      await Bun.sleep(30);
      const slept = performance.now() - sleptFrom;
      expect(claimed).toBeNull(); // still waiting for the lock...
      expect(slept).toBeLessThan(BUSY_TIMEOUT_MS / 2); // ...while timers kept running
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
