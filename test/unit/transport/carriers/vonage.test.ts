import { describe, expect, it } from "vitest";
import { vonageCodec as codec } from "../../../../src/transport/carriers/vonage.js";
import { fuzzCodec, prng } from "./fuzz-helpers.js";

const AUDIO = new Uint8Array(640).map((_, i) => (i * 11) & 0xff);

const frames = {
  connected: JSON.stringify({ event: "websocket:connected", "content-type": "audio/l16;rate=16000", tenant: "acme", "caller-id": "447700900123" }),
  dtmf: JSON.stringify({ event: "websocket:dtmf", digit: "5", duration: 260 }),
  cleared: '{"event":"websocket:cleared"}',
  notify: '{"event":"websocket:notify","payload":{"x":1}}',
};

describe("vonage codec", () => {
  it("decodes the real sequence: connected text, binary L16 audio, dtmf text", () => {
    expect(codec.decode(frames.connected, false)).toEqual({
      kind: "start",
      streamId: "",
      customParameters: { tenant: "acme", "caller-id": "447700900123" },
      encoding: "l16",
      sampleRate: 16000,
    });
    expect(codec.decode(AUDIO, true)).toEqual({ kind: "media", payload: AUDIO });
    expect(codec.decode(frames.dtmf, false)).toEqual({ kind: "dtmf", digit: "5" });
    expect(codec.decode(frames.cleared, false)).toMatchObject({ kind: "ignored" });
    expect(codec.decode(frames.notify, false)).toMatchObject({ kind: "ignored" });
  });

  it("reads the 8 kHz rate and rejects non-L16 content types", () => {
    const at = (ct: string) => codec.decode(JSON.stringify({ event: "websocket:connected", "content-type": ct }), false);
    expect(at("audio/l16;rate=8000")).toMatchObject({ kind: "start", sampleRate: 8000 });
    expect(at("audio/pcmu")).toMatchObject({ kind: "ignored" });
  });

  it("copies binary audio and rejects empty, odd-length and oversized frames", () => {
    const out = codec.decode(AUDIO, true);
    expect(out.kind === "media" && out.payload !== AUDIO).toBe(true);
    expect(codec.decode(new Uint8Array(0), true)).toMatchObject({ kind: "ignored" });
    expect(codec.decode(new Uint8Array(641), true)).toMatchObject({ kind: "ignored" });
    expect(codec.decode(new Uint8Array(2 * 1024 * 1024), true)).toMatchObject({ kind: "ignored" });
    expect(codec.decode("not bytes", true)).toMatchObject({ kind: "ignored" });
  });

  it("never throws on malformed input", () => {
    const rand = prng(7);
    for (let i = 0; i < 200; i++) {
      const bytes = new Uint8Array(Math.floor(rand() * 2000)).map(() => Math.floor(rand() * 256));
      expect(() => codec.decode(bytes, true)).not.toThrow();
    }
    // Vonage media is binary; a 2 MiB text frame with an unknown event must still be ignored.
    const tried = fuzzCodec(codec, Object.values(frames), (payload) => JSON.stringify({ event: "websocket:media", payload }));
    expect(tried).toBeGreaterThan(500);
  });

  it("encodes binary media, has no mark, clears with an action", () => {
    const media = codec.encodeMedia("", AUDIO, { encoding: "l16", sampleRate: 16000 });
    expect(media).toBeInstanceOf(Uint8Array);
    expect(media).toEqual(AUDIO);
    expect(codec.encodeMark("", "turn-7-end")).toBeUndefined();
    expect(JSON.parse(codec.encodeClear("")!)).toEqual({ action: "clear" });
  });
});
