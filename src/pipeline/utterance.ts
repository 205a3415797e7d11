import { Deadline, type Clock, type Timer } from "../clock.js";
import type { EventBody } from "../events.js";
import { countWords } from "./barge-in.js";
import { UtteranceText } from "./stt-port.js";

/** An utterance with no STT activity for this long is closed (ms; above maxSilenceMs; docs/protocol.md "Limits"). */
export const SPEECH_IDLE_WATCHDOG_MS = 4000;
/** A push-to-talk commit waits this long for the STT's final (ms). */
export const MANUAL_FINAL_WAIT_MS = 1500;

/** The caller's speech in progress. */
export interface Utterance {
  /** The finals and the current partial (stt-port.ts's transcript contract): the only place they are joined. */
  readonly transcript: UtteranceText;
  readonly startedAt: number;
  lastActivityAt: number;
  /** speech.started went out (or was held). */
  announced: boolean;
  /** speech.started is being held while the agent is audible. */
  held: boolean;
  /** Preemptive generations started for this utterance. */
  speculations: number;
}

/** The endpointing settings an utterance needs (docs/config.md `turnTaking`). */
export interface UtteranceSettings {
  readonly detection: "auto" | "manual";
  readonly minSilenceMs: number;
  readonly maxSilenceMs: number;
  readonly userTurnLimit?: { readonly maxWords?: number | undefined; readonly maxDurationMs?: number | undefined } | undefined;
}

export interface UtteranceHooks {
  readonly clock: Clock;
  readonly settings: UtteranceSettings;
  readonly emit: (event: EventBody) => void;
  /** Ask the STT to finalize what it has (VAD end of speech, push-to-talk commit). */
  readonly finalize: () => void;
  /** A new utterance opened: the caller started talking. */
  readonly opened: () => void;
  /** Hold `speech.started` (the agent is being heard: it may yet be a barge-in, or noise). */
  readonly holdStart: () => boolean;
  /** The utterance closed (ended, dropped or timed out). */
  readonly dropped: () => void;
  /** The turn ended with words: commit them (`endedAt`: when speech last moved). */
  readonly ended: (turn: { readonly text: string; readonly endedAt: number; readonly startedAt: number }) => void;
  /**
   * A held utterance (it began while the agent was heard, and has not interrupted) is ending with
   * `text`: true when it is only an acknowledgement said over the agent, to be dropped unheard.
   */
  readonly acknowledgement: (text: string) => boolean;
  /** The watchdog fired with automatic detection: no STT activity for `SPEECH_IDLE_WATCHDOG_MS`. */
  readonly quiet: () => void;
}

type PushToTalk = "idle" | "capturing" | "committing";

/**
 * The caller's side of a turn: one utterance at a time, opened by speech edges or transcripts and
 * ended by the STT's endpointing, the local VAD's silence timers (`minSilenceMs` after a final,
 * else `maxSilenceMs`), push-to-talk (`detection: "manual"`), the user-turn limit or the watchdog.
 * It owns `speech.started` (held while the agent is heard), `speech.stopped` and
 * `user-turn.exceeded`; the coordinator decides what a turn's text becomes.
 */
export class Utterances {
  readonly #hooks: UtteranceHooks;
  #current: Utterance | undefined;
  #endpointTimer: Timer | undefined;
  /** Re-armed by every transcript and speech edge: one timer that activity moves (`Deadline`), not one per partial. */
  readonly #watchdog: Deadline;
  #pushToTalk: PushToTalk = "idle";
  #pushToTalkTimer: Timer | undefined;

  constructor(hooks: UtteranceHooks) {
    this.#hooks = hooks;
    this.#watchdog = new Deadline(hooks.clock, () => this.#watchdogFired());
  }

  get current(): Utterance | undefined {
    return this.#current;
  }

  /** Speech activity: open the utterance (announcing or holding `speech.started`) and re-arm the watchdog. */
  touch(): Utterance {
    const { clock } = this.#hooks;
    const now = clock.now();
    let utterance = this.#current;
    if (utterance === undefined) {
      utterance = { transcript: new UtteranceText(), startedAt: now, lastActivityAt: now, announced: false, held: false, speculations: 0 };
      this.#current = utterance;
      this.#hooks.opened();
    }
    utterance.lastActivityAt = now;
    if (!utterance.announced) {
      utterance.announced = true;
      utterance.held = this.#hooks.holdStart();
      if (!utterance.held) this.#hooks.emit({ type: "speech.started" });
    }
    this.#watchdog.set(now + SPEECH_IDLE_WATCHDOG_MS);
    return utterance;
  }

