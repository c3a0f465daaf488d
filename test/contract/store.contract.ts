/**
 * The Store contract: every adapter (SQLite, Postgres) runs every role suite against one store of its own, so
 * the adapters are interchangeable behind each port. See store-harness.ts for what `make` and `cleanup` must do.
 */
import { describe } from "bun:test";
import type { Store } from "../../shared/ports.ts";
import { runAccountContract } from "./accounts.contract.ts";
import { runAdminContract } from "./admin.contract.ts";
import { runClickContract } from "./clicks.contract.ts";
import { runHitReservationContract } from "./hit-reservations.contract.ts";
import { runKeyContract } from "./keys.contract.ts";
import { runLinkFeatureContract } from "./link-features.contract.ts";
import { runLinkFilterCaseContract } from "./link-filter-case.contract.ts";
import { runLinkListContract } from "./link-list.contract.ts";
import { runLinkContract } from "./links.contract.ts";
import { storeContext } from "./store-harness.ts";

export function runStoreContract(name: string, make: () => Promise<Store>, cleanup?: () => Promise<void>): void {
  describe(`Store contract: ${name}`, () => {
    const ctx = storeContext(make, cleanup);
    runAdminContract(ctx);
    runAccountContract(ctx);
    runKeyContract(ctx);
    runLinkContract(ctx);
    runLinkListContract(ctx);
    runLinkFilterCaseContract(ctx);
    runLinkFeatureContract(ctx);
    runHitReservationContract(ctx);
    runClickContract(ctx);
  });
}
