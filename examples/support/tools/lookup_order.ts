import { Type } from "@sinclair/typebox";
import { tool, type ToolContext } from "../../../src/index.js";
import type { Caller } from "../agent.js";

export default tool({
  description: "Look up an order by its id",
  parameters: Type.Object({ orderId: Type.String({ description: "The order id, e.g. A1234" }) }),
  messages: {
    start: true,
    delayed: [{ afterMs: 4000, content: "Still looking — the warehouse system is slow today." }],
  },
  gate: (ctx: ToolContext<Caller>) =>
    ctx.session.verified ? undefined : { reason: "the caller is not verified", recover: "Ask for their PIN first." },
  execute: async ({ orderId }, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    return { text: `Order ${orderId} shipped on Friday.`, details: { orderId, verified: ctx.session.verified } };
  },
});
