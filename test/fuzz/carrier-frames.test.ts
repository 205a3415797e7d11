import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CarrierInbound } from "../../src/transport/carriers/carrier.js";
import { CARRIER_CODECS } from "../../src/transport/carriers/index.js";
import { report, runs, SEED } from "./figures.js";

const KINDS = new Set<CarrierInbound["kind"]>(["start", "media", "mark", "dtmf", "stop", "ignored"]);

/** Shapes close to the carriers' real frames (docs/vendors.md (Carriers)), then mangled. */
const event = fc.constantFrom("connected", "start", "media", "mark", "dtmf", "stop", "playedStream", "clearedAudio", "websocket:connected", "websocket:dtmf", "error", "gossip");
const junk = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }));
const base64ish = fc.oneof(fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b).toString("base64")), fc.string({ maxLength: 300 }), fc.constant(""), fc.constant("A".repeat(3000)));
const frame = fc.record(
  {
    event,
    streamSid: fc.oneof(fc.string({ maxLength: 12 }), junk),
    stream_id: fc.oneof(fc.string({ maxLength: 12 }), junk),
    sequenceNumber: fc.oneof(fc.nat().map(String), junk),
    start: fc.oneof(
      fc.record({ streamSid: fc.string({ maxLength: 8 }), callSid: fc.string({ maxLength: 8 }), mediaFormat: fc.record({ encoding: fc.constantFrom("audio/x-mulaw", "PCMU", "audio/x-l16", "weird"), sampleRate: fc.oneof(fc.constantFrom(8000, 16000, 0, -1), junk) }, { requiredKeys: [] }), customParameters: junk }, { requiredKeys: [] }),
      junk,
    ),
    media: fc.oneof(fc.record({ track: fc.constantFrom("inbound", "outbound", "both"), chunk: fc.oneof(fc.nat().map(String), junk), timestamp: fc.oneof(fc.nat().map(String), junk), payload: base64ish }, { requiredKeys: [] }), junk),
    mark: fc.oneof(fc.record({ name: fc.oneof(fc.string({ maxLength: 10 }), junk) }, { requiredKeys: [] }), junk),
    dtmf: fc.oneof(fc.record({ digit: fc.oneof(fc.constantFrom("0", "5", "#", "*", "A", "x", "55"), junk), track: fc.constantFrom("inbound_track", "outbound_track") }, { requiredKeys: [] }), junk),
    digit: fc.oneof(fc.constantFrom("1", "#"), junk),
    "content-type": fc.oneof(fc.constantFrom("audio/l16;rate=16000", "audio/l16;rate=8000", "audio/pcm", ""), junk),
  },
  { requiredKeys: ["event"] },
);

/** A JSON frame, cut short anywhere, or arbitrary text or bytes. */
const input = fc.oneof(
  frame.map((f) => ({ data: JSON.stringify(f), binary: false })),
  fc.tuple(frame, fc.nat()).map(([f, cut]) => {
    const text = JSON.stringify(f);
    return { data: text.slice(0, cut % (text.length + 1)), binary: false };
  }),
  fc.string({ maxLength: 200 }).map((data) => ({ data, binary: false })),
  fc.uint8Array({ maxLength: 1300 }).map((data) => ({ data, binary: true })),
  fc.uint8Array({ maxLength: 200 }).map((data) => ({ data, binary: false })),
);

describe("carrier frames, fuzzed", () => {
  for (const [name, codec] of Object.entries(CARRIER_CODECS)) {
    it(`${name}: decode never throws and always says what the frame was`, () => {
      const n = runs(2000);
      fc.assert(
        fc.property(input, ({ data, binary }) => {
          const out = codec.decode(typeof data === "string" ? data : new Uint8Array(data), binary);
          expect(KINDS.has(out.kind)).toBe(true);
          if (out.kind === "media") expect(out.payload.byteLength).toBeGreaterThan(0);
        }),
        { seed: SEED, numRuns: n },
      );
      report({ property: `carrier frames: ${name} decode`, runs: n, inputs: n, unit: "frames" });
    });
  }
});
