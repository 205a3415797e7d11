// The order-lookup tool the gateway tests give their agents (s2s and pipeline): a spoken start line, and a count
// of how often it really ran (each call must run exactly once).
import { Type } from "@sinclair/typebox";
import { tool } from "../../src/manifest/index.js";

export function countedLookupOrder() {
  let runs = 0;
  const lookupOrder = tool({
    description: "Look up an order",
    parameters: Type.Object({ orderId: Type.String() }),
    messages: { start: "Let me check that order." },
    execute: ({ orderId }) => {
      runs += 1;
      return `Order ${orderId} shipped on Friday.`;
    },
  });
  return { lookupOrder, runs: () => runs };
}
