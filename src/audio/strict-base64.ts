/**
 * Strict base64 (RFC 4648 §4: the standard alphabet, padded), as peers send audio inside JSON
 * (carrier media frames, Realtime `input_audio_buffer.append`), decoded in one pass of Node's
 * decoder with no regular expression first: on a 20 ms μ-law frame (216 characters) the expression
 * cost 1.5× the decode it guarded, and this check and decode together cost 0.4× what the two did.
 *
 * Node's decoder is lenient: it skips characters outside the alphabet, stops at `=`, takes the
 * URL-safe `-` and `_`, and reads a character above U+00FF by its low byte. So a text is strict
 * exactly when it is ASCII, holds neither `-` nor `_`, is a whole number of 4-character groups, and
 * decodes to the bytes its padding promises: a skipped or early-stopping character always yields
 * fewer (test/unit/audio/strict-base64.test.ts holds this against the regular expression).
 */
export function strictBase64(text: string): Buffer | undefined {
  const length = strictShape(text);
  if (length === undefined) return undefined;
  const bytes = Buffer.from(text, "base64");
  return bytes.byteLength === length ? bytes : undefined;
}

/** Texts at most this long (characters) are checked in `SCRATCH`; a longer one is decoded to check it. */
const SCRATCH_CHARS = 16 * 1024;
/**
 * Where `strictBase64Length` lets Node's decoder write: one per process, reused by every check, so
 * checking a frame allocates nothing (a Buffer per 20 ms frame is new memory, so cache misses, on
 * every call: docs/benchmarks.md, `bench:carrier-counts`). Nothing reads what is written here.
 */
const SCRATCH = Buffer.allocUnsafeSlow((SCRATCH_CHARS / 4) * 3);

/**
 * The number of bytes a text decodes to if it is strict base64 (exactly when `strictBase64` would
 * decode it), without keeping them: Node's decoder writes into a scratch buffer, so a peer's audio
 * that is forwarded as its own text (a carrier's G.711 in passthrough) is checked but never held
 * as bytes. About 0.7× the time of `strictBase64` on a 20 ms μ-law frame, and no allocation.
 */
export function strictBase64Length(text: string): number | undefined {
  if (text.length > SCRATCH_CHARS) return strictBase64(text)?.byteLength;
  const length = strictShape(text);
  // A longer write would show as more bytes than promised: the limit is the buffer, not `length`.
  return length !== undefined && SCRATCH.write(text, 0, "base64") === length ? length : undefined;
}

/** The byte length a text's padding promises, if it could be strict at all (ASCII, no URL-safe letters, whole groups). */
function strictShape(text: string): number | undefined {
  const length = text.length;
  if (length % 4 !== 0 || Buffer.byteLength(text, "utf8") !== length) return undefined;
  if (text.indexOf("-") !== -1 || text.indexOf("_") !== -1) return undefined;
  const padding = text.charCodeAt(length - 1) === EQUALS ? (text.charCodeAt(length - 2) === EQUALS ? 2 : 1) : 0;
  return (length / 4) * 3 - padding;
}

/**
 * Whether a strict base64 text (as `strictBase64` accepted it) is canonical: its padding bits are
 * zero (RFC 4648 §3.5), so it is exactly the text Node's encoder writes for the bytes it decodes
 * to. A non-canonical one decodes to the same bytes but is a different text: a peer's audio is
 * forwarded as sent only when canonical, so the service gets what re-encoding would have made.
 */
export function canonicalBase64(text: string): boolean {
  const length = text.length;
  if (length === 0 || text.charCodeAt(length - 1) !== EQUALS) return true;
  const twoPads = text.charCodeAt(length - 2) === EQUALS;
  const last = sextet(text.charCodeAt(length - (twoPads ? 3 : 2)));
  // One `=`: the last character carries 2 padding bits; two: 4.
  return (last & (twoPads ? 0x0f : 0x03)) === 0;
}

/** The 6-bit value of a standard base64 character (RFC 4648 Table 1); -1 for any other. */
function sextet(code: number): number {
  if (code >= 0x41 && code <= 0x5a) return code - 0x41;
  if (code >= 0x61 && code <= 0x7a) return code - 0x61 + 26;
  if (code >= 0x30 && code <= 0x39) return code - 0x30 + 52;
  if (code === 0x2b) return 62;
  if (code === 0x2f) return 63;
  return -1;
}

const EQUALS = 0x3d;
