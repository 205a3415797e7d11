/**
 * The caller audio an STT session keeps for a replay after a drop (stt-reconnect.ts): the chunks
 * in the order sent, each with where it ends in its connection's stream (ms).
 *
 * A queue read from a head index. A final drops the finalized chunks from the front; after a long
 * reply the caller's microphone has sent up to 30 s of 20 ms frames since the last final (1,500
 * chunks), and `Array.prototype.shift` per chunk moved the rest each time: 130–260 µs on the
 * final's path, before its turn was committed (Node 20, this host). Here a drop moves the head
 * and lets go of the chunks it passed (their slots hold `NO_CHUNK` until the arrays are compacted,
 * so a session at the cap does not keep twice the cap's audio), and a chunk costs two array
 * slots, no object of its own.
 */

/** What a dropped chunk's slot holds until the arrays are compacted. */
const NO_CHUNK = new Uint8Array(0);

export class ReplayQueue {
  #chunks: Uint8Array[] = [];
  /** Where each chunk ends in its connection's stream (ms), by the same index. */
  #ends: number[] = [];
  /** The first chunk still queued. */
  #head = 0;
  #bytes = 0;

  /** Chunks queued. */
  get length(): number {
    return this.#chunks.length - this.#head;
  }

  /** Bytes queued. */
  get bytes(): number {
    return this.#bytes;
  }

  push(chunk: Uint8Array, endMs: number): void {
    this.#chunks.push(chunk);
    this.#ends.push(endMs);
    this.#bytes += chunk.byteLength;
  }

  /** Drops the chunks that end at or before `endMs`, from the front. */
  dropThrough(endMs: number): void {
    const ends = this.#ends;
    let head = this.#head;
    while (head < ends.length && (ends[head] as number) <= endMs) head = this.#drop(head);
    this.#moveHead(head);
  }

  /** Drops the oldest chunks while more than `limit` bytes are queued, keeping the newest chunk whatever its size. */
  dropOver(limit: number): void {
    if (this.#bytes <= limit) return;
    const last = this.#chunks.length - 1;
    let head = this.#head;
    while (this.#bytes > limit && head < last) head = this.#drop(head);
    this.#moveHead(head);
  }

  /** Hands each chunk to `send`, in order, and stamps it with the end `send` returns (its place in a new connection's stream). */
  resend(send: (chunk: Uint8Array) => number): void {
    const chunks = this.#chunks;
    for (let i = this.#head; i < chunks.length; i++) this.#ends[i] = send(chunks[i] as Uint8Array);
  }

  /** Lets go of the chunk at `at`; returns the next index. */
  #drop(at: number): number {
    const chunks = this.#chunks;
    this.#bytes -= (chunks[at] as Uint8Array).byteLength;
    chunks[at] = NO_CHUNK;
    return at + 1;
  }

  /** The dropped slots are freed when the queue empties, or once they are half the arrays (each slot moved at most once). */
  #moveHead(head: number): void {
    const size = this.#chunks.length;
    if (head === size) {
      this.#chunks.length = 0;
      this.#ends.length = 0;
      this.#head = 0;
    } else if (head >= 64 && head * 2 >= size) {
      this.#chunks.splice(0, head);
      this.#ends.splice(0, head);
      this.#head = 0;
    } else {
      this.#head = head;
    }
  }
}
