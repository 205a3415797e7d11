import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/manifest/index.js";
import { SmallMap, SmallSet } from "../../src/small-map.js";

describe("SmallMap", () => {
  it("answers as a Map does, in insertion order, through random sets, deletes and clears", () => {
    const next = seededRandom(7);
    const small = new SmallMap<string, number>();
    const map = new Map<string, number>();
    for (let step = 0; step < 5_000; step++) {
      const key = `k${Math.floor(next() * 6)}`;
      const roll = next();
      if (roll < 0.45) {
        expect(small.set(key, step)).toBe(small);
        map.set(key, step);
      } else if (roll < 0.9) expect(small.delete(key)).toBe(map.delete(key));
      else if (roll < 0.93) {
        small.clear();
        map.clear();
      }
      expect(small.size).toBe(map.size);
      expect(small.has(key)).toBe(map.has(key));
      expect(small.get(key)).toBe(map.get(key));
      expect(small.entries()).toEqual([...map.entries()]);
      expect(small.keys()).toEqual([...map.keys()]);
    }
  });

  it("keeps a replaced key where it was", () => {
    const small = new SmallMap<string, string>().set("a", "1").set("b", "2").set("a", "3");
    expect(small.entries()).toEqual([
      ["a", "3"],
      ["b", "2"],
    ]);
  });

  it("reads as it stood when a caller deletes while going through its entries", () => {
    const small = new SmallMap<string, number>().set("a", 1).set("b", 2).set("c", 3);
    const seen: string[] = [];
    for (const [key] of small.entries()) {
      seen.push(key);
      small.delete(key);
    }
    expect(seen).toEqual(["a", "b", "c"]);
    expect(small.size).toBe(0);
  });

  it("compares object keys by identity", () => {
    const a = { id: "x" };
    const small = new SmallMap<object, number>().set(a, 1);
    expect(small.get({ id: "x" })).toBeUndefined();
    expect(small.get(a)).toBe(1);
  });
});

describe("SmallSet", () => {
  it("answers as a Set does, in insertion order, through random adds, deletes and clears", () => {
    const next = seededRandom(11);
    const small = new SmallSet<object>();
    const set = new Set<object>();
    const members = Array.from({ length: 5 }, (_, i) => ({ i }));
    for (let step = 0; step < 5_000; step++) {
      const member = members[Math.floor(next() * members.length)] ?? {};
      const roll = next();
      if (roll < 0.45) {
        expect(small.add(member)).toBe(small);
        set.add(member);
      } else if (roll < 0.9) expect(small.delete(member)).toBe(set.delete(member));
      else if (roll < 0.93) {
        small.clear();
        set.clear();
      }
      expect(small.size).toBe(set.size);
      expect(small.has(member)).toBe(set.has(member));
      expect(small.values()).toEqual([...set.values()]);
    }
  });

  it("lets a member's own check delete it while the members are gone through", () => {
    const small = new SmallSet<() => void>();
    const order: number[] = [];
    const checks = [0, 1, 2].map((n) => {
      const check = (): void => {
        order.push(n);
        small.delete(check);
      };
      small.add(check);
      return check;
    });
    for (const check of small.values()) check();
    expect(order).toEqual([0, 1, 2]);
    expect(small.size).toBe(0);
    expect(checks).toHaveLength(3);
  });
});
