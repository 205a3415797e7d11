import { describe, expect, it } from "vitest";
import { concatSamples, samplesToBytes } from "../../../src/audio/pcm.js";
import { GatewayError } from "../../../src/errors.js";
import { DEFAULTS } from "../../../src/manifest/defaults.js";
import { SpeechDetector, type SpeechEvent } from "../../../src/pipeline/speech-detector.js";
import { type Vad, type VadFrame, type VadFrameMs, type VadMode, createVad } from "../../../src/pipeline/vad.js";
import { seededRandom } from "../../../src/manifest/tool-messages.js";

// ---------------------------------------------------------------------------------------------
// Synthetic audio
// ---------------------------------------------------------------------------------------------

/** Uniform noise of peak `amplitude` LSB (a quiet line at 20: ≈ −67 dBFS). */
function noise(rate: number, ms: number, amplitude: number, seed = 1): Int16Array {
  const random = seededRandom(seed);
  return Int16Array.from({ length: Math.round((rate * ms) / 1000) }, () => Math.round((random() * 2 - 1) * amplitude));
}

/**
 * A crude voiced "utterance": a sawtooth glottal source at ~150 Hz (with 3 Hz vibrato), shaped by
 * a slowly moving 700 Hz "formant" ripple, amplitude-modulated into 4 Hz syllables (250 ms each,
 * silent at the boundaries).
 */
function voiced(rate: number, ms: number): Int16Array {
  const out = new Int16Array(Math.round((rate * ms) / 1000));
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const t = i / rate;
    phase += (150 + 15 * Math.sin(2 * Math.PI * 3 * t)) / rate;
    phase -= Math.floor(phase);
    const source = 2 * phase - 1;
    const formant = 1 + 0.6 * Math.sin(2 * Math.PI * 700 * t) * Math.sin(2 * Math.PI * 1.7 * t);
    const syllable = Math.max(0, Math.sin(Math.PI * ((t * 4) % 1))) ** 0.7;
    out[i] = Math.round(9000 * source * formant * syllable);
  }
  return out;
}

/** 500 ms quiet line, 1500 ms of voiced syllables over it, 1500 ms quiet line. */
function utterance(rate: number): Int16Array {
  const speech = voiced(rate, 1500);
  const bed = noise(rate, 1500, 20, 2);
  for (let i = 0; i < speech.length; i++) speech[i] = speech[i]! + bed[i]!;
  return concatSamples([noise(rate, 500, 20, 1), speech, noise(rate, 1500, 20, 3)]);
}

/** Pushes `pcm` in chunks whose sizes (bytes, odd ones included) come from a seeded PRNG. */
function pushChunked(vad: Vad, pcm: Uint8Array, seed: number): VadFrame[] {
  const random = seededRandom(seed);
  const frames: VadFrame[] = [];
  for (let offset = 0; offset < pcm.length; ) {
    const size = 1 + Math.floor(random() * 1500);
    frames.push(...vad.push(pcm.subarray(offset, offset + size)));
    offset += size;
  }
  return frames;
}

const pattern = (frames: readonly VadFrame[]): string => frames.map((f) => (f.speech ? "1" : "0")).join("");

// ---------------------------------------------------------------------------------------------
// The fvad wrapper
// ---------------------------------------------------------------------------------------------

