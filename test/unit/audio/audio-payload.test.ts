import { describe, expect, it } from "vitest";
import { Base64Audio, base64TextOf, bytesOf } from "../../../src/audio/audio-payload.js";

const BYTES = Uint8Array.from({ length: 160 }, (_, i) => (i * 7) % 256);
const TEXT = Buffer.from(BYTES).toString("base64");

describe("AudioPayload", () => {
  it("a Base64Audio is counted without decoding and decoded once, when its bytes are first read", () => {
    const audio = new Base64Audio(TEXT, BYTES.byteLength);
    expect(audio.byteLength).toBe(160);
    const bytes = bytesOf(audio);
    expect(Buffer.from(bytes)).toEqual(Buffer.from(BYTES));
    // The same bytes on every read: decoded once, kept.
    expect(bytesOf(audio)).toBe(bytes);
    expect(audio.bytes).toBe(bytes);
  });

  it("says its audio as base64: the peer's own text where it is still text, the bytes encoded otherwise", () => {
    const audio = new Base64Audio(TEXT, BYTES.byteLength);
    expect(base64TextOf(audio)).toBe(TEXT);
    expect(base64TextOf(BYTES)).toBe(TEXT);
    expect(bytesOf(BYTES)).toBe(BYTES);
  });
});
