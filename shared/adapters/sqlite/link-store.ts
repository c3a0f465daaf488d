/**
 * The SQLite store's former name and path, kept only while control/clicks/writer-worker.ts and
 * test/helpers/in-process.ts still import it; new code imports SqliteStore from ./store.ts.
 */
export { SqliteStore as SqliteLinkStore } from "./store.ts";
