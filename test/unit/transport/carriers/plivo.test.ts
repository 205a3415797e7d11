/** Plivo only; what every carrier codec does is test/conformance/carrier.test.ts. */
import { describe, expect, it } from "vitest";
import { plivoCodec as codec } from "../../../../src/transport/carriers/plivo.js";

const SID = "b7f6c5d4-0000-4000-8000-123456789abc";
const AUDIO = new Uint8Array(640).map((_, i) => (i * 5) & 0xff);

describe("plivo codec", () => {
  it("tolerates bad extra_headers and reads μ-law", () => {
    const start = { event: "start", start: { streamId: SID, callId: "call-1", mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 } }, extra_headers: "{not json" };
    expect(codec.decode(JSON.stringify(start), false)).toMatchObject({ kind: "start", customParameters: {}, encoding: "mulaw", sampleRate: 8000 });
  });

  it("declares the stream's negotiated format on playAudio", () => {
    // The answer XML negotiates μ-law at 8 kHz: declaring it L16 at 16 kHz would play it as noise at 4x speed.
    expect(JSON.parse(codec.mediaEncoder(SID, { encoding: "mulaw", sampleRate: 8000 }).encode(AUDIO) as string)).toMatchObject({ media: { contentType: "audio/x-mulaw", sampleRate: 8000 } });
    expect(JSON.parse(codec.mediaEncoder(SID, { encoding: "l16", sampleRate: 16000 }).encode(AUDIO) as string)).toMatchObject({ media: { contentType: "audio/x-l16", sampleRate: 16000 } });
  });
});
