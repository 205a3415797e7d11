/**
 * Preemptive generation (`turnTaking.preemptiveGeneration`, docs/config.md; docs/protocol.md
 * "Behaviour in detail"): a confident interim (end-of-turn confidence ≥ 0.9) with nothing in
 * flight starts a speculative reply — one model step, tools declared but never run, nothing spoken
 * or recorded (`ReplyLoop.speculate`). When the caller's turn commits with the same words, its
 * input adopts it (`VoiceReply` speaks its text if the step wanted no tool); any other is aborted.
 * At most one runs at a time, and at most MAX_PREEMPTS_PER_UTTERANCE start per utterance.
 */
import type { ModelMessage } from "ai";
import type { ReplyLoop } from "./reply-loop.js";
import { sameWords, type Speculation } from "./turn-input.js";
import type { Utterance } from "./utterance.js";

/** Preemptive generation starts on an interim at least this confident of end-of-turn, at most twice per utterance. */
export const PREEMPT_MIN_EOT_CONFIDENCE = 0.9;
export const MAX_PREEMPTS_PER_UTTERANCE = 2;

export interface PreemptionDeps {
  /** `turnTaking.preemptiveGeneration`. */
  readonly enabled: boolean;
  /** The conversation a reply would answer now (the interim's text is added to it). */
  readonly history: () => readonly ModelMessage[];
  readonly speculate: ReplyLoop["speculate"];
  /** A reply is in flight or a turn waits for one: no speculation then. */
  readonly busy: () => boolean;
}

export class Preemption {
  readonly #deps: PreemptionDeps;
  /** The speculative reply in flight, for the words it was started on. */
  #speculation: Speculation | undefined;

  constructor(deps: PreemptionDeps) {
    this.#deps = deps;
  }

  /** An interim for `utterance`: a confident one starts the model early, unless it already runs for these words. */
  interim(utterance: Utterance, eotConfidence: number | undefined): void {
    if (eotConfidence === undefined || eotConfidence < PREEMPT_MIN_EOT_CONFIDENCE) return;
    if (!this.#deps.enabled || this.#deps.busy() || utterance.speculations >= MAX_PREEMPTS_PER_UTTERANCE) return;
    const text = utterance.transcript.text;
    if (this.#speculation !== undefined && sameWords(this.#speculation.forText, text)) return;
    this.#speculation?.controller.abort(new Error("superseded"));
    utterance.speculations += 1;
    const controller = new AbortController();
    const prompt: ModelMessage[] = [...this.#deps.history(), { role: "user", content: text }];
    this.#speculation = { forText: text, controller, result: this.#deps.speculate(prompt, controller.signal) };
  }

  /** The caller's turn committed as `text`: the speculation started on the same words, for its input to adopt; any other is aborted. */
  adopt(text: string): Speculation | undefined {
    const speculation = this.#speculation;
    this.#speculation = undefined;
    if (speculation !== undefined && sameWords(speculation.forText, text)) return speculation;
    speculation?.controller.abort(new Error("discarded"));
    return undefined;
  }
}
