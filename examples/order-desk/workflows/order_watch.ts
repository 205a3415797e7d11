import { Type } from "@sinclair/typebox";
import { workflow } from "switchboard";
import { CALLABLE, lines } from "../lines.js";

/**
 * Waits for an order to ship, then tells the caller: on the line if they still are (the run ends
 * and `notify` says it), else by calling them back. Its key is the caller's (their number, or
 * `account:<id>`); its context the session that started it.
 */
export default workflow({
  description: "Tell the caller when their order ships: while they are on the line, or by calling them back",
  input: Type.Object({ orderId: Type.String({ pattern: "^[A-Z0-9-]{1,32}$" }) }),
  steps: {
    // In a step: whether a session is live is not the body's to read (the replay rule).
    onTheLine: (sessionId: string) => Promise.resolve(lines.onTheLine(sessionId)),
  },
}).body(async ({ orderId }, ctx) => {
  const shipped = await ctx.waitFor<{ carrier?: unknown }>(`shipped:${orderId}`, { timeout: "3d" });
  if (shipped.status === "timeout") return { orderId, shipped: false, message: `Order ${orderId} has not shipped in 3 days.` };
  const carrier = typeof shipped.payload?.carrier === "string" ? shipped.payload.carrier.slice(0, 40) : undefined;
  const message = `Order ${orderId} has shipped${carrier === undefined ? "" : ` with ${carrier}`}.`;
  const sessionId = typeof ctx.context.sessionId === "string" ? ctx.context.sessionId : "";
  if (await ctx.steps.onTheLine(sessionId)) return { orderId, shipped: true, message, told: "on the line" };
  // Off the line: call back a caller whose key is a number (an account has none to call).
  if (ctx.key === undefined || !CALLABLE.test(ctx.key)) return { orderId, shipped: true, message, told: "not yet: no number to call" };
  const call = await ctx.calls.place({ to: ctx.key, why: `their order ${orderId} has shipped${carrier === undefined ? "" : ` with ${carrier}`}`, context: { orderId } });
  const outcome = await ctx.calls.outcome(call, { timeout: "30m" });
  const reached = outcome.status === "answered" && outcome.answeredBy !== "machine";
  return { orderId, shipped: true, message, told: reached ? "called back" : `not yet: the call-back ended ${outcome.status === "answered" ? "on voicemail" : outcome.status}` };
});
