import type { Clock, Timer } from "../clock.js";

/** What the idle timer asks of its session. */
export interface IdleHooks {
  /** A reply, a tool or client call is in flight: not idle, whatever the clock says. */
  busy(): boolean;
  expired(): void;
}

/**
 * The session's idle timeout (`idleTimeoutMs`; 0 = never): re-armed by conversational activity,
 * deferred while something is in flight (a reply, audio still playing, a client tool call), and
 * expired at most once.
 *
 * Activity only moves the deadline: one timer runs at a time, and when it fires early (activity
 * came since it was set) it is set again for the rest. A timer per activity (every transcript
 * delta: about 2 a second per call) would each outlive a young-generation GC or two and be
 * promoted, to be collected by the next full GC.
 */
export class IdleTimer {
  readonly #clock: Clock;
  readonly #ms: number;
  readonly #hooks: IdleHooks;
  #timer: Timer | undefined;
  /** Epoch ms of the last activity: the timeout runs from it. */
  #since = 0;
  #done = false;

  constructor(clock: Clock, ms: number, hooks: IdleHooks) {
    this.#clock = clock;
    this.#ms = ms;
    this.#hooks = hooks;
  }

  /** Activity: the wait starts over. */
  touch(): void {
    if (this.#ms === 0 || this.#done) return;
    this.#since = this.#clock.now();
    if (this.#timer === undefined) this.#arm(this.#ms);
  }

  stop(): void {
    this.#done = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = this.#clock.setTimeout(() => this.#due(), ms);
  }

  #due(): void {
    this.#timer = undefined;
    if (this.#done) return;
    const left = this.#since + this.#ms - this.#clock.now();
    if (left > 0) return this.#arm(left);
    if (this.#hooks.busy()) return this.touch();
    this.#done = true;
    this.#hooks.expired();
  }
}
