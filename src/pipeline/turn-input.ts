import type { ModelMessage } from "ai";
import { noteMessages, type AgentNote } from "../turn/agent-note.js";
import { REFUSED_TURN_PROMPT } from "../turn/guardrails.js";
import type { ReplyUsage } from "./reply-loop.js";

export const DEFAULT_NUDGE_PROMPT = "The caller has been silent for a while. Check in with them briefly, in one short sentence.";

/** The longest turn continuations may merge into (characters): a typed turn's bound (protocol.md, `MAX_USER_TEXT_CHARS`). */
export const MAX_MERGED_TURN_CHARS = 20_000;

/**
 * What a reply answers: the caller's turn, a resume after a false interruption, a nudge, a
 * gateway's note, or a fixed line (the greeting). A caller turn an input guardrail refused carries the `refusal` that
 * answers it instead of the model (docs/config.md "Guardrails").
 */
export type TurnInput =
  | {
      readonly kind: "user";
      text: string;
      readonly endedAt: number;
      readonly committedAt: number;
      readonly startedAt: number;
      speculation?: Speculation;
      readonly refusal?: string;
    }
  | { readonly kind: "resume"; readonly quote: string }
  | { readonly kind: "nudge" }
  /** A note from the gateway (a workflow run ended), answered by the model in its own words. */
  | { readonly kind: "note"; readonly note: AgentNote }
  | { readonly kind: "say"; readonly text: string; readonly record: boolean };

/** A reply started on a confident interim, adopted only if the final text matches. */
export interface Speculation {
  readonly forText: string;
  readonly controller: AbortController;
  readonly result: Promise<{ readonly text: string; readonly usable: boolean; readonly usage: ReplyUsage }>;
}

export const normalize = (text: string): string => text.trim().replace(/\s+/g, " ");

/** Transcripts compared as words: case, punctuation and spacing do not count (smart formatting differs between interims and finals). */
export function sameWords(a: string, b: string): boolean {
  const words = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, "").replace(/\s+/g, " ").trim();
  return words(a) === words(b);
}

/**
 * The continuation window (`interruption.continuationWindowMs`, ms; 0 = off): an utterance that
 * started within `windowMs` of `previous`'s commit joins that user turn — its text appended, its
 * speculation aborted (the words changed) — unless the merged text would pass
 * MAX_MERGED_TURN_CHARS (then it is a turn of its own), or `previous` was refused by an input
 * guardrail. True when it joined.
 */
export function mergeContinuation(previous: Extract<TurnInput, { kind: "user" }>, text: string, startedAt: number, windowMs: number): boolean {
  // A refused turn is answered by its replacement: nothing joins it.
  if (previous.refusal !== undefined || windowMs === 0 || startedAt > previous.committedAt + windowMs) return false;
  if (previous.text.length + 1 + text.length > MAX_MERGED_TURN_CHARS) return false;
  previous.text = `${previous.text} ${text}`;
  previous.speculation?.controller.abort(new Error("merged"));
  delete previous.speculation;
  return true;
}

/** The model-history messages a turn input adds before the reply. */
export function promptFor(input: TurnInput, nudgePrompt: string | undefined): ModelMessage[] {
  switch (input.kind) {
    case "user":
      return [{ role: "user", content: input.refusal === undefined ? input.text : REFUSED_TURN_PROMPT }];
    case "resume":
      return [{ role: "user", content: `[The caller interrupted you but said nothing. Continue your previous reply from where they stopped hearing it: "…${input.quote}"]` }];
    case "nudge":
      return [{ role: "user", content: `[${nudgePrompt ?? DEFAULT_NUDGE_PROMPT}]` }];
    case "note":
      return noteMessages(input.note);
    case "say":
      return [];
  }
}
