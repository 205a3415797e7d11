import { Deadline, type Clock, type Timer } from "../clock.js";
import type { Logger } from "../log.js";

/** The dead-air backoff doubles up to this (ms). */
export const MAX_DEAD_AIR_BACKOFF_MS = 8000;
/** At most this many nudges in a row (a caller turn resets the count). */
export const MAX_NUDGES_IN_A_ROW = 3;

/** Declarative dead-air lines, in order (docs/protocol.md "Behaviour in detail", "Dead air"). */
export const DEAD_AIR_LINES = ["I'm checking on this.", "I'm still checking on this.", "This is taking a little longer than usual.", "I'm still on it."];

export interface DeadAirHooks {
  readonly clock: Clock;
  readonly log: Logger;
  /** The reply still holds the floor with its gate open (else the cover stands down for good). */
  readonly active: () => boolean;
  /** Ms of the reply's audio still to play (the cover counts from when it falls quiet). */
  readonly pendingMs: () => number;
  /** Nothing is playing or held back. */
  readonly quiet: () => boolean;
  /** Something else fills the silence (the caller is talking, a tool's own lines): wait. */
  readonly covered: () => boolean;
  /** Say the line as filler. */
  readonly speak: (line: string) => void;
}

/**
 * Dead air inside one reply: after `coverMs` of measured silence a declarative line, then again
 * after a doubled wait (up to `MAX_DEAD_AIR_BACKOFF_MS`). Re-armed whenever audio leaves (every
 * TTS chunk): the wait is one `Deadline` those moves push later, not a timer per chunk.
 */
export class DeadAirCover {
  readonly #hooks: DeadAirHooks;
  readonly #coverMs: number;
  #backoffMs: number;
  #line = 0;
  readonly #deadline: Deadline;

  /** `coverMs`: the agent's `deadAirCoverMs`; 0 disables the cover. */
  constructor(hooks: DeadAirHooks, coverMs: number) {
    this.#hooks = hooks;
    this.#coverMs = coverMs;
    this.#backoffMs = coverMs;
    this.#deadline = new Deadline(hooks.clock, () => this.#fire());
  }

  arm(): void {
    if (this.#coverMs === 0 || !this.#hooks.active()) {
      this.#deadline.cancel();
      return;
    }
    this.#deadline.set(this.#hooks.clock.now() + this.#hooks.pendingMs() + this.#backoffMs);
  }

  cancel(): void {
    this.#deadline.cancel();
  }

  #fire(): void {
    if (!this.#hooks.active()) return;
    if (!this.#hooks.quiet() || this.#hooks.covered()) {
      this.arm();
      return;
    }
    const line = DEAD_AIR_LINES[Math.min(this.#line, DEAD_AIR_LINES.length - 1)] ?? "I'm still on it.";
    this.#line += 1;
    this.#backoffMs = Math.min(this.#backoffMs * 2, MAX_DEAD_AIR_BACKOFF_MS);
    this.#hooks.log.debug({ line }, "dead air covered");
    this.#hooks.speak(line);
  }
}

export interface NudgeHooks {
  readonly clock: Clock;
  /** `nudge.afterMs` of the agent's settings; undefined: never nudge. */
  readonly afterMs: number | undefined;
  /** Ms of audio still to play (the wait counts from when it falls quiet). */
  readonly pendingMs: () => number;
  /** Something is going on (a reply, the caller talking, audio playing): wait again. */
  readonly engaged: () => boolean;
  /** Ask the model to check in. */
  readonly nudge: () => void;
}

/** Silence between turns: after `nudge.afterMs` with nothing in flight, a nudge; at most `MAX_NUDGES_IN_A_ROW`. */
export class Nudger {
  readonly #hooks: NudgeHooks;
  #nudges = 0;
  #timer: Timer | undefined;

  constructor(hooks: NudgeHooks) {
    this.#hooks = hooks;
  }

  arm(): void {
    const { afterMs } = this.#hooks;
    this.#timer?.cancel();
    if (afterMs === undefined) return;
    this.#timer = this.#hooks.clock.setTimeout(() => {
      if (this.#hooks.engaged()) {
        this.arm();
        return;
      }
      if (this.#nudges >= MAX_NUDGES_IN_A_ROW) return;
      this.#nudges += 1;
      this.#hooks.nudge();
    }, this.#hooks.pendingMs() + afterMs);
  }

  cancel(): void {
    this.#timer?.cancel();
  }

  /** The caller spoke (or the conversation was reset): the count starts over. */
  resetCount(): void {
    this.#nudges = 0;
  }
}
