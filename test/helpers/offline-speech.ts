// Speech for a Realtime client on the offline stack: the flite fixture clips (fixtures/audio,
// 16 kHz) as a Realtime client sends them — 24 kHz PCM16 — with a microphone's noise floor after,
// long enough for the local STT's VAD to close the utterance (500 ms of silence, src/pipeline/providers/stt/local.ts).
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Resampler } from "../../src/audio/resample.js";
import { readWav } from "../../src/audio/wav.js";

/** The offline STT's recognizer (Debian's pocketsphinx): the tests that need it skip without it. */
export const POCKETSPHINX = existsSync("/usr/bin/pocketsphinx_continuous");
export const POCKETSPHINX_MISSING = "pocketsphinx is not installed (sudo apt-get install pocketsphinx pocketsphinx-en-us)";

/** Samples of 24 kHz PCM16 in 20 ms: one append. */
const FRAME = 480;

/** A ±20 LSB noise floor (≈ −64 dBFS), deterministic: what a quiet microphone sends between words. */
export function noiseFloor(ms: number, seed = 7): Int16Array {
  const samples = new Int16Array((ms * 24_000) / 1000);
  let state = seed;
  for (let i = 0; i < samples.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    samples[i] = (state % 41) - 20;
  }
  return samples;
}

/** A fixture clip (`hello.wav`, `order-status.wav`, …) at 24 kHz, then `tailMs` of noise floor. */
export function spoken(name: string, tailMs = 1500): Int16Array {
  const wav = readWav(new Uint8Array(readFileSync(new URL(`../../fixtures/audio/${name}`, import.meta.url))));
  const up = new Resampler(wav.sampleRate, 24_000);
  const speech = [...up.process(wav.samples), ...up.flush()];
  return Int16Array.from([...speech, ...noiseFloor(tailMs)]);
}

/** Send `samples` as 20 ms appends, in real time (as a microphone would: the session's clocks assume it). */
export async function speak(samples: Int16Array, append: (pcm: ArrayBuffer) => void): Promise<void> {
  for (let at = 0; at < samples.length; at += FRAME) {
    append(samples.slice(at, at + FRAME).buffer);
    await sleep(20);
  }
}