  /** Release a held `speech.started` (a real barge-in, or the agent fell quiet). */
  release(utterance: Utterance): void {
    if (!utterance.held) return;
    utterance.held = false;
    this.#hooks.emit({ type: "speech.started" });
  }

  /** A final arrived: true when it completed a push-to-talk commit (the turn is ended). */
  finalArrived(): boolean {
    if (this.#pushToTalk !== "committing") return false;
    this.#commitPushToTalk();
    return true;
  }

  /** Local VAD edges, for an STT without endpointing. */
  vad(edge: "start" | "end"): void {
    if (this.#hooks.settings.detection === "manual") return;
    this.#endpointTimer?.cancel();
    if (edge === "start") {
      this.touch();
      return;
    }
    this.#hooks.finalize();
    const { clock, settings } = this.#hooks;
    this.#endpointTimer = clock.setTimeout(() => {
      const utterance = this.#current;
      if (utterance === undefined) return;
      if (utterance.transcript.finalized && !utterance.transcript.pending) {
        this.end();
        return;
      }
      this.#endpointTimer = clock.setTimeout(() => {
        if (this.#current !== undefined) this.end();
      }, Math.max(0, settings.maxSilenceMs - settings.minSilenceMs));
    }, settings.minSilenceMs);
  }

  /** Push-to-talk (`turnTaking.detection: "manual"`): start holds, commit waits for the final, clear drops. */
  manual(command: "start" | "commit" | "clear"): void {
    if (this.#hooks.settings.detection !== "manual") return;
    if (command === "start") {
      this.#pushToTalk = "capturing";
      this.touch();
      return;
    }
    if (command === "clear") {
      this.#pushToTalk = "idle";
      this.drop();
      return;
    }
    if (this.#pushToTalk !== "capturing") return;
    this.#pushToTalk = "committing";
    this.#hooks.finalize();
    this.#pushToTalkTimer = this.#hooks.clock.setTimeout(() => this.#commitPushToTalk(), MANUAL_FINAL_WAIT_MS);
  }

  /** Over `userTurnLimit` (words or duration): `user-turn.exceeded`, and the turn ends now. */
  checkLimit(utterance: Utterance): void {
    const limit = this.#hooks.settings.userTurnLimit;
    if (limit === undefined) return;
    const words = countWords(utterance.transcript.text);
    const duration = this.#hooks.clock.now() - utterance.startedAt;
    const over =
      limit.maxWords !== undefined && words > limit.maxWords ? "words" : limit.maxDurationMs !== undefined && duration > limit.maxDurationMs ? "duration" : undefined;
    if (over === undefined) return;
    this.#hooks.emit({ type: "user-turn.exceeded", limit: over, words, durationMs: duration });
    this.#pushToTalkTimer?.cancel();
    this.#pushToTalk = "idle";
    this.end();
  }

  /**
   * The turn ended: release a held start, close the utterance, hand its words on (if any). A held
   * acknowledgement closes silently instead: its `speech.started` never goes out, nor a turn.
   */
  end(): void {
    const utterance = this.#current;
    if (utterance === undefined) return;
    const text = utterance.transcript.text;
    if (utterance.held && text !== "" && this.#hooks.acknowledgement(text)) {
      this.drop();
      return;
    }
    this.release(utterance);
    this.drop();
    if (text !== "") this.#hooks.ended({ text, endedAt: utterance.lastActivityAt, startedAt: utterance.startedAt });
  }

  /** Close the utterance without a turn (`speech.stopped` if its start went out). */
  drop(): void {
    const utterance = this.#current;
    this.#current = undefined;
    this.#endpointTimer?.cancel();
    this.#watchdog.cancel();
    if (utterance?.announced === true && !utterance.held) this.#hooks.emit({ type: "speech.stopped" });
    this.#hooks.dropped();
  }

  /** A reset: forget the utterance silently (the session clears everything after). */
  reset(): void {
    this.#endpointTimer?.cancel();
    this.#watchdog.cancel();
    this.#current = undefined;
  }

  close(): void {
    for (const timer of [this.#endpointTimer, this.#watchdog, this.#pushToTalkTimer]) timer?.cancel();
  }

  #commitPushToTalk(): void {
    this.#pushToTalkTimer?.cancel();
    this.#pushToTalk = "idle";
    this.end();
  }

  #watchdogFired(): void {
    // Push-to-talk: only user_turn_commit (or clear) ends a turn; silence while holding is fine.
    if (this.#hooks.settings.detection === "manual") {
      if (this.#pushToTalk === "idle") this.drop();
      return;
    }
    this.#hooks.quiet();
  }
}
