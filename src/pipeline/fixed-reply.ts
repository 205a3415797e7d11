import type { ReplyObserver, ReplyResult } from "./reply-loop.js";

/**
 * A reply the model does not write: `text`, said as it is (an input guardrail's replacement),
 * reported to `observer` as one delta. No first token and no usage: the model was never called.
 * Type-only imports: a text or voice session loads the AI SDK only with its reply loop.
 */
export function fixedReply(text: string, observer: ReplyObserver): ReplyResult {
  observer.text?.(text);
  return { status: "completed", messages: [{ role: "assistant", content: text }], text, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, steps: 0 } };
}
