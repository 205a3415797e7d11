/**
 * The agent's sounds for waiting (docs/telephony.md "Audio while waiting"): a WAV file decoded
 * once, when the agent loads, to mono PCM16 at its own rate, and resampled once per link rate
 * the first time a link of that rate plays it (then kept: a gateway's links play at most the
 * few rates of `audio/rates.ts` and the resampler's). Pure: bytes in, samples out; reading the
 * file is the loader's.
 */
import { GatewayError } from "../errors.js";
import { RESAMPLER_RATES, Resampler, type ResamplerRate } from "./resample.js";
import { readWav } from "./wav.js";

/** A waiting sound's file may be at most this big (bytes): 8 MiB is about 3 minutes of 24 kHz stereo PCM16, far more than a loop needs. */
export const MAX_WAITING_SOUND_BYTES = 8 * 1024 * 1024;
/** A loop shorter than this (ms) is a click, not a sound. */
export const MIN_WAITING_SOUND_MS = 20;

function isResamplerRate(rate: number): rate is ResamplerRate {
  return (RESAMPLER_RATES as readonly number[]).includes(rate);
}

/** One decoded sound: mono PCM16 at the file's rate, and at any link rate on demand. */
export class WaitingSound {
  readonly sampleRate: ResamplerRate;
  readonly samples: Int16Array;
  readonly #atRate = new Map<number, Int16Array>();

  constructor(samples: Int16Array, sampleRate: ResamplerRate) {
    this.samples = samples;
    this.sampleRate = sampleRate;
    this.#atRate.set(sampleRate, samples);
  }

  /** Length in ms. */
  get ms(): number {
    return (this.samples.length / this.sampleRate) * 1000;
  }

  /** The sound at `rate` Hz (resampled once, then kept). Throws GatewayError("audio") for a rate the resampler does not take. */
  at(rate: number): Int16Array {
    const kept = this.#atRate.get(rate);
    if (kept !== undefined) return kept;
    const resampler = new Resampler(this.sampleRate, rate);
    const head = resampler.process(this.samples);
    const tail = resampler.flush();
    const out = new Int16Array(head.length + tail.length);
    out.set(head);
    out.set(tail, head.length);
    this.#atRate.set(rate, out);
    return out;
  }
}

/**
 * A WAV file's bytes → a `WaitingSound`. PCM16, mono or stereo (channels averaged), at a rate the
 * resampler takes. Throws GatewayError("audio") saying what is wrong and how to fix it.
 */
export function decodeWaitingSound(bytes: Uint8Array): WaitingSound {
  if (bytes.byteLength > MAX_WAITING_SOUND_BYTES) {
    throw new GatewayError("audio", `is ${bytes.byteLength} bytes; a waiting sound may be at most ${MAX_WAITING_SOUND_BYTES} bytes (use a shorter loop)`);
  }
  const wav = readWav(bytes);
  if (wav.channels > 2) throw new GatewayError("audio", `has ${wav.channels} channels; use a mono or stereo WAV`);
  if (!isResamplerRate(wav.sampleRate)) {
    throw new GatewayError("audio", `is at ${wav.sampleRate} Hz; convert it to one of ${RESAMPLER_RATES.join(", ")} Hz (e.g. sox in.wav -r 24000 out.wav)`);
  }
  const frames = wav.samples.length / wav.channels;
  let mono = wav.samples;
  if (wav.channels === 2) {
    mono = new Int16Array(frames);
    for (let i = 0; i < frames; i++) mono[i] = Math.round(((wav.samples[2 * i] ?? 0) + (wav.samples[2 * i + 1] ?? 0)) / 2);
  }
  if ((frames / wav.sampleRate) * 1000 < MIN_WAITING_SOUND_MS) throw new GatewayError("audio", `is shorter than ${MIN_WAITING_SOUND_MS} ms; a waiting sound loops, so give it at least that`);
  return new WaitingSound(mono, wav.sampleRate);
}

/** What an agent plays while waiting, decoded, with its settings (config.md `waitingAudio`). */
export interface WaitingSounds {
  /** Looped while the agent thinks or a tool runs, once that has lasted `afterMs`; never under speech. */
  readonly thinking?: { readonly sound: WaitingSound; readonly gain: number; readonly afterMs: number } | undefined;
  /** Looped under everything the agent says and in its silences, for the whole session. */
  readonly ambience?: { readonly sound: WaitingSound; readonly gain: number } | undefined;
}
