/**
 * A map and a set for the handful of entries a session holds at a time and empties every turn
 * (the responses in flight, the replies the caller is hearing, the waits for playback to end).
 *
 * V8 gives a `Map` or `Set` a new hash table when a delete leaves it empty, another as it grows
 * again, and one at every `clear()`: a few hundred bytes a turn that live as long as the turn, long
 * enough to outlive young-generation collections and be copied, promoted and collected by a full
 * one (docs/benchmarks.md, "Survivors"). These keep their entries packed in insertion order in
 * arrays that grow to the most entries ever held and are then only written: emptying and
 * refilling allocates nothing. Lookups scan the entries, which is as fast as hashing for the few
 * they hold; they are not for collections that grow with a call.
 *
 * Keys are compared as `Map` compares them, except that `NaN` is never found; no key may be
 * `undefined` (an empty slot).
 */
export class SmallMap<K extends NonNullable<unknown>, V> {
  /** Entries [0, size) are live, oldest first; slots past them hold `undefined`. */
  readonly #keys: (K | undefined)[] = [];
  readonly #values: (V | undefined)[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  has(key: K): boolean {
    return this.#index(key) >= 0;
  }

  get(key: K): V | undefined {
    const i = this.#index(key);
    return i < 0 ? undefined : this.#values[i];
  }

  set(key: K, value: V): this {
    const i = this.#index(key);
    if (i >= 0) {
      this.#values[i] = value;
      return this;
    }
    this.#keys[this.#size] = key;
    this.#values[this.#size] = value;
    this.#size += 1;
    return this;
  }

  delete(key: K): boolean {
    const i = this.#index(key);
    if (i < 0) return false;
    const last = this.#size - 1;
    // Later entries move down one: insertion order is kept, as a Map keeps it.
    for (let j = i; j < last; j++) {
      this.#keys[j] = this.#keys[j + 1];
      this.#values[j] = this.#values[j + 1];
    }
    this.#keys[last] = undefined;
    this.#values[last] = undefined;
    this.#size = last;
    return true;
  }

  clear(): void {
    for (let i = 0; i < this.#size; i++) {
      this.#keys[i] = undefined;
      this.#values[i] = undefined;
    }
    this.#size = 0;
  }

  /** The entries as they stand, oldest first: a copy, so the map may change while it is read. */
  entries(): [K, V][] {
    const entries: [K, V][] = [];
    for (let i = 0; i < this.#size; i++) entries.push([this.#keys[i] as K, this.#values[i] as V]);
    return entries;
  }

  /** The keys as they stand, oldest first (a copy). */
  keys(): K[] {
    return this.#keys.slice(0, this.#size) as K[];
  }

  #index(key: K): number {
    for (let i = 0; i < this.#size; i++) if (this.#keys[i] === key) return i;
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
