import { describe, expect, it } from "vitest";
import { systemClock, virtualClock, type Clock, type Timer } from "../../src/clock.js";
import { seededRandom } from "../../src/manifest/index.js";

/**
 * The virtual clock's order as a scan of every timer gives it (what it was before its heap):
 * the earliest `at` due by the target, the first set among equals.
 */
function scanningClock(start: number) {
  let now = start;
  let sequence = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn: () => void, ms: number): Timer {
      const id = ++sequence;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return { cancel: () => timers.delete(id) };
    },
    advance(ms: number): void {
      const target = now + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) if (entry[1].at <= target && (next === undefined || entry[1].at < next[1].at)) next = entry;
        if (next === undefined) break;
        timers.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
      }
      now = target;
    },
    pending: () => timers.size,
  };
}

describe("virtualClock", () => {
  it("fires timers in the order a scan of them all gives, over 2,000 random sets, cancels and advances (timers that set and cancel others included)", async () => {
    const next = seededRandom(23);
    /** A timer to set: when, and what it does when it fires (cancel the timer set last, set another). */
    interface Plan {
      readonly ms: number;
      readonly name: string;
      readonly cancelsLast: boolean;
      readonly then: Plan | undefined;
    }
    const plan = (name: string, depth: number): Plan => ({
      ms: next() < 0.2 ? 0 : Math.floor(next() * 60),
      name,
      cancelsLast: next() < 0.1,
      then: depth < 2 && next() < 0.3 ? plan(`${name}'`, depth + 1) : undefined,
    });
    const mine = { clock: virtualClock(0), fired: [] as string[], handles: [] as Timer[] };
    const model = { clock: scanningClock(0), fired: [] as string[], handles: [] as Timer[] };
    type Side = { readonly clock: Pick<Clock, "setTimeout" | "now">; readonly fired: string[]; readonly handles: Timer[] };
    const sides: readonly Side[] = [mine, model];
    const arm = (side: Side, timer: Plan): void => {
      side.handles.push(
        side.clock.setTimeout(() => {
          side.fired.push(`${timer.name}@${side.clock.now()}`);
          if (timer.cancelsLast) side.handles.at(-1)?.cancel();
          if (timer.then !== undefined) arm(side, timer.then);
        }, timer.ms),
      );
    };
    for (let step = 0; step < 2000; step++) {
      const roll = next();
      if (roll < 0.5) {
        const timer = plan(`t${step}`, 0);
        for (const side of sides) arm(side, timer);
      } else if (roll < 0.7 && mine.handles.length > 0) {
        const index = Math.floor(next() * mine.handles.length);
        for (const side of sides) side.handles[index]?.cancel();
      } else {
        const ms = Math.floor(next() * 50);
        await mine.clock.advance(ms);
        model.clock.advance(ms);
      }
      expect(mine.clock.pending()).toBe(model.clock.pending());
    }
    await mine.clock.advance(10_000);
    model.clock.advance(10_000);
    const fired = mine.fired;
    expect(fired).toEqual(model.fired);
    expect(fired.filter((line) => line.includes("'")).length).toBeGreaterThan(100);
    expect(fired.length).toBeGreaterThan(500);
  });

  it("fires only the live timer after 100,000 set and cancelled an hour ahead (the heap rebuilt on the way)", async () => {
    const clock = virtualClock(0);
    let fired = 0;
    for (let i = 0; i < 100_000; i++) clock.setTimeout(() => (fired += 1), 3_600_000).cancel();
    const kept = clock.setTimeout(() => (fired += 1), 3_600_000);
    expect(clock.pending()).toBe(1);
    await clock.advance(3_600_000);
    expect(fired).toBe(1);
    kept.cancel();
  });
});

describe("systemClock", () => {
  it("runs a timer once after its delay, and never one cancelled before it was due", async () => {
    const fired: string[] = [];
    const kept = systemClock.setTimeout(() => fired.push("kept"), 5);
    const cancelled = systemClock.setTimeout(() => fired.push("cancelled"), 1);
    cancelled.cancel();
    await systemClock.sleep(30);
    kept.cancel(); // after it ran: nothing happens
    expect(fired).toEqual(["kept"]);
  });
});
