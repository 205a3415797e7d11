import { describe, expect, it } from "vitest";
import { canonicalBase64, strictBase64, strictBase64Length } from "../../../src/audio/strict-base64.js";

/** The definition strictBase64 replaces on the hot path: RFC 4648 §4 base64, padded. */
const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A small deterministic generator (mulberry32), so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mostly alphabet characters, with what Node's lenient decoder handles its own way: "=", URL-safe "-" "_", whitespace, a NUL, Latin-1 and two-byte characters whose low byte is a base64 letter ("ī" is U+012B, "+" is 0x2B). */
const ALPHABET = "ABCDabcz0189+/";
const ODD = "=-_ \n\t.é\u00ff\u0000\u0100\u012b\u0141\u0161\u4e00";

describe("strictBase64", () => {
  it("decodes the standard alphabet, padded, to its bytes", () => {
    for (const bytes of [[], [0], [0xfb, 0xff], [1, 2, 3], [0xfb, 0xef, 0xbe, 0x00, 0x7f]]) {
      const text = Buffer.from(bytes).toString("base64");
      expect([...(strictBase64(text) ?? [0xdead])], text).toEqual(bytes);
    }
  });

  it("refuses what Node's decoder would let through", () => {
    for (const text of ["-_-_", "ab-c", "YQ", "YQ=", "YQ==YQ==", "Y Q==", "YQ==\n", "ĪQ==", "aīC=", "YQ=A", "Y===", "é2Fh"]) expect(strictBase64(text), JSON.stringify(text)).toBeUndefined();
  });

  it("agrees with the regular expression on 200,000 generated texts", () => {
    const next = random(23);
    const pick = (from: string): string => from[Math.floor(next() * from.length)] ?? "";
    let disagreements = 0;
    let strict = 0;
    for (let i = 0; i < 200_000; i++) {
      let text = "";
      const length = 4 * (1 + Math.floor(next() * 3)) - (next() < 0.05 ? 1 : 0);
      for (let j = 0; j < length; j++) text += next() < 0.9 ? pick(ALPHABET) : pick(ODD);
      if (next() < 0.3) text = `${text.slice(0, -1)}=`;
      if (next() < 0.15) text = `${text.slice(0, -2)}==`;
      const expected = STRICT.test(text);
      if (expected) strict += 1;
      if ((strictBase64(text) !== undefined) !== expected) disagreements += 1;
      if (strictBase64Length(text) !== strictBase64(text)?.byteLength) disagreements += 1;
      if (expected) expect(strictBase64(text)?.equals(Buffer.from(text, "base64")), text).toBe(true);
    }
    expect(disagreements).toBe(0);
    // Both sides of the line are exercised.
    expect(strict).toBeGreaterThan(10_000);
    expect(strict).toBeLessThan(190_000);
  });
});

describe("strictBase64Length", () => {
  it("counts what strictBase64 decodes, short texts and long ones alike", () => {
    for (const size of [0, 1, 2, 3, 160, 12_287, 12_288, 12_289, 40_000]) {
      const text = Buffer.alloc(size, 0xa5).toString("base64");
      expect(strictBase64Length(text), `${size} bytes`).toBe(size);
      expect(strictBase64Length(`${text.slice(0, -4)}ab-c`), `${size} bytes, a URL-safe letter`).toBeUndefined();
    }
    for (const text of ["-_-_", "YQ", "Y===", "ĪQ==", "aīC=", "é2Fh", "YQ==YQ=="]) expect(strictBase64Length(text), JSON.stringify(text)).toBeUndefined();
  });
});

describe("canonicalBase64", () => {
  it("is true exactly when the strict text is what Node's encoder writes for its bytes (zero padding bits)", () => {
    const next = random(41);
    let nonCanonical = 0;
    for (let i = 0; i < 20_000; i++) {
      const bytes = Buffer.from(Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * 256)));
      let text = bytes.toString("base64");
      // Half the time, set padding bits by moving the last character before the padding.
      if (text.endsWith("=") && next() < 0.5) {
        const at = text.length - (text.endsWith("==") ? 3 : 2);
        const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        text = text.slice(0, at) + (letters[Math.floor(next() * 64)] ?? "A") + text.slice(at + 1);
      }
      const decoded = strictBase64(text);
      expect(decoded, text).toBeDefined();
      const canonical = decoded?.toString("base64") === text;
      if (!canonical) nonCanonical += 1;
      expect(canonicalBase64(text), text).toBe(canonical);
    }
    expect(nonCanonical).toBeGreaterThan(1000);
  });

  it("names the padding bits: \"QR==\" and \"QUJ=\" decode like \"QQ==\" and \"QUI=\" but are not canonical", () => {
    expect(strictBase64("QR==")?.equals(Buffer.from("A"))).toBe(true);
    expect([canonicalBase64("QQ=="), canonicalBase64("QR==")]).toEqual([true, false]);
    expect([canonicalBase64("QUI="), canonicalBase64("QUJ="), canonicalBase64("QUJD"), canonicalBase64("")]).toEqual([true, false, true, true]);
  });
});
