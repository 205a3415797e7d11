/**
 * A list that grows at its end, loses entries at its front, and hands out snapshots of itself
 * in constant time: a conversation's transcript, tool calls and model history, which the resume
 * record saves after every reply (session/session-record.ts).
 *
 * Copying a 200-line transcript and a 120-message history at every save is work and garbage that
 * grows with the call, and each copy lives a whole turn in the store: long enough to be promoted
 * and then collected by a full GC (docs/benchmarks.md, "Survivors"). Here a snapshot is a window
 * [start, end) on the list's backing array, which is only ever appended to while a snapshot may
 * read it: an entry inside a window handed out is never written in place. Changing one (`set`,
 * `splice`) first moves the list to a fresh backing array (copy-on-write, O(length)); dropping
 * from the front moves the window's start and compacts the backing array once the dropped part
 * outweighs the live one (amortized O(1) per entry). A snapshot's array is built at its first
 * read (the in-memory store reads a record only when a session resumes).
 */
export class SnapshotList<T> implements Iterable<T> {
  /** Live entries are #items[#start, #items.length). */
  #items: T[] = [];
  #start = 0;
  /** Entries of #items before this index are inside a snapshot's window: never written in place. */
  #sharedEnd = 0;
  /** The live entries as an array, built at the first read since the last change. */
  #array: readonly T[] | undefined;

  constructor(items: Iterable<T> = []) {
    for (const item of items) this.#items.push(item);
  }

  get length(): number {
    return this.#items.length - this.#start;
  }

  at(index: number): T | undefined {
    return index < 0 || index >= this.length ? undefined : this.#items[this.#start + index];
  }

  findIndex(predicate: (item: T) => boolean): number {
    for (let i = this.#start; i < this.#items.length; i++) if (predicate(this.#items[i] as T)) return i - this.#start;
    return -1;
  }

  indexOf(item: T): number {
    return this.findIndex((candidate) => candidate === item);
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = this.#start; i < this.#items.length; i++) yield this.#items[i] as T;
  }

  push(...items: readonly T[]): void {
    if (items.length === 0) return;
    this.#array = undefined;
    for (const item of items) this.#items.push(item);
  }

  /** Replace the entry at `index` (0 ≤ index < length). */
  set(index: number, item: T): void {
    if (index < 0 || index >= this.length) throw new RangeError(`index ${index} outside 0..${this.length - 1}`);
    this.#own(this.#start + index);
    this.#items[this.#start + index] = item;
  }

  /** Remove `deleteCount` entries at `index` and put `items` in their place, as Array#splice (indices within the list). */
  splice(index: number, deleteCount: number, ...items: readonly T[]): void {
    const at = Math.max(0, Math.min(index, this.length));
    if (deleteCount <= 0 && items.length === 0) return;
    if (at === 0 && items.length === 0) return this.dropFront(deleteCount);
    this.#own(this.#start + at);
    this.#items.splice(this.#start + at, Math.max(0, deleteCount), ...items);
  }

  /** Drop the oldest `count` entries. */
  dropFront(count: number): void {
    const n = Math.min(Math.max(0, count), this.length);
    if (n === 0) return;
    this.#array = undefined;
    this.#start += n;
    // Compact once the dropped front outweighs the live entries: each entry is copied at most
    // once per time the list doubles past it. The old array stays with the snapshots that read it.
    if (this.#start >= 32 && this.#start >= this.length) {
      this.#items = this.#items.slice(this.#start);
      this.#start = 0;
      this.#sharedEnd = 0;
    }
  }

  /** Empty the list (snapshots keep what they saw). */
  clear(): void {
    this.#items = [];
    this.#start = 0;
    this.#sharedEnd = 0;
    this.#array = [];
  }

  /** The live entries as an array: built once per change, shared by the reads between changes. Do not cast and write it. */
  toArray(): readonly T[] {
    return (this.#array ??= this.#items.slice(this.#start));
  }

  /** What the list holds now, in O(1): later changes to the list do not reach it. */
  snapshot(): ListSnapshot<T> {
    this.#sharedEnd = this.#items.length;
    return new ListSnapshot(this.#items, this.#start, this.#items.length, this.#array);
  }

  /** Before writing at backing index `from` or past it: if a snapshot reads there, move to a fresh backing array. */
  #own(from: number): void {
    this.#array = undefined;
    if (from >= this.#sharedEnd) return;
    this.#items = this.#items.slice(this.#start);
    this.#start = 0;
    this.#sharedEnd = 0;
  }
}

/** A window on a SnapshotList's backing array as it was; its array is built at the first read. */
export class ListSnapshot<T> {
  readonly #items: readonly T[];
  readonly #start: number;
  readonly #end: number;
  #array: readonly T[] | undefined;

  constructor(items: readonly T[], start: number, end: number, array?: readonly T[]) {
    this.#items = items;
    this.#start = start;
    this.#end = end;
    this.#array = array;
  }

  get length(): number {
    return this.#end - this.#start;
  }

  toArray(): readonly T[] {
    return (this.#array ??= this.#items.slice(this.#start, this.#end));
  }
}
