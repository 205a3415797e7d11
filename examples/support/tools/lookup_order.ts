import { Type } from "@sinclair/typebox";
import { tool, type ToolContext } from "switchboard";
import type { Caller } from "../agent.js";

/** A slow lookup (2.5 s), so the start line and the delay ladder have a gap to cover. */
export default tool({
  description: "Look up an order by its id",
  parameters: Type.Object({ orderId: Type.String({ description: "The order id, e.g. A1234" }) }),
  messages: {
    start: ["Let me check that order.", "One moment while I look that up."],
    delayed: [{ afterMs: 1200, content: "Still looking, the warehouse system is slow today." }],
    complete: [{ content: "Read the status to the caller in one sentence.", role: "system" }],
  },
  gate: (ctx: ToolContext<Caller>) =>
    ctx.session.verified ? undefined : { reason: "the caller is not verified", recover: "Ask for their four-digit PIN first." },
  execute: async ({ orderId }, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    if (ctx.signal.aborted) return { text: "The lookup was cancelled.", isError: true };
    return { text: `Order ${orderId.toUpperCase()} shipped on Friday and arrives Tuesday.`, details: { orderId, status: "shipped" } };
  },
});
