import { describe, expect, it } from "vitest";
import { ChunkOrder } from "../../../src/transport/chunk-order.js";

function run(order: ChunkOrder<number>, chunks: readonly number[]): number[] {
  return chunks.flatMap((c) => order.push(c, c));
}

describe("ChunkOrder", () => {
  it("passes in-order frames straight through", () => {
    const order = new ChunkOrder<number>();
    for (const c of [5, 6, 7]) expect(order.push(c, c)).toEqual([c]);
  });

  it("takes a frame that is due with nothing held (due), and leaves any other to push, in the same order", () => {
    const order = new ChunkOrder<number>();
    expect([order.due(undefined), order.due(5), order.due(6)]).toEqual([true, true, true]);
    // Early: not taken; push holds it until 7 arrives, and then nothing is due past the held ones.
    expect(order.due(8)).toBe(false);
    expect(order.push(8, 8)).toEqual([]);
    expect(order.due(7)).toBe(false);
    expect(order.push(7, 7)).toEqual([7, 8]);
    expect(order.due(9)).toBe(true);
    // A straggler and a duplicate are not due: push drops them.
    expect(order.due(4)).toBe(false);
    expect(order.push(4, 4)).toEqual([]);
    expect(order.due(9)).toBe(false);
    expect(order.push(9, 9)).toEqual([]);
    expect(order.dropped).toBe(2);
  });

  it("holds an early frame until the one before it arrives, then releases both in order", () => {
    const order = new ChunkOrder<number>();
    expect(run(order, [1, 3, 4])).toEqual([1]);
    expect(order.push(2, 2)).toEqual([2, 3, 4]);
    expect(order.push(5, 5)).toEqual([5]);
  });

  it("skips a gap that stays open past the hold, and drops the straggler and duplicates", () => {
    const order = new ChunkOrder<number>(3);
    expect(run(order, [1, 3, 4, 5])).toEqual([1]);
    expect(order.push(6, 6)).toEqual([3, 4, 5, 6]);
    expect(order.skipped).toBe(1);
    expect(order.push(2, 2)).toEqual([]);
    expect(order.push(6, 6)).toEqual([]);
    expect(order.dropped).toBe(2);
  });

  it("whatever the arrival order, every frame comes out at most once and in increasing order", () => {
    let seed = 7;
    const random = (): number => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let trial = 0; trial < 200; trial++) {
      const chunks = Array.from({ length: 40 }, (_, i) => i + 1);
      // Local shuffles: each frame moves at most 3 places.
      for (let i = 0; i < chunks.length - 1; i++) if (random() < 0.3) [chunks[i], chunks[i + 1]] = [chunks[i + 1]!, chunks[i]!];
      const out = run(new ChunkOrder<number>(3), chunks);
      expect(out).toEqual([...out].sort((a, b) => a - b));
      expect(new Set(out).size).toBe(out.length);
      expect(out.length).toBeGreaterThanOrEqual(36);
    }
  });

  it("lets frames without a number through", () => {
    expect(new ChunkOrder<string>().push(undefined, "x")).toEqual(["x"]);
  });
});
