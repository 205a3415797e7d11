import { describe, expect, it } from "vitest";
import { decodeMulaw, encodeMulaw } from "../../../src/audio/g711.js";
import { bytesToSamples, samplesToBytes } from "../../../src/audio/pcm.js";
import { g711, pcm16 } from "../../../src/audio/rates.js";
import { Resampler } from "../../../src/audio/resample.js";
import { CarrierAudio, carrierFormatProblem } from "../../../src/transport/carrier-audio.js";
import { exotelCodec } from "../../../src/transport/carriers/exotel.js";
import { twilioCodec } from "../../../src/transport/carriers/twilio.js";
import { telnyxCodec } from "../../../src/transport/carriers/telnyx.js";
import { vonageCodec } from "../../../src/transport/carriers/vonage.js";

/** `ms` of a tone at `hz`, PCM16 at `rate`. */
function tone(ms: number, rate: number, hz: number, amplitude = 8000): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  return Int16Array.from({ length: n }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));
}

function rmsOf(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

describe("CarrierAudio", () => {
  it("decodes 20 ms μ-law frames to 16 kHz PCM16: 160 bytes in, 640 bytes out once the filter is primed", () => {
    const audio = new CarrierAudio("mulaw", 8000);
    const mulaw = encodeMulaw(tone(1000, 8000, 440));
    let out = 0;
    for (let i = 0; i < mulaw.byteLength; i += 160) out += audio.inbound(mulaw.subarray(i, i + 160)).byteLength;
    // One second at 16 kHz, less the few ms the resampler holds back for its next frame.
    expect(out).toBeGreaterThan(32000 - 200);
    expect(out).toBeLessThanOrEqual(32000);
    expect(out % 2).toBe(0);
  });

  it("keeps a 440 Hz tone's level across μ-law → 16 kHz (state carried across frames, no clicks)", () => {
    const audio = new CarrierAudio("mulaw", 8000);
    const source = tone(500, 8000, 440);
    const mulaw = encodeMulaw(source);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < mulaw.byteLength; i += 160) chunks.push(audio.inbound(mulaw.subarray(i, i + 160)));
    const pcm = bytesToSamples(Buffer.concat(chunks));
    const steady = pcm.subarray(800, pcm.length - 800);
    expect(rmsOf(steady) / rmsOf(source)).toBeGreaterThan(0.95);
    expect(rmsOf(steady) / rmsOf(source)).toBeLessThan(1.05);
  });

  it("band-limits on the way down: a 6 kHz tone at 24 kHz does not alias into the 8 kHz phone band", () => {
    const audio = new CarrierAudio("mulaw", 8000);
    const out = audio.outbound(samplesToBytes(tone(500, 24000, 6000)));
    const decoded = decodeMulaw(Buffer.concat(out.map((f) => f.bytes)));
    // μ-law quantizes silence to ±a few codes; an aliased 2 kHz tone would be thousands.
    expect(rmsOf(decoded.subarray(100))).toBeLessThan(40);
    const speech = new CarrierAudio("mulaw", 8000).outbound(samplesToBytes(tone(500, 24000, 440)));
    expect(rmsOf(decodeMulaw(Buffer.concat(speech.map((f) => f.bytes))).subarray(100))).toBeGreaterThan(4000);
  });

  it("encodes 24 kHz session audio to 8 kHz μ-law: a third of the samples, one byte each", () => {
    const audio = new CarrierAudio("mulaw", 8000);
    const bytes = audio.outbound(samplesToBytes(tone(600, 24000, 300))).reduce((n, c) => n + c.bytes.byteLength, 0);
    expect(bytes).toBeGreaterThan(4800 - 64);
    expect(bytes).toBeLessThanOrEqual(4800);
    expect(audio.ms(4800)).toBe(600);
  });

  it("converts once, straight between the carrier's rate and the rates the session declared", () => {
    // A reply from a TTS that speaks 16 kHz only goes to 8 kHz μ-law in one step (not 16 → 24 → 8).
    const audio = new CarrierAudio("mulaw", 8000);
    audio.use({ input: pcm16(16000), output: pcm16(16000) });
    const reply = tone(400, 16000, 300);
    const sent = Buffer.concat(audio.outbound(samplesToBytes(reply)).map((f) => f.bytes));
    const once = encodeMulaw(new Resampler(16000, 8000).process(reply));
    expect(sent).toEqual(Buffer.from(once));
    // The caller's 8 kHz goes straight to the rate the session hears (here 24 kHz: a service's own rate).
    audio.use({ input: pcm16(24000), output: pcm16(24000) });
    const caller = encodeMulaw(tone(100, 8000, 300));
    expect(bytesToSamples(audio.inbound(caller))).toEqual(new Resampler(8000, 24000).process(decodeMulaw(caller)));
  });

  it("passes L16 through untouched when the session speaks the carrier's rate", () => {
    const audio = new CarrierAudio("l16", 16000);
    audio.use({ input: pcm16(16000), output: pcm16(16000) });
    const caller = samplesToBytes(tone(20, 16000, 300));
    expect(Buffer.from(audio.inbound(caller))).toEqual(Buffer.from(caller));
  });

  it("passes G.711 through untouched both ways once the session speaks it", () => {
    const audio = new CarrierAudio("mulaw", 8000);
    expect(audio.g711).toBe("pcmu");
    audio.use({ input: g711("pcmu"), output: g711("pcmu") });
    const caller = Uint8Array.from({ length: 160 }, (_, i) => (i * 7) % 256);
    expect(audio.inbound(caller)).toBe(caller);
    const agent = Uint8Array.from({ length: 333 }, (_, i) => (i * 13) % 256);
    const [out] = audio.outbound(agent);
    expect(out?.bytes).toBe(agent);
    expect(new CarrierAudio("l16", 16000).g711).toBeUndefined();
    expect(() => new CarrierAudio("l16", 16000).use({ input: g711("pcmu"), output: g711("pcmu") })).toThrow(/carrier sends l16/);
    expect(() => new CarrierAudio("mulaw", 8000).use({ input: g711("pcma"), output: g711("pcma") })).toThrow(/carrier sends pcmu/);
  });

  it("cuts Exotel audio into chunks of 3.2 KB to 100 KB, multiples of 320 bytes, padding the last with silence", () => {
    const audio = new CarrierAudio("l16", 8000, exotelCodec.framing?.("l16", 8000));
    // 24 kHz → 8 kHz L16: 250 ms = 4000 bytes, in 10 ms pieces.
    const frames: Uint8Array[] = [];
    for (let i = 0; i < 25; i++) frames.push(...audio.outbound(samplesToBytes(tone(10, 24000, 300))).map((f) => f.bytes));
    frames.push(...audio.flush().map((f) => f.bytes));
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) {
      expect(frame.byteLength % 320).toBe(0);
      expect(frame.byteLength).toBeGreaterThanOrEqual(3200);
      expect(frame.byteLength).toBeLessThanOrEqual(100 * 1024);
    }
    const last = frames.at(-1)!;
    expect(last[last.byteLength - 1]).toBe(0);
    expect(audio.flush()).toEqual([]);
  });

  it("frames Vonage audio as exactly 640-byte binary frames (20 ms of 16 kHz L16)", () => {
    const audio = new CarrierAudio("l16", 16000, vonageCodec.framing?.("l16", 16000));
    const frames = [...audio.outbound(samplesToBytes(tone(130, 24000, 300))), ...audio.flush()];
    expect(frames.map((f) => f.bytes.byteLength)).toEqual(Array(7).fill(640));
    audio.outbound(samplesToBytes(tone(10, 24000, 300)));
    audio.reset();
    expect(audio.flush()).toEqual([]);
  });

  it("ends a frame at every mark boundary — exactly every 250 ms of μ-law, however the audio arrives", () => {
    const audio = new CarrierAudio("mulaw", 8000, twilioCodec.framing?.("mulaw", 8000), 250);
    const frames = [];
    // 1 s of agent audio in uneven pieces (70 ms, 130 ms, …), as a TTS hands it over.
    for (const ms of [70, 130, 90, 310, 40, 200, 160, 100]) frames.push(...audio.outbound(samplesToBytes(tone(ms, 24000, 300))));
    let position = 0;
    const marks: number[] = [];
    for (const frame of frames) {
      position += frame.bytes.byteLength;
      if (frame.markAfter) marks.push(position / 8);
    }
    expect(marks).toEqual([250, 500, 750, 1000]);
  });

  it("never frames Telnyx audio under its documented 20 ms minimum, even from 10 ms deltas or a 260 ms one", () => {
    const audio = new CarrierAudio("mulaw", 8000, telnyxCodec.framing?.("mulaw", 8000), 250);
    const sizes: number[] = [];
    for (const ms of [10, 10, 10, 260, 5, 30]) sizes.push(...audio.outbound(samplesToBytes(tone(ms, 24000, 300))).map((f) => f.bytes.byteLength));
    sizes.push(...audio.flush().map((f) => f.bytes.byteLength));
    expect(sizes.length).toBeGreaterThan(2);
    for (const size of sizes) expect(size).toBeGreaterThanOrEqual(160);
  });

  it("keeps Exotel's chunk rules at mark boundaries: a boundary frame is the first legal size past it", () => {
    const audio = new CarrierAudio("l16", 8000, exotelCodec.framing?.("l16", 8000), 250);
    const frames = [];
    for (let i = 0; i < 100; i++) frames.push(...audio.outbound(samplesToBytes(tone(10, 24000, 300))));
    frames.push(...audio.flush());
    for (const { bytes } of frames) {
      expect(bytes.byteLength % 320).toBe(0);
      expect(bytes.byteLength).toBeGreaterThanOrEqual(3200);
    }
    // 250 ms of 8 kHz slin is 4000 bytes, not a multiple of 320: boundary frames end at 4160.
    expect(frames.filter((f) => f.markAfter).every((f) => f.bytes.byteLength === 4160)).toBe(true);
    expect(frames.some((f) => f.markAfter)).toBe(true);
  });

  it("names what it cannot carry", () => {
    expect(carrierFormatProblem("mulaw", 16000)).toMatch(/8000 Hz expected/);
    expect(carrierFormatProblem("l16", 11025)).toMatch(/11025 Hz is not supported/);
    expect(carrierFormatProblem("l16", 24000)).toBeUndefined();
  });
});
