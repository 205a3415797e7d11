/** Vonage only; what every carrier codec does is test/conformance/carrier.test.ts. */
import { describe, expect, it } from "vitest";
import { vonageCodec as codec } from "../../../../src/transport/carriers/vonage.js";

const AUDIO = new Uint8Array(640).map((_, i) => (i * 11) & 0xff);

describe("vonage codec", () => {
  it("reads the 8 kHz rate and rejects non-L16 content types", () => {
    const at = (ct: string) => codec.decode(JSON.stringify({ event: "websocket:connected", "content-type": ct }), false);
    expect(at("audio/l16;rate=8000")).toMatchObject({ kind: "start", sampleRate: 8000 });
    expect(at("audio/pcmu")).toMatchObject({ kind: "ignored" });
  });

  it("copies binary audio: the payload is not the frame's buffer", () => {
    const out = codec.decode(AUDIO, true);
    expect(out).toEqual({ kind: "media", payload: AUDIO });
    expect(out.kind === "media" && out.payload !== AUDIO).toBe(true);
  });
});
