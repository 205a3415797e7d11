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
  /** Early frames, by number; made at the first (a call whose frames come in order never has one). */
  #held: Map<number, T> | undefined;
  /** Frames dropped: duplicates, or arrived after their gap was skipped. */
  dropped = 0;
  /** Gaps skipped (frames that never came in time). */
  skipped = 0;

  constructor(maxHeld = 3) {
    this.#maxHeld = maxHeld;
  }

  /**
   * Whether frame `chunk` is due now with nothing held before it (a frame with no number always
   * is): then it is taken, as `push` would hand it back alone, with no array made. Every frame of a
   * call whose carrier sends them in order takes this path, 50 a second. False: `push` it.
   */
  due(chunk: number | undefined): boolean {
    if (chunk === undefined) return true;
    if (this.#held !== undefined && this.#held.size > 0) return false;
    this.#next ??= chunk;
    if (chunk !== this.#next) return false;
    this.#next += 1;
    return true;
  }

  /** One frame in; the frames now due, in order. A frame with no number passes through. */
  push(chunk: number | undefined, item: T): T[] {
    if (chunk === undefined) return [item];
    this.#next ??= chunk;
    const held = (this.#held ??= new Map<number, T>());
    if (chunk < this.#next || held.has(chunk)) {
      this.dropped += 1;
      return [];
    }
    if (chunk === this.#next && held.size === 0) {
      this.#next += 1;
      return [item];
    }
    held.set(chunk, item);
    const due = this.#drain(held);
    if (held.size > this.#maxHeld) {
      this.skipped += Math.min(...held.keys()) - (this.#next ?? 0);
      this.#next = Math.min(...held.keys());
      due.push(...this.#drain(held));
    }
    return due;
  }

  #drain(held: Map<number, T>): T[] {
    const due: T[] = [];
    let next = this.#next ?? 0;
    while (held.has(next)) {
      due.push(held.get(next) as T);
      held.delete(next);
      next += 1;
    }
    this.#next = next;
    return due;
  }
}
