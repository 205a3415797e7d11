import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { asciiOnly } from "../../../scripts/ascii-only.js";

describe("asciiOnly (the build's JavaScript in ASCII)", () => {
  it("escapes every character past ~, and the program means the same", () => {
    const source = 'const café = "a — b → c ≤ 2×"; const t = `x — ${café} 😀`; const r = /[—→]/u; const e = /😀+/; [café, t, r.test("→"), r.test("-"), "😀".length, e.test("😀😀"), /^.$/u.test("😀")]';
    const escaped = asciiOnly(source);
    expect(escaped).toMatch(/^[\x20-\x7e]*$/);
    expect(escaped).toContain("\\u2014");
    expect(escaped).toContain("\\ud83d\\ude00");
    expect(runInNewContext(escaped)).toEqual(runInNewContext(source));
  });

  it("leaves ASCII as it is", () => {
    const source = 'const a = "plain\\n"; // ~ tilde\n';
    expect(asciiOnly(source)).toBe(source);
  });
});
