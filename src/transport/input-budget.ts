/**
 * What one peer may make the gateway do per second (issue 14 item 5): a frame count and a byte
 * count per kind (audio, text), each a token bucket refilled in real time. A peer within its
 * budget is never slowed. Every frame it sends is handled — nothing is lost — but one that goes
 * over is throttled the way TCP throttles: its socket stops being read while it is in debt, so
 * its frames wait in its own send buffer and cost this process nothing, and other sessions keep
 * their event loop. Pure: time comes from the injected `now`.
 */

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

class Bucket {
  #rate: number;
  #size: number;
  #tokens: number;

  constructor(perSecond: number, burstSeconds: number) {
    this.#rate = perSecond / 1000;
    this.#size = perSecond * burstSeconds;
    this.#tokens = this.#size;
  }

  /** A new rate from now on: the debt stays, the credit is kept up to the new size. */
  retune(perSecond: number, burstSeconds: number): void {
    this.#rate = perSecond / 1000;
    this.#size = perSecond * burstSeconds;
    this.#tokens = Math.min(this.#size, this.#tokens);
  }

  refill(elapsedMs: number): void {
    this.#tokens = Math.min(this.#size, this.#tokens + elapsedMs * this.#rate);
  }

  spend(cost: number): void {
    this.#tokens -= cost;
  }

  /** Ms until the bucket is out of debt (0 when it is not in debt). */
  get debtMs(): number {
    return this.#tokens >= 0 ? 0 : -this.#tokens / this.#rate;
  }
}

export class InputBudget {
  readonly #now: () => number;
  readonly #frames: Bucket;
  readonly #audio: Bucket;
  readonly #text: Bucket;
  #at: number;

  constructor(limits: InputBudgetLimits, now: () => number) {
    this.#now = now;
    this.#frames = new Bucket(limits.framesPerSecond, limits.burstSeconds);
    this.#audio = new Bucket(limits.audioBytesPerSecond, limits.burstSeconds);
    this.#text = new Bucket(limits.textBytesPerSecond, limits.burstSeconds);
    this.#at = now();
  }

  /** Charge one handled frame of `bytes` of `kind` (it may take the budget into debt). */
  spend(kind: "audio" | "text", bytes: number): void {
    this.#refill();
    this.#frames.spend(1);
    (kind === "audio" ? this.#audio : this.#text).spend(bytes);
  }

  /** Ms until every bucket is out of debt: 0 while within budget, else how long reading waits. */
  debtMs(): number {
    this.#refill();
    return Math.ceil(Math.max(this.#frames.debtMs, this.#audio.debtMs, this.#text.debtMs));
  }

  /**
   * New limits from now on (a Realtime client switching its audio format changes what real time
   * costs in bytes): what was spent stays spent; the buckets refill at the new rates.
   */
  retune(limits: InputBudgetLimits): void {
    this.#refill();
    this.#frames.retune(limits.framesPerSecond, limits.burstSeconds);
    this.#audio.retune(limits.audioBytesPerSecond, limits.burstSeconds);
    this.#text.retune(limits.textBytesPerSecond, limits.burstSeconds);
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#at);
    this.#at = now;
    for (const bucket of [this.#frames, this.#audio, this.#text]) bucket.refill(elapsed);
  }
}
