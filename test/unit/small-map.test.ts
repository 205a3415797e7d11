import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/manifest/index.js";
import { SmallMap, SmallSet } from "../../src/small-map.js";

/** What a small collection and its built-in model both answer. */
interface Collection<K> {
  readonly size: number;
  has(key: K): boolean;
  delete(key: K): boolean;
  clear(): void;
}

/**
 * 5,000 random operations on one of `keys` each (45% add, 45% delete, 3% clear, else none), done
 * to `small` and its built-in `model` alike, seeded so a failure repeats; after each the two
 * agree on size and membership, and `check` compares what else the API reads.
 */
function randomOperations<K>(seed: number, keys: readonly K[], small: Collection<K>, model: Collection<K>, ops: { add(key: K, step: number): void; check(key: K): void }): void {
  const next = seededRandom(seed);
  for (let step = 0; step < 5_000; step++) {
    const key = keys[Math.floor(next() * keys.length)] as K;
    const roll = next();
    if (roll < 0.45) ops.add(key, step);
    else if (roll < 0.9) expect(small.delete(key)).toBe(model.delete(key));
    else if (roll < 0.93) {
      small.clear();
      model.clear();
    }
    expect(small.size).toBe(model.size);
    expect(small.has(key)).toBe(model.has(key));
    ops.check(key);
  }
}

describe("SmallMap", () => {
  it("answers as a Map does, in insertion order, through random sets, deletes and clears", () => {
    const small = new SmallMap<string, number>();
    const map = new Map<string, number>();
    randomOperations(7, ["k0", "k1", "k2", "k3", "k4", "k5"], small, map, {
      add: (key, step) => {
        expect(small.set(key, step)).toBe(small);
        map.set(key, step);
      },
      check: (key) => {
        expect(small.get(key)).toBe(map.get(key));
        expect(small.entries()).toEqual([...map.entries()]);
        expect(small.keys()).toEqual([...map.keys()]);
      },
    });
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
    const small = new SmallSet<object>();
    const set = new Set<object>();
    randomOperations(
      11,
      Array.from({ length: 5 }, (_, i) => ({ i })),
      small,
      set,
      {
        add: (member) => {
          expect(small.add(member)).toBe(small);
          set.add(member);
        },
        check: () => {
          expect(small.values()).toEqual([...set.values()]);
        },
      },
    );
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
