/**
 * JavaScript source in ASCII (scripts/build.ts): every UTF-16 code unit past `~` (0x7E) written
 * as its `\uXXXX` escape (a character past the Basic Multilingual Plane as its surrogate pair).
 * The escape means the same character in a string, a template's cooked value and a regular
 * expression, with or without the `u` flag; only a template's raw value (`String.raw`, which
 * `src/` does not use) would differ, and an identifier past the BMP (none in `src/`) would not parse.
 */
export function asciiOnly(text: string): string {
  return text.replace(/[\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
