/**
 * Audio on its way through the gateway: bytes, or a peer's base64 text not yet decoded. G.711 in
 * passthrough crosses the gateway untouched both ways, and both peers take it as base64 inside
 * JSON: a carrier's caller audio is sent on to a speech-to-speech service as base64 again, and the
 * service's audio deltas go on to the carrier the same way. So its bytes are only counted, never
 * read: decoding each 20 ms frame would make a Buffer nobody reads (about 3,000 instructions and 4
 * cache misses a frame on a loaded process: docs/benchmarks.md, `bench:carrier-counts`), and
 * encoding it again costs as much. Whatever does read the bytes (a recording, the
 * answering-machine screen, a conversion, a frame cut in two, a peer that takes bytes) asks
 * `bytesOf`, once.
 */
import { canonicalBase64, strictBase64, strictBase64Length } from "./strict-base64.js";

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

/**
 * A peer's base64 audio, checked and not decoded where it can go on as its text: a `Base64Audio`
 * when it is strict and canonical, its bytes when strict but not canonical (so what goes on as
 * text is always what re-encoding would write), undefined when it is not strict base64 at all.
 */
export function checkedBase64Audio(text: string): AudioPayload | undefined {
  const length = strictBase64Length(text);
  if (length === undefined) return undefined;
  return canonicalBase64(text) ? new Base64Audio(text, length) : strictBase64(text);
}

/** The audio's bytes (decoded now, once, where it is still text). */
export function bytesOf(audio: AudioPayload): Uint8Array {
  return audio instanceof Base64Audio ? audio.bytes : audio;
}

/** The base64 text of `bytes` (standard alphabet, padded). */
export function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** The audio as standard padded base64: the peer's own text where it is still text. */
export function base64TextOf(audio: AudioPayload): string {
  return audio instanceof Base64Audio ? audio.base64 : base64Of(audio);
}
