import { Type } from "@sinclair/typebox";
import { tool, type ToolContext } from "switchboard";
import type { Caller } from "../agent.js";

/** Demo PIN check: any four digits ending in 7 pass. */
export default tool({
  description: "Verify the caller with the four-digit PIN they say",
  parameters: Type.Object({ pin: Type.String({ pattern: "^[0-9]{4}$" }) }),
  effect: "write",
  execute: ({ pin }, ctx: ToolContext<Caller>) => {
    ctx.session.verified = pin.endsWith("7");
    return ctx.session.verified ? "The caller is verified." : { text: "That PIN does not match.", isError: true };
  },
});
