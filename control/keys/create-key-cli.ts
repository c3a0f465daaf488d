/**
 * `npm run create-key -- --email EMAIL [--name NAME] [--scope SCOPE]... [--create-data-dir]`: creates the account if
 * missing (printing its generated password) and prints a new API key alone on the last line, for headless setups
 * and scripts. Without --scope the key may do everything.
 *
 * It must write where the server reads: with the embedded default it refuses to start a database of its own
 * (a DATA_DIR other than the server's would hold a key the server does not know) unless --create-data-dir says so.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { openStorage, sqliteFile } from "../../shared/adapters/open.ts";
import { newToken } from "../../shared/ids.ts";
import { listed, SCOPES } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import { exitOnProblem, missingDatabaseRefusal } from "../../shared/observability/startup-checks.ts";
import { createAccount, normaliseEmail } from "../accounts/service.ts";
import { createApiKey } from "./service.ts";

const USAGE = `Usage: npm run create-key -- --email EMAIL [--name NAME] [--scope SCOPE]... [--create-data-dir]

Creates the account EMAIL if it does not exist (and prints its generated password), then prints a new API key
alone on the last line. Run it with the server's environment: the same DATA_DIR (embedded default), or the same
DATABASE_URL, DATABASE_SCHEMA and Redis settings (scale mode).

  --email EMAIL       the account (required)
  --name NAME         the key's name (default "cli")
  --scope SCOPE       what the key may do: ${listed(SCOPES)}; repeat it or give a comma
                      list (--scope links:read,stats:read); without it, every scope
  --create-data-dir   embedded default: start a new database under DATA_DIR (default ./data) when there is none;
                      without it create-key refuses, so that it never prints a key the server does not know
  -h, --help          show this help`;

const OPTIONS = {
  email: { type: "string" },
  name: { type: "string" },
  scope: { type: "string", multiple: true },
  "create-data-dir": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ options: OPTIONS, allowPositionals: false }));
  } catch (e) {
    // An unknown option or a missing value: say which, then how to call it.
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.email) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const file = sqliteFile(config);
  const refusal = missingDatabaseRefusal(config, file, existsSync(file), values["create-data-dir"] === true);
  if (refusal) {
    console.error(refusal);
    return 2;
  }
  const storageStep = config.mode === "scale" ? "database" : "data";
  const { store, hot } = await exitOnProblem(storageStep, config, () => openStorage(config));
  try {
    await exitOnProblem(storageStep, config, () => store.migrate());
    const deps = { config, store, hot, now: Date.now };
    const email = normaliseEmail(values.email);
    let account = await store.getAccountByEmail(email);
    if (!account) {
      const password = newToken().slice(0, 20);
      account = await createAccount(deps, email, password);
      console.log(`Created account ${email} with password: ${password}`);
    }
    const scopes = values.scope?.flatMap((s) => s.split(",")).map((s) => s.trim());
    const { key } = await createApiKey(deps, account.id, values.name ?? "cli", scopes);
    console.log(key);
    return 0;
  } finally {
    await hot.close();
    await store.close();
  }
}

try {
  process.exit(await main());
} catch (e) {
  if (e instanceof ConfigError || e instanceof AppError) {
    console.error(e.message + (e instanceof AppError && e.errors ? ` (${e.errors.map((x) => `${x.path} ${x.message}`).join(", ")})` : ""));
    process.exit(2);
  }
  throw e;
}
