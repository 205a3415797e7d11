// The STT replay's queue (src/pipeline/replay-queue.ts): what it keeps, in order, across drops
// from the front, the byte cap and the compaction of the slots it has dropped.
import { setImmediate as tick } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { ReplayQueue } from "../../../src/pipeline/replay-queue.js";

/** A chunk of `bytes` bytes, every byte `fill`, so the order shows. */
const chunk = (fill: number, bytes = 640): Uint8Array => new Uint8Array(bytes).fill(fill % 256);

/** What a replay would send: each chunk's first byte, in order (the replay re-stamps the ends: read last). */
function replayed(queue: ReplayQueue): number[] {
  const fills: number[] = [];
  queue.resend((c) => fills.push(c[0] as number));
  return fills;
}

describe("ReplayQueue", () => {
  it("drops the chunks that end at or before a final's end, and keeps the rest in order", () => {
    const queue = new ReplayQueue();
    for (let i = 1; i <= 5; i++) queue.push(chunk(i), i * 20);
    queue.dropThrough(60);
    expect(queue.length).toBe(2);
    expect(queue.bytes).toBe(2 * 640);
    expect(replayed(queue)).toEqual([4, 5]);
  });

  it("re-stamps each chunk with the end a replay gives it, and drops by the new ends", () => {
    const queue = new ReplayQueue();
    for (let i = 1; i <= 4; i++) queue.push(chunk(i), 1000 + i * 20);
    let sent = 0;
    queue.resend(() => (sent += 20));
    queue.dropThrough(40);
    expect(queue.length).toBe(2);
    expect(replayed(queue)).toEqual([3, 4]);
  });

  it("keeps at most the byte cap from the newest back, but always the newest chunk", () => {
    const queue = new ReplayQueue();
    for (let i = 1; i <= 10; i++) queue.push(chunk(i, 100), i);
    queue.dropOver(350);
    expect(queue.length).toBe(3);
    expect(queue.bytes).toBe(300);
    queue.push(chunk(11, 1000), 11);
    queue.dropOver(350);
    expect(queue.length).toBe(1);
    expect(queue.bytes).toBe(1000);
  });

  it("drops everything on a final with no end (Infinity), and starts again empty", () => {
    const queue = new ReplayQueue();
    for (let i = 1; i <= 1500; i++) queue.push(chunk(i), i * 20);
    queue.dropThrough(Number.POSITIVE_INFINITY);
    expect(queue.length).toBe(0);
    expect(queue.bytes).toBe(0);
    queue.push(chunk(7), 20);
    expect(replayed(queue)).toEqual([7]);
  });

  it("keeps order and counts across many drops from the front (the dropped slots compacted)", () => {
    const queue = new ReplayQueue();
    const kept: number[] = [];
    let end = 0;
    // A 30 s cap of 20 ms frames at 16 kHz, a final every 37 frames ending 5 frames back: drops of every size.
    for (let i = 1; i <= 20_000; i++) {
      end += 20;
      queue.push(chunk(i), end);
      kept.push(i);
      queue.dropOver(1500 * 640);
      while (kept.length > 1500) kept.shift();
      if (i % 37 === 0) {
        queue.dropThrough(end - 100);
        while (kept.length > 5) kept.shift();
      }
    }
    expect(queue.length).toBe(kept.length);
    expect(queue.bytes).toBe(kept.length * 640);
    expect(replayed(queue)).toEqual(kept.map((i) => i % 256));
  });

  it("lets go of the chunks it drops before it compacts (a session at the cap keeps the cap's audio, not twice it)", async () => {
    // V8's gc(), for this test only: a context made after the flag is set has it.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const queue = new ReplayQueue();
    const dropped: WeakRef<Uint8Array>[] = [];
    for (let i = 0; i < 200; i++) {
      const c = chunk(i);
      if (i < 40) dropped.push(new WeakRef(c));
      queue.push(c, (i + 1) * 20);
    }
    // 40 dropped: fewer than the arrays are compacted at, so their slots stay.
    queue.dropThrough(40 * 20);
    expect(queue.length).toBe(160);
    await tick();
    gc();
    expect(dropped.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    expect(replayed(queue)).toHaveLength(160);
  });
});
