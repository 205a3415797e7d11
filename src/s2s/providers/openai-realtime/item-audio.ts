/**
 * Bytes of audio each output item has sent on this socket (what `conversation.item.truncate` may
 * cut to, and which items this conversation holds). Every audio delta adds to it, 50 a second on a
 * phone call, almost all to the item speaking now: that one is kept in fields, the finished ones
 * in a map, so a delta touches this object only, not a map's table (on a process running hundreds
 * of calls each is a cache line cold by the call's next delta: docs/benchmarks.md,
 * `bench:carrier-counts`).
 */
export class ItemAudio {
  /** The item the last delta belonged to, and its bytes so far. */
  #item: string | undefined;
  #bytes = 0;
  /** Every other item's bytes. */
  readonly #earlier = new Map<string, number>();

  add(itemId: string, bytes: number): void {
    if (itemId !== this.#item) {
      if (this.#item !== undefined) this.#earlier.set(this.#item, this.#bytes);
      this.#item = itemId;
      this.#bytes = this.#earlier.get(itemId) ?? 0;
      this.#earlier.delete(itemId);
    }
    this.#bytes += bytes;
  }

  /** The item's bytes; undefined when none of its audio came on this socket. */
  get(itemId: string): number | undefined {
    return itemId === this.#item ? this.#bytes : this.#earlier.get(itemId);
  }

  delete(itemId: string): void {
    if (itemId === this.#item) {
      this.#item = undefined;
      this.#bytes = 0;
    } else {
      this.#earlier.delete(itemId);
    }
  }

  clear(): void {
    this.#item = undefined;
    this.#bytes = 0;
    this.#earlier.clear();
  }
}
