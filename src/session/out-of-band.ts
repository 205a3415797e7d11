import type { ModelMessage } from "ai";
import { messageOf } from "../errors.js";
import type { ReplyLoop } from "../pipeline/reply-loop.js";
import type { OutOfBandAsk, OutOfBandSink } from "../transport/protocol.js";
import type { RunnerContext } from "./mode-runner.js";

/**
 * An out-of-band response (docs/realtime.md "Out-of-band responses"): a Realtime client's
 * `response.create` with `conversation: "none"` — a classification, a summary — answered by the
 * agent's own model (the active agent's, after a hand-off), with no tools, over the conversation
 * so far or the client's own `input`, its text streamed to `sink`. It writes nothing to the
 * conversation and nothing to the record; its tokens count toward the session's usage (a step,
 * accounted like any), and the usage limit refuses it as it refuses a turn.
 */
export async function respondOutOfBand(loop: ReplyLoop, ctx: Pick<RunnerContext, "ledger" | "admitTurn" | "log">, ask: OutOfBandAsk, sink: OutOfBandSink): Promise<void> {
  if (!ctx.admitTurn()) {
    sink.done({ status: "failed", text: "", error: "the session's usage limit was reached" });
    return;
  }
  const messages: ModelMessage[] = ask.input === undefined ? [...ctx.ledger.history] : ask.input.map((message) => ({ role: message.role, content: message.text }));
  const result = await loop.once(messages, { instructions: ask.instructions, maxOutputTokens: ask.maxOutputTokens }, ask.signal, (delta) => sink.delta(delta));
  if (result.usage.steps > 0) ctx.ledger.step({ status: result.status === "completed" ? "completed" : "cancelled", usage: result.usage });
  if (result.status === "failed") ctx.log.warn({ err: result.error }, "out-of-band response failed");
  sink.done({ status: result.status, text: result.text, ...(result.status === "failed" ? { error: `the model failed: ${messageOf(result.error)}` } : {}) });
}
