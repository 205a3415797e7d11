import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/manifest/index.js";
import { spread } from "../../src/spread.js";

const KEYS = ["a", "b", "type", "meta", "__proto__", "0", "1"] as const;
const SYMBOL = Symbol("tag");

/** A random part: undefined, or an object of some of KEYS (a `__proto__` one an own property, as JSON.parse makes it), maybe a symbol key. */
function randomPart(random: () => number): object | undefined {
  if (random() < 0.15) return undefined;
  const entries: Record<string, number> = {};
  for (const key of KEYS) if (random() < 0.4) entries[key] = Math.floor(random() * 100);
  const part = JSON.parse(JSON.stringify(entries)) as Record<string | symbol, unknown>;
  if (random() < 0.2) part[SYMBOL] = random();
  if (random() < 0.1) Object.defineProperty(part, "hidden", { value: 1, enumerable: false });
  return part;
}

/** What the literal spread makes of the same parts, one at a time. */
function literal(parts: readonly (object | undefined)[]): object {
  return parts.reduce<object>((out, part) => ({ ...out, ...part }), {});
}

describe("spread", () => {
  it("makes what the literal spread makes of 3,000 random sets of parts: the same own keys in order, values and prototype", () => {
    const random = seededRandom(23);
    for (let n = 0; n < 3_000; n++) {
      const parts = Array.from({ length: 1 + Math.floor(random() * 4) }, () => randomPart(random));
      const got = spread(...parts);
      const want = literal(parts);
      expect(Reflect.ownKeys(got)).toEqual(Reflect.ownKeys(want));
      for (const key of Reflect.ownKeys(want)) expect((got as Record<string | symbol, unknown>)[key]).toEqual((want as Record<string | symbol, unknown>)[key]);
      expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    }
  });

  it("defines a parsed peer's `__proto__` as a property, never as the result's prototype", () => {
    const peer = JSON.parse('{"__proto__": {"polluted": true}, "type": "x"}') as object;
    const got = spread(peer, { meta: 1 });
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Object.keys(got)).toEqual(["__proto__", "type", "meta"]);
    expect((got as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("leaves its parts as they were", () => {
    const base = { a: 1 };
    const extra = { b: 2 };
    const got = spread(base, extra);
    expect(got).toEqual({ a: 1, b: 2 });
    expect(base).toEqual({ a: 1 });
    expect(got).not.toBe(base);
  });
});
