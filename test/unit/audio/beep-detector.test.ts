// The beep detector (src/audio/beep-detector.ts): a sustained single tone in 400–2000 Hz for at
// least 160 ms, reported when it ends; speech, noise, short blips and quiet tones are not beeps.
// Synthesized tones with noise, and flite's "please leave a message after the tone" before a beep.
import { describe, expect, it } from "vitest";
import { BeepDetector, frameTone, MAX_BEEP_MS, MIN_BEEP_MS } from "../../../src/audio/beep-detector.js";
import { synthesize } from "../../../src/pipeline/providers/tts/local-worker.js";

/** A deterministic noise source (LCG), uniform in [-1, 1). */
function noiseSource(seed = 7): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 30 - 1;
  };
}

/** `ms` of a tone at `hz` (amplitude `amp` of full scale) plus white noise of amplitude `noise`, PCM16. */
function tone(ms: number, hz: number, rate: number, amp = 0.3, noise = 0.01): Int16Array {
  const random = noiseSource(hz);
  const out = new Int16Array(Math.round((ms * rate) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round((amp * Math.sin((2 * Math.PI * hz * i) / rate) + noise * random()) * 32767);
  return out;
}

function noise(ms: number, rate: number, amp = 0.01): Int16Array {
  const random = noiseSource(3);
  return Int16Array.from({ length: Math.round((ms * rate) / 1000) }, () => Math.round(amp * random() * 32767));
}

/** A voiced, speech-like sound: a 140 Hz fundamental with 12 harmonics of falling strength. */
function vowel(ms: number, rate: number): Int16Array {
  const out = new Int16Array(Math.round((ms * rate) / 1000));
  for (let i = 0; i < out.length; i++) {
    let v = 0;
    for (let h = 1; h <= 12; h++) v += (0.3 / h) * Math.sin((2 * Math.PI * 140 * h * i) / rate);
    out[i] = Math.round(v * 0.5 * 32767);
  }
  return out;
}

function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Push `samples` in 20 ms chunks of a carrier's cadence (or `chunk` samples); every beep heard. */
function run(samples: Int16Array, rate: number, chunk = rate / 50) {
  const detector = new BeepDetector(rate);
  const heard = [];
  for (let i = 0; i < samples.length; i += chunk) heard.push(...detector.push(samples.subarray(i, i + chunk)));
  return heard;
}

describe("frameTone", () => {
  it("finds a pure tone's frequency and nearly all its energy in one bin, even between bins", () => {
    for (const hz of [440, 1000, 1012, 1400]) {
      const measured = frameTone(Float64Array.from(tone(20, hz, 8000, 0.5, 0), (s) => s / 32768), 8000);
      expect(Math.abs(measured.frequencyHz - hz)).toBeLessThanOrEqual(12.5);
      expect(measured.purity).toBeGreaterThan(0.75);
      expect(measured.levelDbfs).toBeGreaterThan(-7);
    }
  });
});

describe("BeepDetector", () => {
  it.each([8000, 16000])("hears a 300 ms beep at 1 kHz in line noise, once, when it ends (%i Hz)", (rate) => {
    const heard = run(concat(noise(500, rate), tone(300, 1000, rate), noise(500, rate)), rate);
    expect(heard).toHaveLength(1);
    expect(heard[0]?.frequencyHz).toBeCloseTo(1000, -2);
    expect(heard[0]?.durationMs).toBeGreaterThanOrEqual(280);
    expect(heard[0]?.durationMs).toBeLessThanOrEqual(320);
    // It ended where the tone did (500 + 300 ms), within a frame.
    expect(Math.abs((heard[0]?.endedAtMs ?? 0) - 800)).toBeLessThanOrEqual(20);
  });

  it("hears beeps across the band (440 Hz, 850 Hz, 1400 Hz, 1950 Hz), whatever the chunk size", () => {
    for (const hz of [440, 850, 1400, 1950]) expect(run(concat(noise(200, 8000), tone(250, hz, 8000), noise(200, 8000)), 8000, 137), String(hz)).toHaveLength(1);
  });

  it("ignores tones shorter than MIN_BEEP_MS, quiet tones, tones outside the band, noise and speech-like sound", () => {
    expect(run(concat(noise(200, 8000), tone(MIN_BEEP_MS - 60, 1000, 8000), noise(300, 8000)), 8000)).toEqual([]);
    expect(run(concat(tone(400, 1000, 8000, 0.004, 0)), 8000)).toEqual([]);
    expect(run(concat(tone(400, 250, 8000), noise(100, 8000)), 8000)).toEqual([]);
    expect(run(noise(2000, 8000, 0.3), 8000)).toEqual([]);
    expect(run(concat(vowel(1500, 8000), noise(100, 8000)), 8000)).toEqual([]);
  });

  it("reports a tone that goes on at MAX_BEEP_MS, and only once", () => {
    const heard = run(concat(tone(MAX_BEEP_MS + 1000, 1000, 8000), noise(100, 8000)), 8000);
    expect(heard).toHaveLength(1);
    expect(heard[0]?.durationMs).toBe(MAX_BEEP_MS);
  });

  it("keeps the level of the last frame for a caller tracking quiet", () => {
    const detector = new BeepDetector(8000);
    const levels: number[] = [];
    detector.push(concat(tone(40, 1000, 8000, 0.5, 0), new Int16Array(320)), (level) => levels.push(level));
    expect(levels).toHaveLength(4);
    expect(levels[0]).toBeGreaterThan(-7);
    expect(levels[3]).toBe(-Infinity);
    expect(detector.heardMs).toBe(80);
  });

  it("hears nothing in flite's 'please leave a message after the tone', and then the beep after it", async () => {
    const speech = await synthesize("flite", "Hi, you've reached Dana. Please leave a message after the tone.", 1);
    const rate = speech.sampleRate;
    expect(run(speech.samples, rate)).toEqual([]);
    const heard = run(concat(speech.samples, noise(300, rate), tone(400, 1000, rate), noise(300, rate)), rate);
    expect(heard).toHaveLength(1);
    expect(heard[0]?.frequencyHz).toBeCloseTo(1000, -2);
  }, 30_000);
});
