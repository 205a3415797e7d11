/**
 * What every gateway process of one deployment must agree on about strangers: single-use call
 * tickets (minted by a verified carrier webhook, redeemed by that call's stream upgrade, which may
 * land on another worker or instance), webhook signatures already seen (replays), and how many
 * connections each client address has opened lately.
 *
 * Three homes, one interface: this process's memory (one process), the `--workers` primary (over
 * the cluster's IPC, see workers.ts), and Redis (several instances, see redis-store.ts).
 */
import { ConnectionRateLimit } from "./rate-limit.js";

export interface Coordinator {
  /**
   * Hold `value` under `key` for `ttlMs`, unless the key is already held: true when this call
   * stored it (the first use), false when it was there (a replay) or cannot be stored.
   */
  hold(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** The value under `key`, removed as it is read: a second take of the same key gets undefined. */
  take(key: string): Promise<string | undefined>;
  /** One connection from `address` against a bucket of `perMinute` (refilled evenly): false when it is empty. */
  admit(address: string, perMinute: number): Promise<boolean>;
}

/**
 * Keys held at once before more are refused (fail closed). Keys are made only by verified
 * webhooks, so only the carriers can add them; this bounds memory if one misbehaves.
 */
export const MAX_HELD_KEYS = 200_000;

/** The embedded coordinator: this process's memory, expiries read off the injected clock. */
export class MemoryCoordinator implements Coordinator {
  readonly #now: () => number;
  readonly #held = new Map<string, { readonly value: string; readonly expires: number }>();
  readonly #limits = new Map<number, ConnectionRateLimit>();
  readonly #maxKeys: number;
  #nextSweep = 0;

  constructor(now: () => number, maxKeys = MAX_HELD_KEYS) {
    this.#now = now;
    this.#maxKeys = maxKeys;
  }

  hold(key: string, value: string, ttlMs: number): Promise<boolean> {
    const now = this.#now();
    this.#sweep(now);
    const held = this.#held.get(key);
    if (held !== undefined && held.expires > now) return Promise.resolve(false);
    if (held === undefined && this.#held.size >= this.#maxKeys) return Promise.resolve(false);
    this.#held.set(key, { value, expires: now + ttlMs });
    return Promise.resolve(true);
  }

  take(key: string): Promise<string | undefined> {
    const held = this.#held.get(key);
    this.#held.delete(key);
    return Promise.resolve(held !== undefined && held.expires > this.#now() ? held.value : undefined);
  }

  admit(address: string, perMinute: number): Promise<boolean> {
    let limit = this.#limits.get(perMinute);
    if (limit === undefined) {
      limit = new ConnectionRateLimit(perMinute, this.#now);
      this.#limits.set(perMinute, limit);
    }
    return Promise.resolve(limit.take(address));
  }

  /** Keys held now (expired ones may linger until the next sweep). */
  get size(): number {
    return this.#held.size;
  }

  /** Drop expired keys, at most once a second and only when there are many: amortized O(1) per hold. */
  #sweep(now: number): void {
    if (now < this.#nextSweep || this.#held.size < 1024) return;
    this.#nextSweep = now + 1000;
    for (const [key, held] of this.#held) if (held.expires <= now) this.#held.delete(key);
  }
}
