import { describe, expect, it } from "vitest";
import {
  DEFAULT_START_LINES,
  ToolDefinitionError,
  matchesWhen,
  normalizeToolMessages,
  pickVariant,
  planDelayedLadder,
  seededRandom,
  spokenDurationMs,
} from "../../../src/manifest/index.js";

describe("normalizeToolMessages", () => {
  it("answers undefined for a tool with nothing to say", () => {
    expect(normalizeToolMessages(undefined)).toBeUndefined();
    expect(normalizeToolMessages({})).toBeUndefined();
    expect(normalizeToolMessages({ start: [], complete: [] })).toBeUndefined();
  });

  it("drops every kind the tool did not declare", () => {
    expect(normalizeToolMessages({ complete: "Done." })).toEqual({ complete: [{ content: "Done.", role: "assistant" }] });
  });

  it("expands start: true to the default lines", () => {
    expect(normalizeToolMessages({ start: true })?.start?.map((m) => m.content)).toEqual(DEFAULT_START_LINES);
  });

  it("normalizes strings, lists and objects to one shape", () => {
    expect(
      normalizeToolMessages({
        start: ["Let me look.", { content: "Checking the order.", blocking: true, when: { arg: "priority", op: "eq", value: "high" } }],
        delayed: { afterMs: 3000, content: "Still looking." },
        failed: [{ content: "Tell the caller the lookup failed.", role: "system" }],
      }),
    ).toEqual({
      start: [
        { content: "Let me look." },
        { content: "Checking the order.", blocking: true, when: [{ arg: "priority", op: "eq", value: "high" }] },
      ],
      delayed: [{ afterMs: 3000, content: "Still looking." }],
      failed: [{ content: "Tell the caller the lookup failed.", role: "system" }],
    });
  });

  it("is idempotent", () => {
    const once = normalizeToolMessages({ start: true, delayed: [{ afterMs: 2000, content: "A" }], complete: "Done." });
    expect(normalizeToolMessages(once)).toEqual(once);
  });

  it.each([
    [{ start: [""] }, /messages.start\[0\]: `content` must be a non-empty string/],
    [{ delayed: [{ afterMs: 0, content: "x" }] }, /messages.delayed\[0\]: `afterMs` must be a positive integer/],
    [{ delayed: ["x"] }, /messages.delayed\[0\]: write \{ afterMs, content \}/],
    [{ complete: [{ content: "x", role: "user" }] }, /messages.complete\[0\]: `role` must be "assistant"/],
    [{ start: [{ content: "x", when: { arg: "n", op: "like", value: 1 } }] }, /`op` must be one of eq, neq, gt, gte, lt, lte/],
    [{ begin: "x" }, /messages.begin: not a tool message kind/],
  ])("refuses %j naming the entry", (input, message) => {
    expect(() => normalizeToolMessages(input as never)).toThrow(ToolDefinitionError);
    expect(() => normalizeToolMessages(input as never)).toThrow(message);
  });
});

describe("when conditions", () => {
  it("ANDs conditions on top-level arguments", () => {
    const when = [
      { arg: "amount", op: "gte", value: 100 },
      { arg: "currency", op: "eq", value: "EUR" },
    ] as const;
    expect(matchesWhen(when, { amount: 150, currency: "EUR" })).toBe(true);
    expect(matchesWhen(when, { amount: 150, currency: "USD" })).toBe(false);
    expect(matchesWhen(when, { amount: 50, currency: "EUR" })).toBe(false);
  });

  it("orders numbers only, and never throws", () => {
    expect(matchesWhen([{ arg: "n", op: "gt", value: 1 }], { n: "5" })).toBe(false);
    expect(matchesWhen([{ arg: "n", op: "lt", value: 1 }], { n: null })).toBe(false);
    expect(matchesWhen([{ arg: "n", op: "lte", value: 1 }], { n: Number.NaN })).toBe(false);
    for (const args of [null, undefined, 42, "text", [1, 2]]) {
      expect(() => matchesWhen([{ arg: "n", op: "gte", value: 1 }], args)).not.toThrow();
    }
    expect(matchesWhen([{ arg: "n", op: "neq", value: 1 }], { n: 2 })).toBe(true);
    expect(matchesWhen(undefined, null)).toBe(true);
  });
});

describe("variant and ladder selection", () => {
  it("draws among the eligible variants with the given random source", () => {
    const variants = [{ content: "a" }, { content: "b" }, { content: "c", when: [{ arg: "x", op: "eq" as const, value: 1 }] }];
    const seen = new Set<string>();
    const random = seededRandom(7);
    for (let i = 0; i < 200; i++) seen.add(pickVariant(variants, { x: 2 }, random)?.content ?? "none");
    expect([...seen].sort()).toEqual(["a", "b"]);
    expect(pickVariant(variants, {}, () => 0.999)?.content).toBe("b");
    expect(pickVariant([], {}, Math.random)).toBeUndefined();
  });

  it("is reproducible with a seeded source", () => {
    const variants = ["a", "b", "c", "d"].map((content) => ({ content }));
    const draw = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 10 }, () => pickVariant(variants, {}, random)?.content).join("");
    };
    expect(draw(42)).toBe(draw(42));
    expect(draw(42)).not.toBe(draw(43));
  });

  it("plans a ladder: same afterMs are variants of one rung, rungs ascend", () => {
    const delayed = [
      { afterMs: 6000, content: "This is taking a while." },
      { afterMs: 2000, content: "Still looking." },
      { afterMs: 2000, content: "Bear with me." },
      { afterMs: 9000, content: "Only for big orders.", when: [{ arg: "items", op: "gt" as const, value: 10 }] },
    ];
    const ladder = planDelayedLadder(delayed, { items: 3 }, () => 0.6);
    expect(ladder).toEqual([
      { afterMs: 2000, content: "Bear with me." },
      { afterMs: 6000, content: "This is taking a while." },
    ]);
    expect(planDelayedLadder(delayed, { items: 30 }, () => 0).map((s) => s.afterMs)).toEqual([2000, 6000, 9000]);
    expect(planDelayedLadder(undefined, {}, Math.random)).toEqual([]);
  });

  it("estimates a blocking line at 18 characters per second, capped at 8 s", () => {
    expect(spokenDurationMs("x".repeat(18))).toBe(1000);
    expect(spokenDurationMs("x".repeat(1000))).toBe(8000);
  });
});
