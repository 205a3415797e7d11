import { Type } from "@sinclair/typebox";
import type { ToolContext } from "switchboard";
import type { Caller } from "../agent.js";
import { returns } from "../returns.js";

/** The caller's answer to "shall I book it?" (dialog `returns`): books the return, or goes back to choosing an order. */
export default returns.tool({
  description: "Book or cancel the return the caller started, with their answer",
  parameters: Type.Object({ confirmed: Type.Boolean({ description: "true when the caller agreed to the return" }) }),
  allowedIn: ["confirm"],
  effect: "write",
  sends: (_result, { confirmed }) => (confirmed ? "CONFIRMED" : "DECLINED"),
  execute: ({ confirmed }, ctx: ToolContext<Caller>) =>
    confirmed ? `The return of order ${ctx.session.returnOrder ?? "the order"} is booked, and a prepaid label is on its way by email.` : "The return is cancelled.",
});
