/**
 * SQLite migration 12: the VisitorLedger's tables (shared/adapters/sqlite/visitors.ts). Both hold only the last
 * two UTC days: a day's random key, and the (link, visitor) pairs seen that day, a visitor being a keyed hash
 * that cannot be turned back into an address.
 */
export const VISITOR_LEDGER_SQLITE = `
CREATE TABLE visitor_keys (
  day INTEGER PRIMARY KEY, -- start of the UTC day, epoch ms
  key TEXT NOT NULL
);
CREATE TABLE visitor_sightings (
  day  INTEGER NOT NULL,
  pair TEXT NOT NULL, -- '<link id> <visitor>'
  PRIMARY KEY (day, pair)
) WITHOUT ROWID;
`;
