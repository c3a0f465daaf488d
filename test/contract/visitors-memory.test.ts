/** The VisitorLedger contract in process memory: one object is both clients (memory is not shared between processes). */
import { MemoryVisitorLedger } from "../../shared/adapters/memory/visitors.ts";
import { expectForgottenAfterTwoDays, runVisitorLedgerContract } from "./visitors.contract.ts";

const open = async () => {
  const ledger = new MemoryVisitorLedger();
  return { a: ledger, b: ledger, close: async () => {} };
};
runVisitorLedgerContract("memory", open);
expectForgottenAfterTwoDays("memory", open);
