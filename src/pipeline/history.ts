import type { ModelMessage } from "ai";

/** Most messages the model history keeps; older turns are trimmed whole. */
export const MAX_HISTORY_MESSAGES = 120;

/**
 * Most characters of text the model history keeps (unit: UTF-16 code units, as `String.length`
 * counts them; see `messageChars`). Older turns are trimmed whole. 200 000 characters is roughly
 * 50 000 tokens: room for a long conversation, yet it bounds what one session holds in memory,
 * in its resume record and in every model request (typed turns of 20 000 characters would
 * otherwise pile up for as long as the socket lives).
 */
export const MAX_HISTORY_CHARS = 200_000;

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value ?? null)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * The text one message adds to the history: string content, text and reasoning parts, a tool
 * call's arguments as JSON, a tool result's text (JSON for structured output). Other parts
 * (files, images) count as their JSON.
 */
export function messageChars(message: ModelMessage): number {
  const content: unknown = message.content;
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return jsonLength(content);
  let total = 0;
  for (const part of content as { readonly type?: unknown }[]) {
    switch (part.type) {
      case "text":
      case "reasoning": {
        const text = (part as { readonly text?: unknown }).text;
        total += typeof text === "string" ? text.length : jsonLength(text);
        break;
      }
      case "tool-call":
        total += jsonLength((part as { readonly input?: unknown }).input);
        break;
      case "tool-result": {
        const output = (part as { readonly output?: { readonly type?: unknown; readonly value?: unknown } }).output;
        total += typeof output?.value === "string" ? output.value.length : jsonLength(output?.value ?? output);
        break;
      }
      default:
        total += jsonLength(part);
    }
  }
  return total;
}

/** The text of a whole history, as `messageChars` counts it. */
export function historyChars(messages: readonly ModelMessage[]): number {
  let total = 0;
  for (const message of messages) total += messageChars(message);
  return total;
}

/**
 * Trim the oldest messages so at most `max` messages and `maxChars` characters of text remain,
 * cutting only at a user message: a turn is never split, so an assistant tool call always keeps
 * its tool result (no dangling call, no orphan result) and the history still opens the way
 * providers require (with the user). The newest turn (from the last user message on) is always
 * kept, whole, even when it alone is over either cap.
 */
export function trimHistory(messages: readonly ModelMessage[], max = MAX_HISTORY_MESSAGES, maxChars = MAX_HISTORY_CHARS): ModelMessage[] {
  const n = messages.length;
  // Walk back from the newest message, summing text: the earliest user message from which both
  // caps still hold is the cut; failing that, the last user message.
  let chars = 0;
  let cut = -1;
  let lastUser = -1;
  for (let start = n - 1; start >= 0; start--) {
    const message = messages[start];
    if (message === undefined) continue;
    chars += messageChars(message);
    const fits = n - start <= max && chars <= maxChars;
    if (start === 0 && fits) return [...messages];
    if (message.role !== "user") continue;
    if (lastUser === -1) lastUser = start;
    if (fits) cut = start;
    else break;
  }
  if (cut !== -1) return messages.slice(cut);
  if (lastUser !== -1) return messages.slice(lastUser);
  // No user message at all: nothing can be cut.
  return [...messages];
}
