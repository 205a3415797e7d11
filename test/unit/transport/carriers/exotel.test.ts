/** Exotel only; what every carrier codec does is test/conformance/carrier.test.ts. */
import { describe, expect, it } from "vitest";
import { exotelCodec as codec } from "../../../../src/transport/carriers/exotel.js";

const SID = "MZ0c2d3e4f";

describe("exotel codec", () => {
  it("reads the μ-law and 16 kHz variants; ignores a sample rate that is not a number", () => {
    const start = (encoding: string, sample_rate: string) =>
      JSON.stringify({ event: "start", stream_sid: SID, start: { media_format: { encoding, sample_rate } } });
    expect(codec.decode(start("audio/x-mulaw;rate=8000", "8000"), false)).toMatchObject({ encoding: "mulaw", sampleRate: 8000 });
    expect(codec.decode(start("audio/L16;rate=16000", "16000"), false)).toMatchObject({ encoding: "l16", sampleRate: 16000 });
    expect(codec.decode(start("audio/x-raw", "fast"), false)).toMatchObject({ kind: "ignored" });
  });
});
