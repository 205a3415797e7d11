/** Telnyx only; what every carrier codec does is test/conformance/carrier.test.ts. */
import { describe, expect, it } from "vitest";
import { telnyxCodec as codec } from "../../../../src/transport/carriers/telnyx.js";

const SID = "32DE0DEA-53CB-4B21-89A4-9E1819C043BC";

describe("telnyx codec", () => {
  it("accepts both encoding spellings, L16 and PCMA; rejects codecs it cannot carry", () => {
    const withEncoding = (encoding: string, sample_rate?: number) =>
      JSON.stringify({ event: "start", stream_id: SID, start: { media_format: sample_rate === undefined ? { encoding } : { encoding, sample_rate } } });
    expect(codec.decode(withEncoding("audio/x-mulaw", 8000), false)).toMatchObject({ encoding: "mulaw", sampleRate: 8000 });
    expect(codec.decode(withEncoding("PCMA", 8000), false)).toMatchObject({ encoding: "alaw" });
    expect(codec.decode(withEncoding("L16"), false)).toMatchObject({ encoding: "l16", sampleRate: 16000 });
    expect(codec.decode(withEncoding("OPUS", 48000), false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode(withEncoding("toString", 8000), false)).toMatchObject({ kind: "ignored" });
  });
});
