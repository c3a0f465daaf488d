/** The Bus contract (HotState role, pub/sub): run against every adapter by hot-state.contract.ts. */
import { describe, expect, test } from "bun:test";
import type { Bus, HotStateLifecycle } from "../../shared/ports.ts";
import { instances, uid, within } from "./hot-state-harness.ts";

export function runBusContract(make: () => Promise<Bus & HotStateLifecycle>) {
  describe("pub/sub", () => {
    const instance = instances(make);

    test("a message published by one instance reaches subscribers of another, on that channel only", async () => {
      const [a, b] = [await instance(), await instance()];
      const [chan, other] = [`keys-${uid()}`, `other-${uid()}`];
      const got: string[] = [];
      const wrong: string[] = [];
      b.subscribe(chan, (m) => got.push(m));
      b.subscribe(other, (m) => wrong.push(m));
      await b.ping();
      await a.publish(chan, "revoked:k1");
      await a.publish(chan, "revoked:k2");
      await within(200, () => got.length === 2);
      expect(got).toEqual(["revoked:k1", "revoked:k2"]);
      expect(wrong).toEqual([]);
    });
  });
}
