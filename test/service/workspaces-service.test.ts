/** The workspace service suite (workspaces-service-suite.ts) on SQLite. */
import { startControlPlane } from "../helpers/in-process.ts";
import { runWorkspaceServiceSuite } from "./workspaces-service-suite.ts";

runWorkspaceServiceSuite(() => startControlPlane());
