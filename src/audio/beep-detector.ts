/**
 * An answering machine's beep on the caller's audio: a sustained single tone. Pure: samples in,
 * a report out, no clock (time is the samples' own count).
 *
 * Every 20 ms frame is measured with the Goertzel algorithm at every 25 Hz from 400 to 2000 Hz
 * (where machines put their beep: 440, 850, 1000, 1400 Hz are common). A frame is *tonal* when
 * one bin holds at least `TONE_PURITY` of the frame's energy and the frame is louder than
 * `MIN_TONE_DBFS`; speech (harmonics spread over many bins) and noise do not pass. A run of tonal
 * frames at one frequency (within `FREQUENCY_TOLERANCE_HZ`) lasting at least `MIN_BEEP_MS` is a
 * beep, reported when it ends (the first frame that is not part of it), so a message starts after
 * the beep and not over it; a tone still going at `MAX_BEEP_MS` is reported then.
 *
 * Resolution: a 20 ms frame resolves 50 Hz; bins every 25 Hz keep a tone between two bins within
 * 12.5 Hz of one, where the bin holds ≥ 80 % of a pure tone's energy (sinc² of a quarter bin).
 */

/** Frame length (ms). */
export const BEEP_FRAME_MS = 20;
/** The band searched (Hz). */
export const BEEP_MIN_HZ = 400;
export const BEEP_MAX_HZ = 2000;
/** Spacing of the Goertzel bins (Hz). */
export const BEEP_BIN_STEP_HZ = 25;
/** The share of a frame's energy one bin must hold (0–1). */
export const TONE_PURITY = 0.6;
/** A tonal frame is at least this loud (dBFS, RMS): line noise is not a beep. */
export const MIN_TONE_DBFS = -40;
/** Consecutive tonal frames belong to one tone within this of its first frame's frequency (Hz). */
export const FREQUENCY_TOLERANCE_HZ = 50;
/** The shortest tone that counts as a beep (ms): 8 frames. */
export const MIN_BEEP_MS = 160;
/** A tone still going after this is reported without waiting for its end (ms). */
export const MAX_BEEP_MS = 2000;

/** A beep heard: its frequency (Hz), its length (ms), and where it ended in the samples pushed so far (ms). */
export interface BeepHeard {
  readonly frequencyHz: number;
  readonly durationMs: number;
  readonly endedAtMs: number;
}

/** One frame's measure: the strongest bin, its share of the energy, the level. */
export interface FrameTone {
  readonly frequencyHz: number;
  readonly purity: number;
  readonly levelDbfs: number;
}

/** Goertzel power of `samples` at `hz`, normalized so a full-bin pure tone of energy E gives ≈ E. */
function goertzel(samples: Float64Array, hz: number, rate: number): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const s0 = (samples[i] as number) + coefficient * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coefficient * s1 * s2;
  // |X|² of a tone of amplitude A over N samples is (A·N/2)²; its energy Σx² is A²·N/2.
  return (2 * power) / samples.length;
}

/** Measure one frame (samples as floats in [-1, 1]). */
export function frameTone(frame: Float64Array, rate: number): FrameTone {
  let energy = 0;
  for (let i = 0; i < frame.length; i++) energy += (frame[i] as number) ** 2;
  const levelDbfs = energy === 0 ? -Infinity : 10 * Math.log10(energy / frame.length) + 3.01; // RMS re a full-scale sine
  let best = 0;
  let bestHz = 0;
  if (energy > 0) {
    for (let hz = BEEP_MIN_HZ; hz <= BEEP_MAX_HZ && hz < rate / 2; hz += BEEP_BIN_STEP_HZ) {
      const power = goertzel(frame, hz, rate);
      if (power > best) {
        best = power;
        bestHz = hz;
      }
    }
  }
  return { frequencyHz: bestHz, purity: energy === 0 ? 0 : Math.min(1, best / energy), levelDbfs };
}

export class BeepDetector {
  readonly #rate: number;
  readonly #frameSamples: number;
  readonly #frame: Float64Array;
  #filled = 0;
  /** Frames measured so far. */
  #frames = 0;
  /** The tone being heard: its first frame's frequency and how many frames it has lasted. */
  #run: { hz: number; frames: number; reported: boolean } | undefined;
  /** The last frame's level (dBFS), for a caller that tracks quiet. */
  lastLevelDbfs = -Infinity;

  /** `rate`: the samples' rate (Hz), 8000 or more. */
  constructor(rate: number) {
    this.#rate = rate;
    this.#frameSamples = Math.round((rate * BEEP_FRAME_MS) / 1000);
    this.#frame = new Float64Array(this.#frameSamples);
  }

  /** Ms of audio measured so far. */
  get heardMs(): number {
    return this.#frames * BEEP_FRAME_MS;
  }

  /** Feed PCM16 samples; the beeps that ended in them, in order (usually none). */
  push(samples: Int16Array, onFrame?: (levelDbfs: number) => void): BeepHeard[] {
    const heard: BeepHeard[] = [];
    for (let i = 0; i < samples.length; i++) {
      this.#frame[this.#filled++] = (samples[i] as number) / 32768;
      if (this.#filled < this.#frameSamples) continue;
      this.#filled = 0;
      const beep = this.#measure();
      if (beep !== undefined) heard.push(beep);
      onFrame?.(this.lastLevelDbfs);
    }
    return heard;
  }

  #measure(): BeepHeard | undefined {
    const tone = frameTone(this.#frame, this.#rate);
    this.#frames += 1;
    this.lastLevelDbfs = tone.levelDbfs;
    const tonal = tone.purity >= TONE_PURITY && tone.levelDbfs >= MIN_TONE_DBFS;
    const run = this.#run;
    if (tonal && run !== undefined && Math.abs(tone.frequencyHz - run.hz) <= FREQUENCY_TOLERANCE_HZ) {
      run.frames += 1;
      if (!run.reported && run.frames * BEEP_FRAME_MS >= MAX_BEEP_MS) {
        run.reported = true;
        return { frequencyHz: run.hz, durationMs: run.frames * BEEP_FRAME_MS, endedAtMs: this.heardMs };
      }
      return undefined;
    }
    // The run (if any) ended with the frame before this one.
    const ended = run !== undefined && !run.reported && run.frames * BEEP_FRAME_MS >= MIN_BEEP_MS ? run : undefined;
    this.#run = tonal ? { hz: tone.frequencyHz, frames: 1, reported: false } : undefined;
    return ended === undefined ? undefined : { frequencyHz: ended.hz, durationMs: ended.frames * BEEP_FRAME_MS, endedAtMs: this.heardMs - BEEP_FRAME_MS };
  }
}
