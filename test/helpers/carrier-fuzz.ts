import { expect } from "vitest";
import type { CarrierCodec, CarrierInbound } from "../../src/transport/carriers/carrier.js";
import { seededRandom } from "../../src/manifest/tool-messages.js";

const KINDS = new Set(["start", "media", "mark", "dtmf", "stop", "ignored"]);

export function b64(bytes: number[] | Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

function decodeOk(codec: CarrierCodec, frame: string | Uint8Array, isBinary: boolean): CarrierInbound {
  let out: CarrierInbound | undefined;
  expect(() => {
    out = codec.decode(frame, isBinary);
  }).not.toThrow();
  expect(out).toBeDefined();
  expect(KINDS.has(out!.kind)).toBe(true);
  return out!;
}

const WRONG_VALUES: unknown[] = [null, 0, -1, 1.5, true, "", "x", [], {}, [1, 2], { a: 1 }, "!!!!", "AAA"];

/** Replace every (nested) field of `value` with each wrong-typed value in turn. */
function* mutations(value: unknown): Generator<unknown> {
  if (typeof value !== "object" || value === null) return;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    for (const wrong of WRONG_VALUES) yield { ...value, [key]: wrong };
    for (const inner of mutations(child)) yield { ...value, [key]: inner };
  }
}

/**
 * Malformed inputs never throw: random bytes (as text and binary, short and up to 2000 bytes),
 * every truncation of each real text frame (each one `ignored`), every field of each real frame
 * wrong-typed, and JSON that is not an event object. Returns how many inputs were tried.
 */
export function fuzzCodec(codec: CarrierCodec, realFrames: readonly string[]): number {
  let tried = 0;
  const rand = seededRandom(42);
  for (let i = 0; i < 300; i++) {
    const bytes = new Uint8Array(Math.floor(rand() * 700));
    for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(rand() * 256);
    decodeOk(codec, bytes, false);
    decodeOk(codec, bytes, true);
    decodeOk(codec, Buffer.from(bytes).toString("latin1"), false);
    tried += 3;
  }
  const long = seededRandom(7);
  for (let i = 0; i < 200; i++) {
    decodeOk(codec, new Uint8Array(Math.floor(long() * 2000)).map(() => Math.floor(long() * 256)), true);
    tried++;
  }
  for (const frame of realFrames) {
    for (let cut = 0; cut < frame.length; cut++) {
      const out = decodeOk(codec, frame.slice(0, cut), false);
      expect(out.kind).toBe("ignored");
      decodeOk(codec, new TextEncoder().encode(frame.slice(0, cut)), false);
      tried += 2;
    }
    for (const mutated of mutations(JSON.parse(frame))) {
      decodeOk(codec, JSON.stringify(mutated), false);
      tried++;
    }
  }
  for (const odd of ["null", "42", '"str"', "[]", "[{}]", "{}", '{"event":null}', '{"event":{}}', '{"__proto__":{"event":"stop"}}']) {
    decodeOk(codec, odd, false);
    tried++;
  }
  return tried;
}
