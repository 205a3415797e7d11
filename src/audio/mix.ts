/**
 * Mixing PCM16 mono: adding a quieter sound under another, and a sound that loops forever. Pure:
 * no I/O, no timers. Amplitudes are signed 16-bit samples; a gain is linear (1 = as recorded).
 */

const MAX = 32767;
const MIN = -32768;

/**
 * `out[i] + bed[i] · gain` for each sample of `out`, into a new array (`out` is left as it is:
 * it may be a view over a provider's buffer). Saturating: a sum past full scale is clamped to
 * ±full scale instead of wrapping around (a wrap is a loud click).
 */
export function mixUnder(out: Int16Array, bed: Int16Array, gain: number): Int16Array {
  const mixed = new Int16Array(out.length);
  const n = Math.min(out.length, bed.length);
  for (let i = 0; i < out.length; i++) {
    const sum = (out[i] ?? 0) + (i < n ? Math.round((bed[i] ?? 0) * gain) : 0);
    mixed[i] = sum > MAX ? MAX : sum < MIN ? MIN : sum;
  }
  return mixed;
}

/** `target[i] += source[i] · gain`, saturating, in place (a buffer this module made). */
export function addInto(target: Int16Array, source: Int16Array, gain: number): void {
  const n = Math.min(target.length, source.length);
  for (let i = 0; i < n; i++) {
    const sum = (target[i] ?? 0) + Math.round((source[i] ?? 0) * gain);
    target[i] = sum > MAX ? MAX : sum < MIN ? MIN : sum;
  }
}

/** A sound played in a loop: each `read` continues where the last one stopped, wrapping to the start. */
export class LoopingSource {
  readonly #samples: Int16Array;
  #cursor = 0;

  constructor(samples: Int16Array) {
    if (samples.length === 0) throw new RangeError("a looping source needs at least one sample");
    this.#samples = samples;
  }

  /** The next `count` samples (a new array). */
  read(count: number): Int16Array {
    const out = new Int16Array(count);
    let filled = 0;
    while (filled < count) {
      const part = Math.min(count - filled, this.#samples.length - this.#cursor);
      out.set(this.#samples.subarray(this.#cursor, this.#cursor + part), filled);
      filled += part;
      this.#cursor = (this.#cursor + part) % this.#samples.length;
    }
    return out;
  }

  /** Back to the sound's start (the next play of a sound that stopped). */
  rewind(): void {
    this.#cursor = 0;
  }
}
