/** The HotState contract against the in-process adapter (embedded default). */
import { beforeEach } from "bun:test";
import { MemoryHotState } from "../../shared/adapters/memory/hot-state.ts";
import { runHotStateContract } from "./hot-state.contract.ts";

// One process holds one memory backend: every instance of a test is the same object, and each test gets a
// fresh one.
let current: MemoryHotState;
beforeEach(() => {
  current = new MemoryHotState();
});

runHotStateContract("memory", async () => current);
