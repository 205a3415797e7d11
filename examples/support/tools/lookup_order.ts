import { Type } from "@sinclair/typebox";
import { tool, type ToolContext } from "../../../src/index.js";
import type { Caller } from "../agent.js";

/** A slow lookup (1.5 s), so the start line and the delay ladder have something to cover. */
export default tool({
  description: "Look up an order by its id",
  parameters: Type.Object({ orderId: Type.String({ description: "The order id, e.g. A1234" }) }),
  messages: {
    start: true,
    delayed: [{ afterMs: 1000, content: "Still looking — the warehouse system is slow today." }],
  },
  gate: (ctx: ToolContext<Caller>) =>
    ctx.session.verified ? undefined : { reason: "the caller is not verified", recover: "Ask for their four-digit PIN first." },
  execute: async ({ orderId }, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    if (ctx.signal.aborted) return { text: "The lookup was cancelled.", isError: true };
    return { text: `Order ${orderId.toUpperCase()} shipped on Friday and arrives Tuesday.`, details: { orderId, status: "shipped", verified: ctx.session.verified } };
  },
});
