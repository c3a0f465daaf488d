/**
 * `npm run create-key -- --email EMAIL [--name NAME]`: creates the account if missing (printing its
 * generated password) and prints a new API key alone on the last line, for headless setups and scripts.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { openStorage } from "../../shared/adapters/open.ts";
import { newToken } from "../../shared/ids.ts";
import { AppError } from "../../shared/errors.ts";
import { createAccount, normaliseEmail } from "../accounts/service.ts";
import { createApiKey } from "./service.ts";

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { email: { type: "string" }, name: { type: "string" } }, allowPositionals: false });
  if (!values.email) {
    console.error("Usage: npm run create-key -- --email EMAIL [--name NAME]");
    return 2;
  }
  const config = loadConfig();
  const { store, hot } = await openStorage(config);
  try {
    await store.migrate();
    const deps = { config, store, hot, now: Date.now };
    const email = normaliseEmail(values.email);
    let account = await store.getAccountByEmail(email);
    if (!account) {
      const password = newToken().slice(0, 20);
      account = await createAccount(deps, email, password);
      console.log(`Created account ${email} with password: ${password}`);
    }
    const { key } = await createApiKey(deps, account.id, values.name ?? "cli");
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
