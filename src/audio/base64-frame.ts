/**
 * JSON frames that carry base64 audio, written by concatenation around a template made once:
 * a carrier `media` frame, a Realtime `input_audio_buffer.append`, a Gemini `realtimeInput`, one
 * for every 20 ms of a call each way. Base64 as Node's encoder writes it (RFC 4648 §4: letters,
 * digits, `+`, `/`, `=`) holds no character JSON escapes, so the text is exactly what
 * `JSON.stringify` writes; on the bench machine a 20 ms μ-law frame (216 characters) costs about
 * 0.36 µs written and copied out this way, against 1.0–1.2 µs through `JSON.stringify`
 * (docs/benchmarks.md, "Telephony").
 */

/** Stands in for the audio while the template is made; its JSON spelling cannot be a base64 text. */
const MARK = "\u0001audio\u0001";
const QUOTED_MARK = JSON.stringify(MARK);

/**
 * `frame(audio)`'s JSON for base64 `audio` (Node's encoding; anything else could break the JSON).
 * The audio must be the frame's last value, so any other string in it (a stream id a carrier
 * chose) comes before the spot found; a frame built otherwise throws here, once. One object with
 * its template in fields, not a closure: a call's own (its stream id in it) is read for every
 * frame, and each object a frame reads is a cache line cold by the call's next frame on a loaded
 * process (docs/benchmarks.md, `bench:carrier-counts`).
 */
export class Base64Frame {
  readonly #head: string;
  readonly #tail: string;

  constructor(frame: (audio: string) => unknown) {
    const text = JSON.stringify(frame(MARK));
    const at = text.lastIndexOf(QUOTED_MARK);
    const closing = text.slice(at + QUOTED_MARK.length);
    if (at < 0 || !/^[}\]]*$/.test(closing)) throw new RangeError("Base64Frame: the audio must be the frame's last value");
    this.#head = text.slice(0, at + 1);
    this.#tail = `"${closing}`;
  }

  /** The frame around `audio`, already base64 text. */
  write(audio: string): string {
    return this.#head + audio + this.#tail;
  }

  /** The frame around `bytes`, base64-encoded here (a carrier's `MediaEncoder`). */
  encode(bytes: Uint8Array): string {
    return this.#head + base64Of(bytes) + this.#tail;
  }
}

/**
 * The base64 text of `bytes` (standard alphabet, padded). A `Buffer` (the service's decoded audio
 * and the frames cut from it) is encoded as it is; any other view gets a `Buffer` over its bytes
 * first, one object more a frame (on the bench machine 145 ns against 86 for a 20 ms μ-law frame).
 */
export function base64Of(bytes: Uint8Array): string {
  return (bytes instanceof Buffer ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString("base64");
}
