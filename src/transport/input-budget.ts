/**
 * What one peer may make the gateway do per second (issue 14 item 5): a frame count and a byte
 * count per kind (audio, text), each a token bucket refilled in real time. A peer within its
 * budget is never slowed. Every frame it sends is handled — nothing is lost — but one that goes
 * over is throttled the way TCP throttles: its socket stops being read while it is in debt, so
 * its frames wait in its own send buffer and cost this process nothing, and other sessions keep
 * their event loop. Pure: time comes from the injected clock.
 */
import type { Clock } from "../clock.js";

export interface InputBudgetLimits {
  /** Frames per second, sustained (any kind). */
  readonly framesPerSecond: number;
  /** Audio (binary) bytes per second, sustained. */
  readonly audioBytesPerSecond: number;
  /** Text frame bytes per second, sustained. */
  readonly textBytesPerSecond: number;
  /** Seconds of each budget that may arrive at once: the buckets' size. */
  readonly burstSeconds: number;
}

/**
 * Three token buckets (frames, audio bytes, text bytes) kept as plain number fields of one object,
 * not as three objects: the budget is charged on every frame a peer sends, and on a process
 * running hundreds of calls each call's state is out of the CPU's caches by its next frame, so
 * every object a frame touches is a cache miss (docs/benchmarks.md, `bench:carrier-path`).
 * Rates are tokens per ms; a bucket's size is its rate per second × the burst seconds.
 */
export class InputBudget {
  /** The session's clock itself, not a closure over it: shared by every call, so it stays cached. */
  readonly #clock: Pick<Clock, "now">;
  #at: number;
  #frameRate = 0;
  #frameSize = 0;
  #frames = 0;
  #audioRate = 0;
  #audioSize = 0;
  #audio = 0;
  #textRate = 0;
  #textSize = 0;
  #text = 0;

  constructor(limits: InputBudgetLimits, clock: Pick<Clock, "now">) {
    this.#clock = clock;
    this.#at = clock.now();
    this.#tune(limits);
    this.#frames = this.#frameSize;
    this.#audio = this.#audioSize;
    this.#text = this.#textSize;
  }

  /** Charge one handled frame of `bytes` of `kind` (it may take the budget into debt). */
  spend(kind: "audio" | "text", bytes: number): void {
    this.#refill();
    this.#frames -= 1;
    if (kind === "audio") this.#audio -= bytes;
    else this.#text -= bytes;
  }

  /** Ms until every bucket is out of debt: 0 while within budget, else how long reading waits. */
  debtMs(): number {
    this.#refill();
    return this.#debt();
  }

  /**
   * `debtMs()` as of the budget's last reading of the clock (its last `spend`, `retune` or
   * `debtMs`), without reading it again: right after a `spend`, what `debtMs()` would say, less the
   * microseconds since (the check made on every frame a peer sends, one clock reading each).
   */
  owedMs(): number {
    return this.#debt();
  }

  #debt(): number {
    if (this.#frames >= 0 && this.#audio >= 0 && this.#text >= 0) return 0;
    return Math.ceil(Math.max(debtMs(this.#frames, this.#frameRate), debtMs(this.#audio, this.#audioRate), debtMs(this.#text, this.#textRate)));
  }

  /**
   * New limits from now on (a Realtime client switching its audio format changes what real time
   * costs in bytes): what was spent stays spent — the debt stays, the credit is kept up to the
   * new size — and the buckets refill at the new rates.
   */
  retune(limits: InputBudgetLimits): void {
    this.#refill();
    this.#tune(limits);
    this.#frames = Math.min(this.#frameSize, this.#frames);
    this.#audio = Math.min(this.#audioSize, this.#audio);
    this.#text = Math.min(this.#textSize, this.#text);
  }

  #tune(limits: InputBudgetLimits): void {
    this.#frameRate = limits.framesPerSecond / 1000;
    this.#frameSize = limits.framesPerSecond * limits.burstSeconds;
    this.#audioRate = limits.audioBytesPerSecond / 1000;
    this.#audioSize = limits.audioBytesPerSecond * limits.burstSeconds;
    this.#textRate = limits.textBytesPerSecond / 1000;
    this.#textSize = limits.textBytesPerSecond * limits.burstSeconds;
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = now - this.#at;
    this.#at = now;
    if (elapsed <= 0) return; // a clock that stepped back refills nothing
    this.#frames = Math.min(this.#frameSize, this.#frames + elapsed * this.#frameRate);
    this.#audio = Math.min(this.#audioSize, this.#audio + elapsed * this.#audioRate);
    this.#text = Math.min(this.#textSize, this.#text + elapsed * this.#textRate);
  }
}

/** Ms until a bucket holding `tokens` refills to zero at `rate` tokens a ms (0 when not in debt). */
function debtMs(tokens: number, rate: number): number {
  return tokens >= 0 ? 0 : -tokens / rate;
}
