import { Type } from "@sinclair/typebox";
import { tool, type ToolContext } from "switchboard";
import type { Desk } from "../agent.js";
import { watchKey } from "../lines.js";

/** Starts the order's watch, keyed by the caller; `notify`: if it ends during this call, the agent says so. */
export default tool({
  description: "Watch an order and tell the caller when it ships (on this call, or by calling them back)",
  parameters: Type.Object({
    orderId: Type.String({ description: "The order id, e.g. A17" }),
    account: Type.Optional(Type.String({ description: "The caller's account number, when this is not a phone call" })),
  }),
  effect: "write",
  execute: async ({ orderId, account }, ctx: ToolContext<Desk>) => {
    const key = watchKey(ctx.session.caller, account);
    if (key === undefined) return { text: "I need the caller's account number to keep the watch under: ask for it.", isError: true };
    if (ctx.workflows === undefined) return { text: "Order watches are not available here.", isError: true };
    const id = orderId.trim().toUpperCase();
    const { runId } = await ctx.workflows.start("order_watch", { orderId: id }, { key, notify: true });
    return { text: `Watching order ${id}: I'll let you know as soon as it ships.`, details: { runId, key } };
  },
});
