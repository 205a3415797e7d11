/** Every map's slots before its first entry: never written (an entry is only written at `size`, and `set` replaces this first). */
const NO_SLOTS: unknown[] = [];

/**
 * A map and a set for the handful of entries a session holds at a time and empties every turn
 * (the responses in flight, the replies the caller is hearing, the waits for playback to end), or
 * holds for the call and keeps few (a log throttle's kinds, a carrier's ignored-frame reasons).
 *
 * V8 gives a `Map` or `Set` a new hash table when a delete leaves it empty, another as it grows
 * again, and one at every `clear()`: a few hundred bytes a turn that live as long as the turn, long
 * enough to outlive young-generation collections and be copied, promoted and collected by a full
 * one (docs/benchmarks.md, "Survivors"). These keep their entries packed in insertion order in
 * an array that grows to the most entries ever held and is then only written: emptying and
 * refilling allocates nothing. A map that never gets an entry has no array (a `Map` gets its table,
 * 180 bytes, when made). Lookups scan the entries, which is as fast as hashing for the few
 * they hold; they are not for collections that grow with a call.
 *
 * Keys are compared as `Map` compares them, except that `NaN` is never found; no key may be
 * `undefined` (an empty slot).
 */
export class SmallMap<K extends NonNullable<unknown>, V> {
  /**
   * Entry i's key at 2i, its value at 2i + 1; entries [0, size) are live, oldest first, and slots
   * past them hold `undefined`. One array, made at the first entry with room for two (80 bytes
   * with its store; an array literal's first write gives it room for 16, 184 bytes): a session
   * keeps a dozen of these maps for its whole call, several never used.
   */
  #slots: unknown[] = NO_SLOTS;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  has(key: K): boolean {
    return this.#index(key) >= 0;
  }

  get(key: K): V | undefined {
    const i = this.#index(key);
    return i < 0 ? undefined : (this.#slots[i + 1] as V);
  }

  set(key: K, value: V): this {
    const i = this.#index(key);
    if (i >= 0) {
      this.#slots[i + 1] = value;
      return this;
    }
    if (this.#slots === NO_SLOTS) this.#slots = new Array<unknown>(4);
    this.#slots[2 * this.#size] = key;
    this.#slots[2 * this.#size + 1] = value;
    this.#size += 1;
    return this;
  }

  delete(key: K): boolean {
    const i = this.#index(key);
    if (i < 0) return false;
    const last = 2 * (this.#size - 1);
    // Later entries move down one: insertion order is kept, as a Map keeps it.
    for (let j = i; j < last; j++) this.#slots[j] = this.#slots[j + 2];
    this.#slots[last] = undefined;
    this.#slots[last + 1] = undefined;
    this.#size -= 1;
    return true;
  }

  clear(): void {
    for (let i = 0; i < 2 * this.#size; i++) this.#slots[i] = undefined;
    this.#size = 0;
  }

  /** The entries as they stand, oldest first: a copy, so the map may change while it is read. */
  entries(): [K, V][] {
    // Made at its length: a pushed-to literal's store has room for 16.
    const entries = new Array<[K, V]>(this.#size);
    for (let i = 0; i < this.#size; i++) entries[i] = [this.#slots[2 * i] as K, this.#slots[2 * i + 1] as V];
    return entries;
  }

  /** The keys as they stand, oldest first (a copy). */
  keys(): K[] {
    const keys = new Array<K>(this.#size);
    for (let i = 0; i < this.#size; i++) keys[i] = this.#slots[2 * i] as K;
    return keys;
  }

  /** The slot of `key`'s entry (its key's), or -1. */
  #index(key: K): number {
    for (let i = 0; i < 2 * this.#size; i += 2) if (this.#slots[i] === key) return i;
    return -1;
  }
}

/** A set of the same kind as `SmallMap`: for a handful of members, emptied and refilled often. */
export class SmallSet<T extends NonNullable<unknown>> {
  readonly #map = new SmallMap<T, true>();

  get size(): number {
    return this.#map.size;
  }

  has(member: T): boolean {
    return this.#map.has(member);
  }

  add(member: T): this {
    this.#map.set(member, true);
    return this;
  }

  delete(member: T): boolean {
    return this.#map.delete(member);
  }

  clear(): void {
    this.#map.clear();
  }

  /** The members as they stand, oldest first: a copy, so the set may change while it is read. */
  values(): T[] {
    return this.#map.keys();
  }
}
