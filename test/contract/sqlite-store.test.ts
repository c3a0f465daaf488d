/** The Store contract against SQLite, on a real file (WAL) in a fresh temporary directory. */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { newLinkRecord } from "../../shared/link.ts";
import { runStoreContract } from "./store.contract.ts";

// A sub-directory that does not exist yet: the adapter must create it.
const dir = join(tmpdir(), `clink-sqlite-${crypto.randomUUID()}`);
const file = join(dir, "nested", "clink.db");

runStoreContract(
  "SQLite",
  async () => new SqliteStore(file),
  async () => rmSync(dir, { recursive: true, force: true }),
);

describe("SQLite specifics", () => {
  test("a hit reservation waits for another connection's write lock (the click writer thread's) without blocking the event loop", async () => {
    const lockFile = join(tmpdir(), `clink-sqlite-lock-${crypto.randomUUID()}.db`);
    const store = new SqliteStore(lockFile);
    const writer = new Database(lockFile);
    try {
      await store.migrate();
      await store.createAccount({ id: "a", email: "a@example.com", passwordHash: "h", createdAt: 0 });
      const link = { ...newLinkRecord({ id: "L", accountId: "a", domain: "d.test", slug: "s", target: "https://example.com/", createdAt: 0 }), maxHits: 100 };
      await store.insertLinks([link]);
      writer.run("BEGIN IMMEDIATE");
      let reserved: number | null = null;
      const reservation = store.reserveHits("L", 10).then((r) => (reserved = r!.reserved));
      // On a loaded machine (parallel test files) a few windows may be needed; blocked, the first lasts 5 s.
      let ticks = 0;
      for (const until = Date.now() + 1_000; ticks <= 5 && Date.now() < until; ) ticks += await ticksDuring(30);
      expect(reserved).toBeNull(); // still waiting for the lock...
      expect(ticks).toBeGreaterThan(5); // ...while timers kept running
      writer.run("COMMIT");
      await reservation;
      expect(reserved as number | null).toBe(10);
    } finally {
      writer.close();
      await store.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(lockFile + suffix, { force: true });
    }
  });
});

/** How many 1 ms timers fire in `ms`: about ms when the event loop is free, none while it is blocked. */
async function ticksDuring(ms: number): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  await Bun.sleep(ms);
  clearInterval(timer);
  return ticks;
}
