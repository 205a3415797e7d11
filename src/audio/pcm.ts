/**
 * Helpers on PCM16 little-endian mono audio — the gateway's one wire format (docs/protocol.md).
 * Pure: no I/O, no Node APIs. Sizes are in bytes (2 per sample), durations in milliseconds,
 * rates in Hz, amplitudes as signed 16-bit samples (full scale ±32768).
 */

/** True when typed arrays use little-endian byte order (every platform Node ships for). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The samples in `bytes` (PCM16 LE). A copy-free view over the same memory when the bytes start
 * on an even offset (and the host is little-endian); a copy otherwise. An odd trailing byte is
 * ignored (half a sample: callers that stream carry it over themselves).
 */
export function bytesToSamples(bytes: Uint8Array): Int16Array {
  const count = bytes.byteLength >> 1;
  if (LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, count);
  const samples = new Int16Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  for (let i = 0; i < count; i++) samples[i] = view.getInt16(i * 2, true);
  return samples;
}

/** The PCM16 LE bytes of `samples`: a copy-free view on a little-endian host, a copy otherwise. */
export function samplesToBytes(samples: Int16Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i] ?? 0, true);
  return bytes;
}

/** Duration (ms) of `bytes` bytes of PCM16 mono at `sampleRate` Hz. An odd trailing byte counts as half a sample. */
export function durationMs(bytes: number, sampleRate: number): number {
  return (bytes / 2 / sampleRate) * 1000;
}

/** Bytes of PCM16 mono holding `ms` milliseconds at `sampleRate` Hz: whole samples, so always even. */
export function bytesForMs(ms: number, sampleRate: number): number {
  return Math.round((ms * sampleRate) / 1000) * 2;
}

/** Root-mean-square level of `samples`, normalized to 0..1 (1 = full-scale square wave). 0 when empty. */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.min(1, Math.sqrt(sum / samples.length) / 32768);
}

/** One new array holding `chunks` (bytes) back to back. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  return fill(new Uint8Array(totalLength(chunks)), chunks);
}

/** One new array holding `chunks` (samples) back to back. */
export function concatSamples(chunks: readonly Int16Array[]): Int16Array {
  return fill(new Int16Array(totalLength(chunks)), chunks);
}

/** Elements in `chunks` together. */
function totalLength(chunks: readonly ArrayLike<number>[]): number {
  let total = 0;
  for (const c of chunks) total += c.length;
  return total;
}

/** Copies `chunks` into `out` back to back; `out` holds exactly their total length. */
function fill<T extends Uint8Array | Int16Array>(out: T, chunks: readonly ArrayLike<number>[]): T {
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

/**
 * Cuts a stream of arbitrary-size PCM16 chunks into frames of exactly `frameMs` ms (whole samples:
 * `bytesForMs(frameMs, sampleRate)` bytes each), keeping the remainder — odd bytes included —
 * for the next `push`. Used for VAD frames (10/20/30 ms) and 20 ms pacing frames.
 */
export class FrameSplitter {
  /** Bytes per frame (even, > 0). */
  readonly frameBytes: number;
  readonly frameMs: number;
  readonly sampleRate: number;
  /** Bytes held over from the last push (always < frameBytes). */
  #pending: Uint8Array;
  #pendingLength = 0;

  constructor(sampleRate: number, frameMs: number) {
    if (!(sampleRate > 0) || !(frameMs > 0)) throw new RangeError(`FrameSplitter: invalid sampleRate ${sampleRate} or frameMs ${frameMs}`);
    this.sampleRate = sampleRate;
    this.frameMs = frameMs;
    this.frameBytes = bytesForMs(frameMs, sampleRate);
    if (this.frameBytes === 0) throw new RangeError(`FrameSplitter: ${frameMs} ms at ${sampleRate} Hz is less than one sample`);
    this.#pending = new Uint8Array(this.frameBytes);
  }

  /** Bytes waiting for the rest of their frame. */
  get pendingBytes(): number {
    return this.#pendingLength;
  }

  /** Appends `chunk` and returns every frame it completes, oldest first. Each frame is a new array the caller owns. */
  push(chunk: Uint8Array): Uint8Array[] {
    const frames: Uint8Array[] = [];
    let offset = 0;
    if (this.#pendingLength > 0) {
      const take = Math.min(this.frameBytes - this.#pendingLength, chunk.byteLength);
      this.#pending.set(chunk.subarray(0, take), this.#pendingLength);
      this.#pendingLength += take;
      offset = take;
      if (this.#pendingLength < this.frameBytes) return frames;
      frames.push(this.#pending.slice());
      this.#pendingLength = 0;
    }
    while (chunk.byteLength - offset >= this.frameBytes) {
      frames.push(chunk.slice(offset, offset + this.frameBytes));
      offset += this.frameBytes;
    }
    if (offset < chunk.byteLength) {
      this.#pending.set(chunk.subarray(offset), 0);
      this.#pendingLength = chunk.byteLength - offset;
    }
    return frames;
  }

  /** Returns the partial frame held over (possibly empty, possibly odd-length) and clears it. */
  flush(): Uint8Array {
    const rest = this.#pending.slice(0, this.#pendingLength);
    this.#pendingLength = 0;
    return rest;
  }

  /** Drops the held-over bytes. */
  reset(): void {
    this.#pendingLength = 0;
  }
}
