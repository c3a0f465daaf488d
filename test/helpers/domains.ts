/**
 * A verified custom domain put straight into the store, for tests about what a verified domain does (links on
 * it, Host resolution, shortUrl); how a domain gets verified (the DNS and HTTP checks) is test/app/domains-api.test.ts.
 * Redirectors on the same HotState are told, as the control plane tells them (DOMAINS_CHANGED_CHANNEL).
 */
import type { DomainRecord } from "../../shared/domain.ts";
import { newId } from "../../shared/ids.ts";
import { DOMAINS_CHANGED_CHANNEL } from "../../shared/ports.ts";
import type { InProcessControlPlane } from "./in-process.ts";

export async function putDomain(
  cp: InProcessControlPlane, workspaceId: string, hostname: string, fields: Partial<DomainRecord> = {},
): Promise<DomainRecord> {
  const now = cp.clock.now();
  const d: DomainRecord = {
    id: `dom_${newId()}`, accountId: workspaceId, hostname, method: "dns", token: `clink-verify-${newId()}`, state: "verified",
    checkedAt: now, checkOk: true, checkResult: "put by the test", verifiedAt: now, rootRedirect: null, notFoundRedirect: null,
    createdAt: now, updatedAt: now, ...fields,
  };
  if (!(await cp.deps.store.createDomain(d))) throw new Error(`${hostname} is taken`);
  await cp.deps.hot.publish(DOMAINS_CHANGED_CHANNEL, "changed");
  return d;
}
