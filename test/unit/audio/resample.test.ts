import { beforeAll, describe, expect, it } from "vitest";
import { RESAMPLER_RATES, Resampler, loadResampler, type ResamplerEngine } from "../../../src/audio/resample.js";
import { GatewayError } from "../../../src/errors.js";
import { seededRandom } from "../../../src/manifest/tool-messages.js";

const tone = (hz: number, rate: number, length: number, amplitude = 10_000): Int16Array =>
  Int16Array.from({ length }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));

/** The whole stream through one resampler: process + flush. */
function convert(resampler: Resampler, input: Int16Array): Int16Array {
  const head = resampler.process(input);
  const tail = resampler.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/** RMS of x[from, to). */
function rmsOf(x: Int16Array, from = 0, to = x.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += x[i]! ** 2;
  return Math.sqrt(sum / (to - from));
}

/** Amplitude of the `hz` component of x[from, to) (Goertzel / single-bin DFT). */
function amplitudeAt(x: Int16Array, hz: number, rate: number, from: number, to: number): number {
  let re = 0;
  let im = 0;
  for (let i = from; i < to; i++) {
    const w = (2 * Math.PI * hz * i) / rate;
    re += x[i]! * Math.cos(w);
    im -= x[i]! * Math.sin(w);
  }
  return (2 * Math.hypot(re, im)) / (to - from);
}

const db = (ratio: number): number => 20 * Math.log10(ratio);

const pairs = RESAMPLER_RATES.flatMap((from) => RESAMPLER_RATES.filter((to) => to !== from).map((to) => [from, to] as const));

// Both engines honour the same contract: Speex (the gateway's once loaded) and the polyphase fallback.
describe.each<ResamplerEngine>(["speex", "polyphase"])("Resampler (%s)", (engine) => {
  beforeAll(async () => {
    expect(await loadResampler()).toBe("speex");
  });
  const make = (from: number, to: number): Resampler => new Resampler(from, to, { engine });

  it("is the identity when the rates are equal", () => {
    const input = tone(440, 16000, 1000);
    const r = make(16000, 16000);
    expect(r.latencySamples).toBe(0);
    expect(Array.from(r.process(input))).toEqual(Array.from(input));
    expect(r.flush().length).toBe(0);
  });

  it("rejects rates it does not support", () => {
    expect(() => make(16000, 22050)).toThrow(GatewayError);
    expect(() => make(11025, 16000)).toThrow(/supported rates/);
  });

  it("keeps a 1 kHz sine through 16k → 24k → 16k with SNR > 30 dB, with no delay", () => {
    const input = tone(1000, 16000, 16000);
    const up = convert(make(16000, 24000), input);
    // Against the ideal 1 kHz sine at 24 kHz: the interpolation itself is clean and aligned.
    const ideal = tone(1000, 24000, up.length);
    let err = 0;
    for (let i = 1000; i < up.length - 1000; i++) err += (up[i]! - ideal[i]!) ** 2;
    expect(db(rmsOf(ideal, 1000, up.length - 1000) / Math.sqrt(err / (up.length - 2000) + 1e-12))).toBeGreaterThan(30);

    const back = convert(make(24000, 16000), up);
    expect(back.length).toBe(input.length);
    let noise = 0;
    for (let i = 500; i < input.length - 500; i++) noise += (back[i]! - input[i]!) ** 2;
    const snr = db(rmsOf(input, 500, input.length - 500) / Math.sqrt(noise / (input.length - 1000) + 1e-12));
    expect(snr).toBeGreaterThan(30);
  });

  it("attenuates a 6 kHz tone by > 30 dB on the way from 16k down to 8k (no aliasing to 2 kHz)", () => {
    const out = convert(make(16000, 8000), tone(6000, 16000, 16000));
    const level = rmsOf(out, 500, out.length - 500) / (10_000 / Math.SQRT2);
    expect(db(level)).toBeLessThan(-30);
    // ...while a 1 kHz tone passes at unity gain.
    const pass = convert(make(16000, 8000), tone(1000, 16000, 16000));
    expect(Math.abs(db(amplitudeAt(pass, 1000, 8000, 500, 7500) / 10_000))).toBeLessThan(0.1);
  });

  it("does not alias above the target Nyquist from any rate down to a lower one", () => {
    // A tone well above the target's Nyquist and below the source's (48k → 44.1k leaves no such room).
    for (const [from, to] of pairs.filter(([f, t]) => t < f && 0.6 * t < 0.48 * f)) {
      const hz = 0.6 * to;
      const out = convert(make(from, to), tone(hz, from, from / 2));
      expect(db(rmsOf(out, 200, out.length - 200) / (10_000 / Math.SQRT2)), `${from} → ${to} at ${hz} Hz`).toBeLessThan(-60);
    }
  });

  it("does not image on the way up (8k → 48k: no 7 kHz mirror of a 1 kHz tone)", () => {
    const out = convert(make(8000, 48000), tone(1000, 8000, 8000));
    expect(amplitudeAt(out, 1000, 48000, 4800, 43200)).toBeCloseTo(10_000, -1);
    expect(db(amplitudeAt(out, 7000, 48000, 4800, 43200) / 10_000)).toBeLessThan(-60);
  });

  it("gives the same output for chunked input as for the whole input (every pair)", () => {
    const random = seededRandom(42);
    for (const [from, to] of pairs) {
      const length = Math.round(from * 0.3);
      const input = Int16Array.from({ length }, (_, i) => {
        const t = i / from;
        return Math.round(8000 * Math.sin(2 * Math.PI * 440 * t) + 4000 * Math.sin(2 * Math.PI * 3100 * t) + 3000 * (random() - 0.5));
      });
      const whole = convert(make(from, to), input);
      const chunked = make(from, to);
      const parts: Int16Array[] = [];
      for (let offset = 0; offset < length; ) {
        const size = Math.floor(random() * 700);
        parts.push(chunked.process(input.subarray(offset, offset + size)));
        offset += size;
      }
      parts.push(chunked.flush());
      const joined = Int16Array.from(parts.flatMap((p) => Array.from(p)));
      expect(joined.length, `${from} → ${to}`).toBe(whole.length);
      let maxDiff = 0;
      for (let i = 0; i < whole.length; i++) maxDiff = Math.max(maxDiff, Math.abs(joined[i]! - whole[i]!));
      expect(maxDiff, `${from} → ${to}`).toBeLessThanOrEqual(1);
    }
  });

  it("outputs ⌈input × to/from⌉ samples per stream, holding back only the filter's lookahead", () => {
    for (const [from, to] of pairs) {
      const input = tone(300, from, 4321);
      const r = make(from, to);
      const head = r.process(input);
      const total = head.length + r.flush().length;
      expect(total, `${from} → ${to}`).toBe(Math.ceil((input.length * to) / from));
      // What process() holds back is the lookahead: latencySamples input samples (≤ 4.5 ms; Speex q3: 3 ms).
      expect(r.latencySamples / from, `${from} → ${to}`).toBeLessThanOrEqual(0.0045);
      expect(total - head.length, `${from} → ${to}`).toBeLessThanOrEqual(Math.ceil(((r.latencySamples + 1) * to) / from));
    }
  });

  it("has unity gain at DC and clamps instead of wrapping at full scale", () => {
    const dc = convert(make(44100, 16000), new Int16Array(4410).fill(12_345));
    for (let i = 200; i < dc.length - 200; i++) expect(Math.abs(dc[i]! - 12_345)).toBeLessThanOrEqual(1);
    const square = Int16Array.from({ length: 4800 }, (_, i) => (Math.floor(i / 60) % 2 === 0 ? 32767 : -32768));
    const out = convert(make(48000, 16000), square);
    // Gibbs overshoot would exceed full scale: it must saturate, never flip sign.
    for (let i = 100; i < out.length - 100; i++) {
      const expectedSign = Math.floor((i * 3) / 60) % 2 === 0 ? 1 : -1;
      const nearEdge = (i * 3) % 60 < 6 || (i * 3) % 60 > 54;
      if (!nearEdge) expect(Math.sign(out[i]!), `sample ${i}`).toBe(expectedSign);
    }
  });

  it("starts a fresh stream after flush", () => {
    const input = tone(700, 24000, 2400);
    const r = make(24000, 8000);
    const first = convert(r, input);
    const second = convert(r, input);
    expect(Array.from(second)).toEqual(Array.from(first));
  });
});
