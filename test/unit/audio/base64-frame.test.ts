import { describe, expect, it } from "vitest";
import { Base64Frame, base64Of } from "../../../src/audio/base64-frame.js";

/** Bytes that cover the whole base64 alphabet and every padding. */
function bytes(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 37 + seed * 101) & 0xff);
}

describe("Base64Frame: JSON around base64 audio, by concatenation", () => {
  it("writes exactly what JSON.stringify writes, for every padding and length", () => {
    const append = new Base64Frame((audio) => ({ type: "input_audio_buffer.append", audio }));
    for (let length = 0; length < 300; length += 1) {
      const raw = bytes(length, length);
      const audio = base64Of(raw);
      expect(append.write(audio)).toBe(JSON.stringify({ type: "input_audio_buffer.append", audio }));
      expect(append.encode(raw)).toBe(append.write(audio));
    }
  });

  it("encodes a Buffer, a Buffer's slice and any other view of the same bytes alike", () => {
    const whole = bytes(480, 7);
    const expected = Buffer.from(whole.subarray(160, 320)).toString("base64");
    const buffer = Buffer.from(whole);
    expect(base64Of(buffer.subarray(160, 320))).toBe(expected);
    expect(base64Of(whole.subarray(160, 320))).toBe(expected);
    expect(base64Of(new Uint8Array(whole.buffer, 160, 160))).toBe(expected);
    expect(base64Of(Buffer.from(whole.subarray(160, 320)))).toBe(expected);
  });

  it("keeps a stranger's strings escaped, even one that spells the template's own mark", () => {
    for (const id of ['"}],\\', "\u0001audio\u0001", '\\u0001audio\\u0001"', "\u2028\ud800"]) {
      const media = new Base64Frame((payload) => ({ event: "media", streamSid: id, media: { payload } }));
      const audio = base64Of(bytes(160, 3));
      expect(media.write(audio)).toBe(JSON.stringify({ event: "media", streamSid: id, media: { payload: audio } }));
      expect(JSON.parse(media.write(audio))).toEqual({ event: "media", streamSid: id, media: { payload: audio } });
    }
  });

  it("refuses a frame whose audio is not its last value", () => {
    expect(() => new Base64Frame((audio) => ({ audio, type: "input_audio_buffer.append" }))).toThrow(/last value/);
    expect(() => new Base64Frame(() => ({ type: "none" }))).toThrow(/last value/);
  });
});