describe("createVad (WebRTC VAD)", () => {
  const rates = [8000, 16000, 24000, 44100, 48000] as const;
  const modes: VadMode[] = [0, 1, 2, 3];

  it("runs at the session rate when fvad takes it, else at 16 kHz", async () => {
    for (const [rate, vadRate] of [
      [8000, 8000],
      [16000, 16000],
      [24000, 16000],
      [32000, 32000],
      [44100, 16000],
      [48000, 48000],
    ] as const) {
      const vad = await createVad({ sampleRate: rate });
      expect(vad.vadRate, `${rate} Hz`).toBe(vadRate);
      expect(vad.mode).toBe(2);
      expect(vad.frameMs).toBe(20);
      vad.close();
    }
  });

  it("classifies silence as non-speech: zeros and a quiet noisy line, every rate and mode", async () => {
    for (const rate of rates) {
      for (const mode of modes) {
        const vad = await createVad({ sampleRate: rate, mode });
        const frames = vad.push(samplesToBytes(concatSamples([new Int16Array(rate), noise(rate, 2000, 20, rate + mode)])));
        expect(frames.length).toBeGreaterThanOrEqual(149);
        expect(frames.filter((f) => f.speech), `${rate} Hz, mode ${mode}`).toEqual([]);
        vad.close();
      }
    }
  });

  it("masks fvad's warm-up: without it, the first frames of a quiet line read as speech", async () => {
    for (const frameMs of [10, 20, 30] as VadFrameMs[]) {
      const line = samplesToBytes(concatSamples([new Int16Array(9600), noise(16000, 1000, 5, 9)]));
      const raw = await createVad({ sampleRate: 16000, mode: 0, frameMs, warmupMs: 0 });
      const rawFrames = raw.push(line);
      raw.close();
      // What fvad itself says: speech for its first non-zero frames (zeros do not count), then never again.
      expect(rawFrames.filter((f) => f.atMs <= 600 && f.speech), `${frameMs} ms`).toEqual([]);
      expect(rawFrames.find((f) => f.atMs === 600 + frameMs)?.speech, `${frameMs} ms`).toBe(true);
      expect(rawFrames.filter((f) => f.speech && f.atMs > 800), `${frameMs} ms`).toEqual([]);
      const vad = await createVad({ sampleRate: 16000, mode: 0, frameMs });
      expect(vad.push(line).filter((f) => f.speech), `${frameMs} ms`).toEqual([]);
      vad.close();
    }
  });

  it("still hears speech that begins at the very first sample, once the warm-up is over", async () => {
    const vad = await createVad({ sampleRate: 16000 });
    const frames = vad.push(samplesToBytes(voiced(16000, 1000)));
    vad.close();
    expect(frames.filter((f) => f.atMs <= 200 && f.speech)).toEqual([]);
    expect(frames.filter((f) => f.atMs > 200 && f.speech).length).toBeGreaterThan(35);
  });

  it("reports frame ends in session time (atMs = (k + 1) · frameMs), from odd-sized chunks", async () => {
    for (const rate of [16000, 44100] as const) {
      for (const frameMs of [10, 20, 30] as VadFrameMs[]) {
        const vad = await createVad({ sampleRate: rate, frameMs });
        const frames = pushChunked(vad, samplesToBytes(noise(rate, 1000, 20)), frameMs);
        // At 44.1 kHz the resampler holds back ≤ 2.25 ms, which may cost the last frame.
        expect(frames.length, `${rate} Hz, ${frameMs} ms`).toBeGreaterThanOrEqual(Math.floor(997 / frameMs));
        expect(frames.length).toBeLessThanOrEqual(Math.floor(1000 / frameMs));
        frames.forEach((f, k) => expect(f.atMs).toBe((k + 1) * frameMs));
        vad.close();
      }
    }
  });

  it("finds the synthetic utterance, and SpeechDetector turns it into one start and one end (every rate)", async () => {
    for (const rate of rates) {
      const vad = await createVad({ sampleRate: rate });
      const frames = vad.push(samplesToBytes(utterance(rate)));
      vad.close();
      const speechFrames = frames.filter((f) => f.speech);
      // Most of the 1.5 s utterance (500 → 2000 ms) is speech; nothing well outside it is.
      expect(speechFrames.length * 20, `${rate} Hz`).toBeGreaterThan(1200);
      expect(speechFrames.every((f) => f.atMs > 500 && f.atMs <= 2200), `${rate} Hz: ${pattern(frames)}`).toBe(true);

      const detector = new SpeechDetector({ startMs: 60, minSilenceMs: 500 });
      const events = detector.pushAll(frames);
      expect(events.map((e) => e.type), `${rate} Hz`).toEqual(["start", "end"]);
      const [start, end] = events as [Extract<SpeechEvent, { type: "start" }>, Extract<SpeechEvent, { type: "end" }>];
      expect(start.atMs).toBeGreaterThanOrEqual(500);
      expect(start.atMs).toBeLessThanOrEqual(620);
      expect(start.detectedAtMs - start.atMs).toBeGreaterThanOrEqual(60);
      expect(end.atMs).toBeGreaterThanOrEqual(1950);
      expect(end.atMs).toBeLessThanOrEqual(2200);
      expect(end.detectedAtMs - end.atMs).toBe(500);
      expect(end.speechMs).toBe(end.atMs - start.atMs);
      expect(detector.speaking).toBe(false);
      expect(detector.silenceMs).toBe(frames.at(-1)!.atMs - end.atMs);
    }
  });

  it("gives the same verdicts whatever the chunking (odd bytes and resampling included)", async () => {
    for (const rate of [16000, 24000, 44100] as const) {
      const pcm = samplesToBytes(utterance(rate));
      const whole = await createVad({ sampleRate: rate });
      const expected = whole.push(pcm);
      whole.close();
      const chunked = await createVad({ sampleRate: rate });
      const frames = pushChunked(chunked, pcm, 7);
      chunked.close();
      expect(frames.length, `${rate} Hz`).toBe(expected.length);
      expect(pattern(frames), `${rate} Hz`).toBe(pattern(expected));
    }
  });

  it("keeps one fvad instance per session: interleaved sessions do not disturb each other", async () => {
    const speech = samplesToBytes(utterance(16000));
    const quiet = samplesToBytes(noise(16000, 3500, 20, 5));
    const alone = async (pcm: Uint8Array): Promise<string> => {
      const vad = await createVad({ sampleRate: 16000 });
      const p = pattern(vad.push(pcm));
      vad.close();
      return p;
    };
    const [a, b] = await Promise.all([createVad({ sampleRate: 16000 }), createVad({ sampleRate: 16000 })]);
    const framesA: VadFrame[] = [];
    const framesB: VadFrame[] = [];
    for (let offset = 0; offset < speech.length; offset += 640) {
      framesA.push(...a.push(speech.subarray(offset, offset + 640)));
      framesB.push(...b.push(quiet.subarray(offset, offset + 640)));
    }
    a.close();
    b.close();
    expect(pattern(framesA)).toBe(await alone(speech));
    expect(pattern(framesB)).toBe(await alone(quiet));
    expect(framesB.some((f) => f.speech)).toBe(false);
  });

  it("frees its instance on close: idempotent, push afterwards returns nothing, many sessions come and go", async () => {
    const vad = await createVad({ sampleRate: 8000 });
    vad.close();
    vad.close();
    expect(vad.push(samplesToBytes(voiced(8000, 200)))).toEqual([]);
    for (let i = 0; i < 300; i++) {
      const v = await createVad({ sampleRate: 48000, frameMs: 30 });
      v.push(samplesToBytes(voiced(48000, 60)));
      v.close();
    }
  });

  it("rejects options fvad cannot honour", async () => {
    await expect(createVad({ sampleRate: 22050 })).rejects.toThrow(GatewayError);
    await expect(createVad({ sampleRate: 16000, mode: 4 as VadMode })).rejects.toThrow(/mode/);
    await expect(createVad({ sampleRate: 16000, frameMs: 25 as VadFrameMs })).rejects.toThrow(/10, 20 or 30/);
    await expect(createVad({ sampleRate: 16000, warmupMs: -1 })).rejects.toThrow(/warm-up/);
  });
});

