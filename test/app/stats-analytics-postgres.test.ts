/**
 * The analytics API over Postgres (DATABASE_URL_TEST, the local test database by default), in a random schema
 * dropped afterwards; an unreachable Postgres fails the suite. Same checks as the SQLite run (stats-suite.ts).
 */
import { startPostgresControlPlane } from "./stats-helpers.ts";
import { NOW, runAnalyticsApiSuite } from "./stats-suite.ts";

runAnalyticsApiSuite("Postgres", () => startPostgresControlPlane(NOW));
