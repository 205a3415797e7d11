/**
 * What one peer may make the gateway do per second (issue 14 item 5): a frame count and a byte
 * count per kind (audio, text), each a token bucket refilled in real time. A peer within its
 * budget is never slowed. One that goes over is throttled the way TCP throttles: its socket stops
 * being read until the bucket has refilled (`pause`), so its frames wait in its own send buffer
 * and cost this process nothing — other sessions keep their event loop. Frames the socket layer
 * had already read when it paused still arrive; past one more bucket's worth of debt they are
 * dropped (`drop`), which only a flood reaches. Pure: time comes from the injected `now`.
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

/** `pass`: within budget. `pause`: handle it, then stop reading for `resumeInMs()`. `drop`: over budget and in debt; discard it. */
export type InputVerdict = "pass" | "pause" | "drop";

class Bucket {
  readonly #rate: number;
  readonly #size: number;
  #tokens: number;

  constructor(perSecond: number, burstSeconds: number) {
    this.#rate = perSecond / 1000;
    this.#size = perSecond * burstSeconds;
    this.#tokens = this.#size;
  }

  refill(elapsedMs: number): void {
    this.#tokens = Math.min(this.#size, this.#tokens + elapsedMs * this.#rate);
  }

  covers(cost: number): boolean {
    return this.#tokens >= cost;
  }

  /** In debt by a whole bucket or more: nothing more is taken on credit. */
  get exhausted(): boolean {
    return this.#tokens <= -this.#size;
  }

  spend(cost: number): void {
    this.#tokens -= cost;
  }

  /** Ms until the bucket is out of debt. */
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
  /** Frames dropped since the last `takeDropped()`. */
  #dropped = 0;

  constructor(limits: InputBudgetLimits, now: () => number) {
    this.#now = now;
    this.#frames = new Bucket(limits.framesPerSecond, limits.burstSeconds);
    this.#audio = new Bucket(limits.audioBytesPerSecond, limits.burstSeconds);
    this.#text = new Bucket(limits.textBytesPerSecond, limits.burstSeconds);
    this.#at = now();
  }

  /** Account for one frame of `bytes` of `kind`. */
  take(kind: "audio" | "text", bytes: number): InputVerdict {
    this.#refill();
    const bytesBucket = kind === "audio" ? this.#audio : this.#text;
    if (this.#frames.covers(1) && bytesBucket.covers(bytes)) {
      this.#frames.spend(1);
      bytesBucket.spend(bytes);
      return "pass";
    }
    if (this.#frames.exhausted || bytesBucket.exhausted) {
      this.#dropped += 1;
      return "drop";
    }
    this.#frames.spend(1);
    bytesBucket.spend(bytes);
    return "pause";
  }

  /** Ms until every bucket is out of debt: when reading may resume. */
  resumeInMs(): number {
    this.#refill();
    return Math.ceil(Math.max(this.#frames.debtMs, this.#audio.debtMs, this.#text.debtMs));
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#at);
    this.#at = now;
    for (const bucket of [this.#frames, this.#audio, this.#text]) bucket.refill(elapsed);
  }

  /** Frames dropped since the last call, and the count reset. */
  takeDropped(): number {
    const dropped = this.#dropped;
    this.#dropped = 0;
    return dropped;
  }
}
