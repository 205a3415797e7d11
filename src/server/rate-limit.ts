/**
 * Connections per client address: a token bucket per IP (`perMinute` tokens, refilled evenly), so
 * one address cannot open sessions faster than that, while bursts up to the bucket size pass.
 * Idle buckets are forgotten. Pure apart from the injected clock's `now`.
 */
export class ConnectionRateLimit {
  readonly #perMinute: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(perMinute: number, now: () => number) {
    this.#perMinute = perMinute;
    this.#now = now;
  }

  /** Take one connection for `address`; false when its bucket is empty. */
  take(address: string): boolean {
    const now = this.#now();
    if (this.#buckets.size > 10_000) this.#prune(now);
    const bucket = this.#buckets.get(address) ?? { tokens: this.#perMinute, at: now };
    bucket.tokens = Math.min(this.#perMinute, bucket.tokens + ((now - bucket.at) * this.#perMinute) / 60_000);
    bucket.at = now;
    this.#buckets.set(address, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Forget addresses whose bucket has refilled (they would start full anyway). */
  #prune(now: number): void {
    for (const [address, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.at) * this.#perMinute) / 60_000 >= this.#perMinute) this.#buckets.delete(address);
    }
  }
}
