/**
 * Guardrails in s2s mode (docs/config.md "Guardrails"). The service hears the caller and answers
 * on its own, so what a guardrail refuses is undone after the fact. The caller's transcript is
 * checked as it arrives: a refused turn and its answer leave the model's memory (the answer cut
 * where the caller is hearing it, or as it starts when it has not yet). The agent's transcript is
 * checked as it streams: a verdict cuts the reply where the caller stopped hearing it. Either
 * replacement is spoken out of band and remembered. A typed turn is checked before the service
 * hears it.
 */
import type { GuardrailVerdict } from "../manifest/index.js";
import { snapToWord } from "../pipeline/heard-cursor.js";
import { joinSpoken } from "../pipeline/join-spoken.js";
import type { S2sHistoryItem, S2sSession } from "../s2s/s2s-port.js";
import { GuardedOutput } from "../turn/guarded-output.js";
import { REFUSED_TURN_PROMPT } from "../turn/guardrails.js";
import { InputChecks } from "../turn/input-checks.js";
import { CallerChecks, type CallerWords } from "./caller-checks.js";
import type { RunnerContext } from "./mode-runner.js";
import type { Reply, S2sReplies } from "./s2s-replies.js";

/** What the runner lends: its service, its replies, and how it cuts, speaks and commits. */
export interface S2sRefusalsPort {
  readonly ctx: RunnerContext;
  readonly replies: S2sReplies;
  session(): S2sSession | undefined;
  /** The session ended: checks still running answer nothing. */
  ended(): boolean;
  userSpeaking(): boolean;
  /** Cut as a barge-in does (playback cleared, the response stopped, memory truncated); the ms heard. */
  interrupt(): number;
  /** Speak `text` out of band; `record` is the agent's line once spoken. */
  say(text: string, record: string): void;
  /** A caller turn committed (`refused`: as refused). */
  commitUser(text: string, refused?: true): void;
}

/** The conversation as a new socket replays it: a refused caller turn as the model history records it. */
export function replayedHistory(lines: readonly { readonly role: "user" | "assistant"; readonly text: string; readonly refused?: true }[]): S2sHistoryItem[] {
  return lines.map((line) => (line.refused === true ? { role: "user", text: REFUSED_TURN_PROMPT } : { role: line.role, text: line.text }));
}

export class S2sRefusals {
  readonly #port: S2sRefusalsPort;
  /** The caller's transcripts through the input guardrails (when the agent has some). */
  readonly #checks: CallerChecks | undefined;
  /** Typed turns wait for their check in the order they came. */
  readonly #typed: InputChecks;
  /** A refused caller turn whose answer has not started yet: the next in-band response is that answer, cut as it starts. */
  #awaitingAnswer = false;

  constructor(port: S2sRefusalsPort) {
    this.#port = port;
    const { guardrails, log } = port.ctx;
    this.#typed = new InputChecks({ guardrails, log, live: () => !port.ended() });
    this.#checks = guardrails.checksInput ? new CallerChecks({ guardrails, passed: (words) => this.#passed(words), refused: (words, verdict) => this.#refuseSpoken(words, verdict) }) : undefined;
  }

  /** A typed turn: to the service once it passed; a refused one never reaches it. */
  typed(text: string, send: (text: string) => void): void {
    this.#typed.check(text, (verdict) => {
      if (verdict === undefined) {
        this.#port.commitUser(text);
        send(text);
        return;
      }
      this.#port.commitUser(text, true);
      this.#answerRefused(verdict);
    });
  }

  /** The caller's transcript: every piece checked as it arrives, the final committed once it passed. */
  heard(text: string, final: boolean, itemId: string | undefined): void {
    if (this.#checks !== undefined) this.#checks.heard(text, final, itemId);
    else if (final && text.trim() !== "") this.#port.commitUser(text.trim());
  }

  /** An in-band reply started: its transcript goes out through the output guardrails; the answer to a refused turn is cut. */
  started(reply: Reply): void {
    const { ctx } = this.#port;
    const output = new GuardedOutput(ctx.guardrails, {
      release: () => {
        // The reply so far, flattened: built only for a link or observer that takes it, not for every word on a phone line.
        if (ctx.wants("agent-transcript.updated")) ctx.emit({ type: "agent-transcript.updated", text: output.released.trim() });
      },
      tripped: (verdict) => this.#refuseOutput(reply, verdict),
    });
    reply.output = output;
    if (this.#awaitingAnswer) {
      this.#awaitingAnswer = false;
      this.#forget(reply);
    }
  }

  /** The caller said something refused. The service heard it: the caller's item leaves the model's memory, and so does the answer. */
  #refuseSpoken(words: CallerWords, verdict: GuardrailVerdict): void {
    const { replies } = this.#port;
    this.#port.commitUser(words.text, true);
    if (words.itemId !== undefined) this.#port.session()?.deleteItem?.(words.itemId);
    // Still speaking (Gemini transcribes as the caller talks), or spoken and not answered yet: the answer is the next response.
    const answer = replies.latest;
    if (this.#port.userSpeaking() || replies.awaitingAnswer || answer === undefined) this.#awaitingAnswer = true;
    else this.#forget(answer);
    this.#answerRefused(verdict);
  }

  /** A later caller turn passed: the next response answers it, not a refused one whose answer never came. */
  #passed(words: CallerWords): void {
    this.#awaitingAnswer = false;
    this.#port.commitUser(words.text);
  }

  /** A refused turn's answer: the model remembers that a turn was refused and what was said instead, and the caller hears it. */
  #answerRefused(verdict: GuardrailVerdict): void {
    const session = this.#port.session();
    session?.remember?.({ role: "user", text: REFUSED_TURN_PROMPT });
    session?.remember?.({ role: "assistant", text: verdict.replacement });
    this.#port.say(verdict.replacement, verdict.replacement);
  }

  /** `reply` answers a refused caller turn: what the caller hears of it stops, its calls are not run, and its item leaves the model's memory. */
  #forget(reply: Reply): void {
    const { replies, ctx } = this.#port;
    const session = this.#port.session();
    reply.forget = true;
    if (replies.heard(reply) && reply.audioMs > 0) {
      this.#port.interrupt();
      ctx.emit({ type: "reply.cancelled" });
    } else if (!reply.done) {
      // Nothing of it reached the caller: it alone is stopped, and no playback is flushed.
      replies.cut(reply);
      session?.cancelResponse(reply.responseId);
    }
    // One still running is removed when it is done (the runner, at `response.done`): its items are complete then.
    if (reply.done && reply.itemId !== undefined) session?.deleteItem?.(reply.itemId);
  }

  /**
   * An output guardrail refused the reply's next words: it is cut where the caller stopped hearing
   * it (the model's memory truncated there, as for a barge-in), and the replacement is spoken; the
   * agent's line records the heard part of what was shown, then the replacement.
   */
  #refuseOutput(reply: Reply, verdict: GuardrailVerdict): void {
    if (reply.interrupted) return;
    const heardMs = this.#port.interrupt();
    this.#port.ctx.emit({ type: "reply.cancelled" });
    const shown = reply.output?.released ?? "";
    // Words heard, by the share of its audio played; never past what the guardrails had passed.
    const heard = reply.audioMs > 0 ? snapToWord(reply.text, Math.floor((reply.text.length * Math.min(heardMs, reply.audioMs)) / reply.audioMs)) : "";
    const said = heard.length <= shown.length ? heard : shown;
    this.#port.session()?.remember?.({ role: "assistant", text: verdict.replacement });
    this.#port.say(verdict.replacement, joinSpoken([said, verdict.replacement]));
  }
}
