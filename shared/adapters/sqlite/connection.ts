/**
 * The SQLite connection every role of the SQLite store shares (`bun:sqlite`, WAL): the database handle and
 * the statements prepared on it, each once per connection and reused.
 */
import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** Ids per `IN (…)` list (links of a click batch, rows of an insert): far below SQLite's 32,766 variables. */
export const CLICK_CHUNK = 512;

/** How long a write waits for another connection's write lock (the click writer thread's) before failing. */
export const BUSY_TIMEOUT_MS = 5_000;

export class SqliteConnection {
  readonly db: Database;
  readonly path: string;
  private readonly statements = new Map<string, Statement>();
  private readonly closing: (() => void)[] = [];

  /** `path`: a file (its directory is created) or ":memory:". */
  constructor(path: string) {
    this.path = path;
    if (path !== ":memory:" && !path.startsWith("file:")) mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path, { create: true });
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    this.db.run("PRAGMA foreign_keys = ON");
    this.db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // 32 MiB of pages per connection, not SQLite's 2 MiB: an account's stats probe its active links' cells and
    // totals, a page each, and past 2 MiB each read fetched them again from the OS (docs/adr/0013).
    this.db.run("PRAGMA cache_size = -32768");
  }

  /** The statement for `sql`, prepared on first use (tables exist only after migrate()). */
  st<Row = unknown>(sql: string): Statement<Row> {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s as Statement<Row>;
  }

  /** Runs `release` on close(), before the database is closed (statements a role prepared itself). */
  onClose(release: () => void): void {
    this.closing.push(release);
  }

  close(): void {
    for (const release of this.closing) release();
    for (const s of this.statements.values()) s.finalize();
    this.statements.clear();
    this.db.close();
  }
}
