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
 * fewer (test/unit/strict-base64.test.ts holds this against the regular expression).
 */
export function strictBase64(text: string): Buffer | undefined {
  const length = text.length;
  if (length % 4 !== 0 || Buffer.byteLength(text, "utf8") !== length) return undefined;
  if (text.indexOf("-") !== -1 || text.indexOf("_") !== -1) return undefined;
  const padding = text.charCodeAt(length - 1) === EQUALS ? (text.charCodeAt(length - 2) === EQUALS ? 2 : 1) : 0;
  const bytes = Buffer.from(text, "base64");
  return bytes.byteLength === (length / 4) * 3 - padding ? bytes : undefined;
}

const EQUALS = 0x3d;
