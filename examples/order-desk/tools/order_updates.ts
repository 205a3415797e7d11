import { Type } from "@sinclair/typebox";
import { tool, type ToolContext, type WorkflowRunView } from "switchboard";
import type { Desk } from "../agent.js";
import { watchKey } from "../lines.js";

/** One watch as the model reads it. */
function said(run: WorkflowRunView): string {
  const output = run.output as { message?: unknown; told?: unknown } | undefined;
  if (run.status === "completed" && typeof output?.message === "string") return `${output.message}${output.told === "called back" ? " (we called to say so)" : ""}`;
  if (run.status === "failed" || run.status === "cancelled") return `a watch ${run.status}`;
  return "a watch is still waiting for its order to ship";
}

/** The caller's watches, found by their key (a run outlives the call that started it). */
export default tool({
  description: "Tell the caller the news on the orders they asked us to watch",
  parameters: Type.Object({ account: Type.Optional(Type.String({ description: "The caller's account number, when this is not a phone call" })) }),
  execute: async ({ account }, ctx: ToolContext<Desk>) => {
    const key = watchKey(ctx.session.caller, account);
    if (key === undefined) return { text: "I need the caller's account number to find their watches: ask for it.", isError: true };
    const runs = (await ctx.workflows?.find(key)) ?? [];
    if (runs.length === 0) return "There are no order watches for this caller.";
    return { text: runs.slice(0, 3).map(said).join(" "), details: { runs: runs.map((run) => ({ runId: run.runId, status: run.status })) } };
  },
});
