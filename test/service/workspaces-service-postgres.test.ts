/** The workspace service suite (workspaces-service-suite.ts) on Postgres, where two racing calls run on two connections. */
import { START_TIME } from "../helpers/in-process.ts";
import { startPostgresControlPlane } from "../app/stats-helpers.ts";
import { runWorkspaceServiceSuite } from "./workspaces-service-suite.ts";

runWorkspaceServiceSuite(() => startPostgresControlPlane(START_TIME));
