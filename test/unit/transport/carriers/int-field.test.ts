import { describe, expect, it } from "vitest";
import { intField } from "../../../../src/transport/carriers/carrier.js";

describe("intField", () => {
  it("reads a non-negative integer from a number or a string of up to 15 digits", () => {
    expect(intField(0)).toBe(0);
    expect(intField(52)).toBe(52);
    expect(intField("52")).toBe(52);
    expect(intField("007")).toBe(7);
    expect(intField("999999999999999")).toBe(999_999_999_999_999);
  });

  it("refuses anything else, as the regular expression it replaced did (/^\\d{1,15}$/)", () => {
    for (const value of ["", "1000000000000000", "-1", "+1", " 1", "1 ", "1e3", "0x1f", "1.5", "١٢", "٣", "12\n", null, undefined, true, {}, [], -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(intField(value), typeof value === "number" ? String(value) : JSON.stringify(value)).toBeUndefined();
    }
  });

  it("agrees with the regular expression on every string of up to 3 characters from digits and their neighbours", () => {
    const chars = ["0", "1", "9", "/", ":", "a", " "];
    const strings = [""];
    for (let length = 1; length <= 3; length++) for (const s of strings.filter((t) => t.length === length - 1)) for (const c of chars) strings.push(s + c);
    for (const s of strings) expect(intField(s), JSON.stringify(s)).toBe(/^\d{1,15}$/.test(s) ? Number(s) : undefined);
  });
});
