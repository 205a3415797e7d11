import { Type } from "@sinclair/typebox";
import type { ToolContext } from "switchboard";
import type { Caller } from "../agent.js";
import { returns } from "../returns.js";

/** The first step of a return (dialog `returns`): only for a verified caller, and only once per return. */
export default returns.tool({
  description: "Start returning one of the caller's orders",
  parameters: Type.Object({ orderId: Type.String({ description: "The order id, e.g. A1234" }) }),
  allowedIn: ["choose_order"],
  sends: "CHOSEN",
  gate: (ctx: ToolContext<Caller>) =>
    ctx.session.verified ? undefined : { reason: "the caller is not verified", recover: "Ask for their four-digit PIN first." },
  execute: ({ orderId }, ctx) => {
    ctx.session.returnOrder = orderId.toUpperCase();
    return `Return started for order ${ctx.session.returnOrder}. Shall I book it?`;
  },
});
