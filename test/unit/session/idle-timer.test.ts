import { describe, expect, it } from "vitest";
import { Deadline, virtualClock, type Clock } from "../../../src/clock.js";
import { IdleTimer } from "../../../src/session/idle-timer.js";

/** The virtual clock, counting the timers set on it. */
function countingClock() {
  const clock = virtualClock();
  let set = 0;
  const counted: Clock = { ...clock, setTimeout: (fn, ms) => (set++, clock.setTimeout(fn, ms)) };
  return { clock, counted, set: () => set };
}

describe("IdleTimer", () => {
  it("expires the timeout after the last activity, with one timer per wait however often it is touched", async () => {
    const { clock, counted, set } = countingClock();
    let expired = 0;
    const idle = new IdleTimer(counted, 1000, { busy: () => false, expired: () => void expired++ });
    idle.touch();
    for (let i = 0; i < 9; i++) {
      await clock.advance(100);
      idle.touch();
    }
    // Last activity at 900 ms: not idle at 1000, nor at 1899.
    await clock.advance(999);
    expect(expired).toBe(0);
    await clock.advance(1);
    expect(expired).toBe(1);
    // The first timer, then one for the rest of the wait from the last touch.
    expect(set()).toBe(2);
    expect(clock.pending()).toBe(0);
    // At most once.
    idle.touch();
    await clock.advance(5000);
    expect(expired).toBe(1);
  });

  it("waits while something is in flight, a whole timeout from when it is found busy", async () => {
    const clock = virtualClock();
    let busy = true;
    let expired = 0;
    const idle = new IdleTimer(clock, 1000, { busy: () => busy, expired: () => void expired++ });
    idle.touch();
    await clock.advance(1000);
    expect(expired).toBe(0);
    busy = false;
    await clock.advance(999);
    expect(expired).toBe(0);
    await clock.advance(1);
    expect(expired).toBe(1);
  });

  it("never expires once stopped, nor with a timeout of 0", async () => {
    const clock = virtualClock();
    let expired = 0;
    const stopped = new IdleTimer(clock, 1000, { busy: () => false, expired: () => void expired++ });
    stopped.touch();
    stopped.stop();
    stopped.touch();
    const never = new IdleTimer(clock, 0, { busy: () => false, expired: () => void expired++ });
    never.touch();
    await clock.advance(10_000);
    expect(expired).toBe(0);
    expect(clock.pending()).toBe(0);
  });
});

describe("Deadline", () => {
  it("runs once the deadline has come, on one timer however often it moves later; an earlier deadline sets it again", async () => {
    const { clock, counted, set } = countingClock();
    let due = 0;
    const deadline = new Deadline(counted, () => void due++);
    const start = clock.now();
    for (let i = 0; i < 10; i++) deadline.set(start + 1000 + i * 100);
    await clock.advance(1899);
    expect(due).toBe(0);
    await clock.advance(1);
    expect(due).toBe(1);
    expect(set()).toBe(2);
    // Moved earlier than its timer: the timer is set again for it.
    deadline.set(clock.now() + 5000);
    deadline.set(clock.now() + 500);
    await clock.advance(500);
    expect(due).toBe(2);
    deadline.set(clock.now() + 100);
    deadline.cancel();
    await clock.advance(1000);
    expect(due).toBe(2);
    expect(clock.pending()).toBe(0);
  });
});
