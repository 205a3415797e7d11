import { Deadline, type Clock } from "../clock.js";

/** What the idle timer asks of its session. */
export interface IdleHooks {
  /** A reply, a tool or client call is in flight: not idle, whatever the clock says. */
  busy(): boolean;
  expired(): void;
}

/**
 * The session's idle timeout (`idleTimeoutMs`; 0 = never): re-armed by conversational activity
 * (each transcript delta: moving a `Deadline`, one timer a wait), deferred while something is in
 * flight (a reply, audio still playing, a client tool call), and expired at most once.
 */
export class IdleTimer {
  readonly #clock: Clock;
  readonly #ms: number;
  readonly #hooks: IdleHooks;
  readonly #deadline: Deadline;
  #done = false;

  constructor(clock: Clock, ms: number, hooks: IdleHooks) {
    this.#clock = clock;
    this.#ms = ms;
    this.#hooks = hooks;
    this.#deadline = new Deadline(clock, () => this.#due());
  }

  /** Activity: the wait starts over. */
  touch(): void {
    if (this.#ms === 0 || this.#done) return;
    this.#deadline.set(this.#clock.now() + this.#ms);
  }

  stop(): void {
    this.#done = true;
    this.#deadline.cancel();
  }

  #due(): void {
    if (this.#done) return;
    if (this.#hooks.busy()) return this.touch();
    this.#done = true;
    this.#hooks.expired();
  }
}
