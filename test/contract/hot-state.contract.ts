/**
 * The HotState contract (design §2): one suite per role (link cache, hit counters, rate limit, click queue,
 * pub/sub, MCP sessions) plus health, run against every adapter (memory, Redis, Redis Cluster). See hot-state-harness.ts for
 * what `make()` must return.
 */
import { afterAll, describe, test } from "bun:test";
import type { HotState } from "../../shared/ports.ts";
import { runClickQueueContract } from "./click-queue.contract.ts";
import { runBusContract } from "./hot-state-bus.contract.ts";
import { instances } from "./hot-state-harness.ts";
import { runHitCountersContract } from "./hot-state-hit-counters.contract.ts";
import { runLinkCacheContract } from "./hot-state-link-cache.contract.ts";
import { runMcpSessionsContract } from "./hot-state-mcp-sessions.contract.ts";
import { runRateLimiterContract } from "./hot-state-rate-limiter.contract.ts";

export function runHotStateContract(name: string, make: () => Promise<HotState>, cleanup?: () => Promise<void>) {
  describe(`HotState contract: ${name}`, () => {
    if (cleanup) afterAll(cleanup);
    runLinkCacheContract(make);
    runHitCountersContract(make);
    runRateLimiterContract(make);
    runClickQueueContract(make);
    runBusContract(make);
    runMcpSessionsContract(make);

    describe("health", () => {
      const instance = instances(make);

      test("ping resolves while the backend is up", async () => {
        const h = await instance();
        await h.ping();
      });
    });
  });
}
