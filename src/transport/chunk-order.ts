/**
 * Puts numbered media frames back in order (docs/vendors.md (Carriers): Telnyx does not guarantee
 * frame order; reorder by `chunk`). In-order frames pass straight through, with no added latency; an
 * early frame waits for the gap before it to fill, for at most `maxHeld` later frames (20 ms
 * each), then the gap is skipped. A frame that arrives after its turn was skipped is dropped —
 * played late it would be out of place. Pure: no timers, no I/O.
 */
export class ChunkOrder<T> {
  readonly #maxHeld: number;
  #next: number | undefined;
  readonly #held = new Map<number, T>();
  /** Frames dropped: duplicates, or arrived after their gap was skipped. */
  dropped = 0;
  /** Gaps skipped (frames that never came in time). */
  skipped = 0;

  constructor(maxHeld = 3) {
    this.#maxHeld = maxHeld;
  }

  /** One frame in; the frames now due, in order. A frame with no number passes through. */
  push(chunk: number | undefined, item: T): T[] {
    if (chunk === undefined) return [item];
    this.#next ??= chunk;
    if (chunk < this.#next || this.#held.has(chunk)) {
      this.dropped += 1;
      return [];
    }
    if (chunk === this.#next && this.#held.size === 0) {
      this.#next += 1;
      return [item];
    }
    this.#held.set(chunk, item);
    const due = this.#drain();
    if (this.#held.size > this.#maxHeld) {
      this.skipped += Math.min(...this.#held.keys()) - (this.#next ?? 0);
      this.#next = Math.min(...this.#held.keys());
      due.push(...this.#drain());
    }
    return due;
  }

  #drain(): T[] {
    const due: T[] = [];
    let next = this.#next ?? 0;
    while (this.#held.has(next)) {
      due.push(this.#held.get(next) as T);
      this.#held.delete(next);
      next += 1;
    }
    this.#next = next;
    return due;
  }
}
