import { writeWav } from "../../src/audio/wav.js";

/** `ms` of a sine tone at `hz` (amplitude `amp` of full scale), PCM16 mono or stereo, as a WAV file: the test's own waiting sound. */
export function toneWav(options: { ms: number; hz?: number; rate?: number; channels?: number; amp?: number }): Uint8Array {
  const { ms, hz = 440, rate = 16000, channels = 1, amp = 0.5 } = options;
  const frames = Math.round((ms * rate) / 1000);
  const samples = new Int16Array(frames * channels);
  for (let i = 0; i < frames; i++) {
    const v = Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * amp * 32767);
    for (let c = 0; c < channels; c++) samples[i * channels + c] = v;
  }
  return writeWav(samples, rate, channels);
}

/** A constant (DC) sound of `value`, mono: every mixed sample shows exactly what was added. */
export function constantWav(options: { ms: number; value: number; rate?: number }): Uint8Array {
  const { ms, value, rate = 8000 } = options;
  return writeWav(new Int16Array(Math.round((ms * rate) / 1000)).fill(value), rate, 1);
}
