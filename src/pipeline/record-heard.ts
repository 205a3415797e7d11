import type { ModelMessage } from "ai";
import { countWords } from "./barge-in.js";
import { spread } from "../spread.js";

/** The marker an interrupted reply's recorded text ends with (docs/protocol.md "Behaviour in detail", "History of an interrupted reply"). */
export const INTERRUPTED = "[interrupted]";

type AssistantPart = Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string>[number];

/** The first `words` words of `text`, as written. */
function firstWords(text: string, words: number): string {
  if (words <= 0) return "";
  const pattern = /\S+/g;
  let end = 0;
  for (let i = 0; i < words; i++) {
    const match = pattern.exec(text);
    if (match === null) return text.trim();
    end = match.index + match[0].length;
  }
  return text.slice(0, end);
}

/** The model text of a reply's messages (and its unfinished step) cut after its first `words` words; where the last kept text is. */
function keepWords(messages: readonly ModelMessage[], partialText: string | undefined, words: number): { out: ModelMessage[]; lastText: { message: number; part: number } | undefined } {
  let remaining = words;
  let lastText: { message: number; part: number } | undefined;
  const out: ModelMessage[] = [];
  const keepText = (text: string): string => {
    const kept = firstWords(text, remaining);
    remaining -= countWords(kept);
    return kept;
  };
  for (const message of messages) {
    if (message.role !== "assistant") {
      out.push(message);
      continue;
    }
    const parts: AssistantPart[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : [...message.content];
    const kept: AssistantPart[] = [];
    for (const part of parts) {
      if (part.type !== "text") {
        kept.push(part);
        continue;
      }
      const text = keepText(part.text);
      if (text.trim() === "") continue;
      kept.push(spread(part, { text }));
      lastText = { message: out.length, part: kept.length - 1 };
    }
    if (kept.length > 0) out.push(spread(message, { content: kept }));
  }
  if (partialText !== undefined) {
    const text = keepText(partialText);
    if (text.trim() !== "") {
      out.push({ role: "assistant", content: [{ type: "text", text }] });
      lastText = { message: out.length - 1, part: 0 };
    }
  }
  return { out, lastText };
}

/**
 * History for an interrupted reply, recording what was heard: the model text of completed
 * steps and of the unfinished one, cut after the first `heardWords` words, with `[interrupted]`
 * after the last heard word. Tool calls and their results are kept whole (a completed tool
 * step is never re-run); assistant text nobody heard is dropped; nothing heard → no assistant
 * text at all.
 */
export function recordHeard(messages: readonly ModelMessage[], partialText: string | undefined, heardWords: number): ModelMessage[] {
  const { out, lastText } = keepWords(messages, partialText, heardWords);
  if (lastText !== undefined) {
    const message = out[lastText.message] as Extract<ModelMessage, { role: "assistant" }>;
    const content = [...(message.content as AssistantPart[])];
    const part = content[lastText.part] as Extract<AssistantPart, { type: "text" }>;
    content[lastText.part] = spread(part, { text: `${part.text.trimEnd()} ${INTERRUPTED}` });
    out[lastText.message] = spread(message, { content });
  }
  return out;
}

/**
 * History for a reply an output guardrail cut (docs/config.md "Guardrails"), recording what was
 * said: the model text released before the verdict (its first `saidWords` words, tool steps
 * whole, as `recordHeard` keeps them), then the replacement as the reply's last words.
 */
export function recordReplaced(messages: readonly ModelMessage[], partialText: string | undefined, saidWords: number, replacement: string): ModelMessage[] {
  const { out } = keepWords(messages, partialText, saidWords);
  const last = out.at(-1);
  if (last?.role === "assistant") {
    const content: AssistantPart[] = typeof last.content === "string" ? [{ type: "text", text: last.content }] : [...last.content];
    out[out.length - 1] = spread(last, { content: [...content, { type: "text", text: replacement }] });
  } else {
    out.push({ role: "assistant", content: [{ type: "text", text: replacement }] });
  }
  return out;
}