// ---------------------------------------------------------------------------------------------
// SpeechDetector on hand-made frame sequences
// ---------------------------------------------------------------------------------------------

/** Frames from a pattern: "1" speech, "0" not; `frameMs` each, starting after `fromMs`. */
function frames(bits: string, frameMs = 20, fromMs = 0): VadFrame[] {
  return Array.from(bits.replaceAll(" ", ""), (bit, k) => ({ speech: bit === "1", atMs: fromMs + (k + 1) * frameMs }));
}

describe("SpeechDetector", () => {
  it("defaults: 60 ms to start within a 120 ms window; the manifest's minSilenceMs to end", () => {
    const d = new SpeechDetector();
    expect(d.startMs).toBe(60);
    expect(d.startWindowMs).toBe(120);
    expect(d.minSilenceMs).toBe(DEFAULTS.turnTaking.minSilenceMs);
  });

  it("starts once startMs of speech frames fall in the window, with the onset as atMs", () => {
    const d = new SpeechDetector({ startMs: 60, minSilenceMs: 100 });
    expect(d.pushAll(frames("000 11"))).toEqual([]);
    expect(d.speaking).toBe(false);
    expect(d.pushAll(frames("1", 20, 100))).toEqual([{ type: "start", atMs: 60, detectedAtMs: 120 }]);
    expect(d.speaking).toBe(true);
  });

  it("counts non-contiguous speech within the window, but not speech spread wider than it", () => {
    expect(new SpeechDetector({ startMs: 60, minSilenceMs: 100 }).pushAll(frames("0 10101"))).toEqual([
      { type: "start", atMs: 20, detectedAtMs: 120 },
    ]);
    // One speech frame in three: at most 40 ms of speech in any 120 ms window.
    expect(new SpeechDetector({ startMs: 60, minSilenceMs: 100 }).pushAll(frames("100".repeat(20)))).toEqual([]);
    // Isolated blips never start speech.
    expect(new SpeechDetector({ startMs: 60, minSilenceMs: 100 }).pushAll(frames("0100000".repeat(10)))).toEqual([]);
    // A wider window accepts sparser speech.
    expect(new SpeechDetector({ startMs: 60, startWindowMs: 200, minSilenceMs: 100 }).pushAll(frames("100".repeat(4)))).toEqual([
      { type: "start", atMs: 0, detectedAtMs: 140 },
    ]);
  });

  it("ends after minSilenceMs of uninterrupted non-speech; a speech frame restarts the count", () => {
    const d = new SpeechDetector({ startMs: 60, minSilenceMs: 100 });
    // start at 0 (detected 60); 80 ms pause; speech 160..180; then 100 ms of silence ends it.
    const events = d.pushAll(frames("111 0000 1 00000 000"));
    expect(events).toEqual([
      { type: "start", atMs: 0, detectedAtMs: 60 },
      { type: "end", atMs: 160, speechMs: 160, detectedAtMs: 260 },
    ]);
    expect(d.speaking).toBe(false);
    expect(d.silenceMs).toBe(160);
  });

  it("tracks silenceMs: reset by every speech frame, counted from the stream start before any", () => {
    const d = new SpeechDetector({ startMs: 60, minSilenceMs: 1000 });
    d.pushAll(frames("0000"));
    expect(d.silenceMs).toBe(80);
    d.pushAll(frames("1", 20, 80));
    expect(d.silenceMs).toBe(0);
    d.pushAll(frames("111 00", 20, 100));
    expect(d.speaking).toBe(true);
    expect(d.silenceMs).toBe(40);
  });

  it("detects a second utterance afresh after the first ends", () => {
    const d = new SpeechDetector({ startMs: 40, minSilenceMs: 60 });
    const events = d.pushAll(frames("11 1 000 0 11 000"));
    expect(events).toEqual([
      { type: "start", atMs: 0, detectedAtMs: 40 },
      { type: "end", atMs: 60, speechMs: 60, detectedAtMs: 120 },
      { type: "start", atMs: 140, detectedAtMs: 180 },
      { type: "end", atMs: 180, speechMs: 40, detectedAtMs: 240 },
    ]);
  });

  it("takes frame durations from atMs, so 10 ms and 30 ms frames need as much speech as 20 ms ones", () => {
    const ten = new SpeechDetector({ startMs: 60, minSilenceMs: 100 });
    expect(ten.pushAll(frames("11111", 10))).toEqual([]);
    expect(ten.push({ speech: true, atMs: 60 })).toEqual({ type: "start", atMs: 0, detectedAtMs: 60 });
    const thirty = new SpeechDetector({ startMs: 60, minSilenceMs: 90 });
    expect(thirty.pushAll(frames("0 11 000", 30))).toEqual([
      { type: "start", atMs: 30, detectedAtMs: 90 },
      { type: "end", atMs: 90, speechMs: 60, detectedAtMs: 180 },
    ]);
  });

  it("with startMs 0, starts on the first speech frame", () => {
    expect(new SpeechDetector({ startMs: 0, minSilenceMs: 20 }).pushAll(frames("001"))).toEqual([{ type: "start", atMs: 40, detectedAtMs: 60 }]);
  });

  it("rejects out-of-order frames and inconsistent options", () => {
    const d = new SpeechDetector({ minSilenceMs: 100 });
    d.push({ speech: false, atMs: 20 });
    expect(() => d.push({ speech: false, atMs: 20 })).toThrow(RangeError);
    expect(() => d.push({ speech: true, atMs: 10 })).toThrow(RangeError);
    expect(() => new SpeechDetector({ startMs: 100, startWindowMs: 60 })).toThrow(/startWindowMs/);
    expect(() => new SpeechDetector({ minSilenceMs: 0 })).toThrow(/minSilenceMs/);
    expect(() => new SpeechDetector({ startMs: -1 })).toThrow(/startMs/);
  });
});
