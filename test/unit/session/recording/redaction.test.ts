import { describe, expect, it } from "vitest";
import { luhnValid, Redactor } from "../../../../src/session/recording/redaction.js";

describe("redaction rules", () => {
  it("Luhn: test card numbers pass, a changed digit fails", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("5555555555554444")).toBe(true);
    expect(luhnValid("378282246310005")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
  });

  it("card: written with spaces or hyphens, or run together; a number failing Luhn is kept", () => {
    const redactor = new Redactor(["card"]);
    expect(redactor.text("card 4111 1111 1111 1111 exp 12/27").text).toBe("card [redacted card] exp 12/27");
    expect(redactor.text("5555-5555-5555-4444").text).toBe("[redacted card]");
    expect(redactor.text("it is 378282246310005.").text).toBe("it is [redacted card].");
    expect(redactor.text("order 4111 1111 1111 1112 please")).toEqual({ text: "order 4111 1111 1111 1112 please", rules: [] });
    expect(redactor.text("call 555 123 4567").rules).toEqual([]);
  });

  it("card: spoken digits as a recognizer writes them, with oh, double and triple, or mixed with numerals", () => {
    const redactor = new Redactor(["card"]);
    expect(redactor.text("my card is four one one one one one one one one one one one one one one one thanks").text).toBe("my card is [redacted card] thanks");
    expect(redactor.text("Five five five five, five five five five, five five five five, four four four four").text).toBe("[redacted card]");
    expect(redactor.text("four double one one one one one one one one one one one one one one").text).toBe("[redacted card]");
    expect(redactor.text("four one one one 1111 one one one one one one one one").text).toBe("[redacted card]");
    expect(redactor.text("three seven eight two eight two two four six three one oh oh oh five").text).toBe("[redacted card]");
    // A shorter number read out is no card.
    expect(redactor.text("my pin is one two three four").rules).toEqual([]);
  });

  it("card: finds the number inside a longer run of digits (a card followed by its expiry)", () => {
    expect(new Redactor(["card"]).text("4111 1111 1111 1111 12 27").text).toBe("[redacted card] 12 27");
  });

  it("ssn and email", () => {
    const redactor = new Redactor(["ssn", "email"]);
    expect(redactor.text("ssn 123-45-6789, mail jane.doe+x@example.co.uk").text).toBe("ssn [redacted ssn], mail [redacted email]");
    expect(redactor.text("123-45 6789").rules).toEqual([]);
  });

  it("custom rules: every match; counts by rule", () => {
    const redactor = new Redactor([{ name: "account", pattern: "ACC-\\d{4}", flags: "i" }]);
    expect(redactor.text("acc-1234 and ACC-9999").text).toBe("[redacted account] and [redacted account]");
    expect(redactor.counts.get("account")).toBe(2);
  });

  it("tool args and results: every string in a nested value, and numbers that are card numbers", () => {
    const redactor = new Redactor(["card"]);
    const hits = new Set<string>();
    expect(redactor.value({ card: 4111111111111111, nested: [{ note: "4111-1111-1111-1111" }], qty: 2 }, hits)).toEqual({ card: "[redacted card]", nested: [{ note: "[redacted card]" }], qty: 2 });
    expect([...hits]).toEqual(["card"]);
  });

  it("no rules: text untouched", () => {
    expect(new Redactor([]).text("4111 1111 1111 1111")).toEqual({ text: "4111 1111 1111 1111", rules: [] });
  });
});
