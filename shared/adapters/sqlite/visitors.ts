/**
 * The VisitorLedger on SQLite (the embedded writer thread, on its own connection to the file): the day keys in
 * `visitor_keys`, the pairs seen in `visitor_sightings` (migration 12). A day's key and pairs are deleted once
 * a key two days newer is made, which is the port's "forgotten after two days".
 */
import type { VisitorLedger } from "../../ports.ts";
import type { SqliteConnection } from "./connection.ts";

const DAY_MS = 86_400_000;
const KEEP_MS = 2 * DAY_MS;

export class SqliteVisitorLedger implements VisitorLedger {
  constructor(private readonly c: SqliteConnection) {}

  async visitorKey(day: number): Promise<string> {
    const c = this.c;
    const fresh = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    return c.db
      .transaction(() => {
        if (c.st(`INSERT OR IGNORE INTO visitor_keys (day, key) VALUES (?, ?)`).run(day, fresh).changes === 1) {
          c.st(`DELETE FROM visitor_keys WHERE day < ?`).run(day - KEEP_MS);
          c.st(`DELETE FROM visitor_sightings WHERE day < ?`).run(day - KEEP_MS);
        }
        return c.st<{ key: string }>(`SELECT key FROM visitor_keys WHERE day = ?`).get(day)!.key;
      })
      .immediate();
  }

  async firstVisits(day: number, pairs: readonly string[]): Promise<boolean[]> {
    const insert = this.c.st(`INSERT OR IGNORE INTO visitor_sightings (day, pair) VALUES (?, ?)`);
    return this.c.db.transaction(() => pairs.map((p) => insert.run(day, p).changes === 1)).immediate();
  }

  async forgetVisits(day: number, pairs: readonly string[]): Promise<void> {
    const remove = this.c.st(`DELETE FROM visitor_sightings WHERE day = ? AND pair = ?`);
    this.c.db.transaction(() => {
      for (const p of pairs) remove.run(day, p);
    }).immediate();
  }
}
