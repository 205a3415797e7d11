import type { ModelMessage } from "ai";

/** Most messages the model history keeps; older turns are trimmed whole. */
export const MAX_HISTORY_MESSAGES = 120;

/**
 * Trim the oldest messages so at most `max` remain, cutting only at a user message: a turn is
 * never split, so an assistant tool call always keeps its tool result (no dangling call, no
 * orphan result) and the history still opens the way providers require (with the user).
 * A single turn longer than `max` is kept whole.
 */
export function trimHistory(messages: readonly ModelMessage[], max = MAX_HISTORY_MESSAGES): ModelMessage[] {
  if (messages.length <= max) return [...messages];
  const earliest = messages.length - max;
  for (let start = earliest; start < messages.length; start++) {
    if (messages[start]?.role === "user") return messages.slice(start);
  }
  // No user message inside the window: keep from the last user message on.
  for (let start = earliest - 1; start >= 0; start--) {
    if (messages[start]?.role === "user") return messages.slice(start);
  }
  return [...messages];
}
