import { Type } from "@sinclair/typebox";
import { tool, type ToolContext } from "switchboard";
import type { Desk } from "../agent.js";

/** On a call the desk placed, why it called (the run's `why`, which `sessionContext` got as `info.outbound`). */
export default tool({
  description: "Why this call was placed, when the desk called the customer: say it as soon as they answer",
  parameters: Type.Object({}),
  execute: (_args, ctx: ToolContext<Desk>) => {
    const outbound = ctx.session.outbound;
    if (outbound === undefined) return "Hello! I can watch an order and tell you when it ships, or give you the news on orders I am watching.";
    return `We're calling because ${outbound.why ?? "of an order you asked us to watch"}.`;
  },
});
