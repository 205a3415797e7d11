import { describe, expect, it } from "vitest";
import { base64FrameWriter, base64Of } from "../../../src/audio/base64-frame.js";

/** Bytes that cover the whole base64 alphabet and every padding. */
function bytes(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 37 + seed * 101) & 0xff);
}

describe("base64FrameWriter: JSON around base64 audio, by concatenation", () => {
  it("writes exactly what JSON.stringify writes, for every padding and length", () => {
    const append = base64FrameWriter((audio) => ({ type: "input_audio_buffer.append", audio }));
    for (let length = 0; length < 300; length += 1) {
      const audio = base64Of(bytes(length, length));
      expect(append(audio)).toBe(JSON.stringify({ type: "input_audio_buffer.append", audio }));
    }
  });

  it("keeps a stranger's strings escaped, even one that spells the template's own mark", () => {
    for (const id of ['"}],\\', "\u0001audio\u0001", '\\u0001audio\\u0001"', "\u2028\ud800"]) {
      const write = base64FrameWriter((payload) => ({ event: "media", streamSid: id, media: { payload } }));
      const audio = base64Of(bytes(160, 3));
      expect(write(audio)).toBe(JSON.stringify({ event: "media", streamSid: id, media: { payload: audio } }));
      expect(JSON.parse(write(audio))).toEqual({ event: "media", streamSid: id, media: { payload: audio } });
    }
  });

  it("refuses a frame whose audio is not its last value", () => {
    expect(() => base64FrameWriter((audio) => ({ audio, type: "input_audio_buffer.append" }))).toThrow(/last value/);
    expect(() => base64FrameWriter(() => ({ type: "none" }))).toThrow(/last value/);
  });
});
