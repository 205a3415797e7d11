/**
 * A listener's audio on its way in: bytes, or a peer's base64 text not yet decoded. A carrier's
 * G.711 in passthrough crosses the gateway untouched and is sent on to a speech-to-speech service
 * as base64 again, so its bytes are only counted, never read: decoding each 20 ms frame would make
 * a Buffer nobody reads (about 3,000 instructions and 4 cache misses a frame on a loaded process:
 * docs/benchmarks.md, `bench:carrier-counts`). Whatever does read the bytes (a recording, the
 * answering-machine screen, a conversion, a service that takes bytes) asks `bytesOf`, once.
 */
import { base64Of } from "./base64-frame.js";

/** Audio as the peer's base64 text; `bytes` decodes it the first time it is read. */
export class Base64Audio {
  /** Strict and canonical base64 (audio/strict-base64.ts): exactly what `base64Of(bytes)` writes. */
  readonly base64: string;
  /** The bytes `base64` decodes to, counted without decoding. */
  readonly byteLength: number;
  #bytes: Uint8Array | undefined;

  /** `base64` must be strict and canonical, of `byteLength` bytes: the caller has checked it (a carrier codec, carriers/carrier.ts). */
  constructor(base64: string, byteLength: number) {
    this.base64 = base64;
    this.byteLength = byteLength;
  }

  get bytes(): Uint8Array {
    return (this.#bytes ??= Buffer.from(this.base64, "base64"));
  }
}

export type AudioPayload = Uint8Array | Base64Audio;

/** The audio's bytes (decoded now, once, where it is still text). */
export function bytesOf(audio: AudioPayload): Uint8Array {
  return audio instanceof Base64Audio ? audio.bytes : audio;
}

/** The audio as standard padded base64: the peer's own text where it is still text. */
export function base64TextOf(audio: AudioPayload): string {
  return audio instanceof Base64Audio ? audio.base64 : base64Of(audio);
}
