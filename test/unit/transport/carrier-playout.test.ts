import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { CarrierPlayout, MARK_OVERDUE_MS, MARKLESS_PLAYOUT_MARGIN_MS } from "../../../src/transport/carrier-playout.js";

/** Sends `ms` of audio and puts a mark after it. */
function sendAndMark(playout: CarrierPlayout, ms: number): string {
  playout.sent(ms);
  const name = playout.nextMark();
  playout.placed(name);
  return name;
}

describe("CarrierPlayout", () => {
  it("plays sent audio out in real time, never past the oldest unechoed mark", async () => {
    const clock = virtualClock();
    const playout = new CarrierPlayout(clock, true);
    const first = sendAndMark(playout, 500);
    sendAndMark(playout, 500);
    expect(playout.unplayedMs).toBe(1000);
    await clock.advance(700);
    // Real time says 300 ms are left; the first mark has not echoed, so the 500 ms after it have not played.
    expect(playout.unplayedMs).toBe(500);
    expect(playout.echoed(first)).toBe(true);
    expect(playout.outstanding).toBe(1);
    expect(playout.unplayedMs).toBe(500);
  });

  it("ignores echoes that are not its own or were flushed by a clear", () => {
    const playout = new CarrierPlayout(virtualClock(), true);
    const name = sendAndMark(playout, 200);
    expect(playout.echoed("someone-else")).toBe(false);
    playout.cleared();
    expect(playout.echoed(name)).toBe(false);
    expect(playout.outstanding).toBe(0);
    expect(playout.unplayedMs).toBe(0);
  });

  it("owes a mark at a segment's end only when audio followed the last one", () => {
    const playout = new CarrierPlayout(virtualClock(), true);
    expect(playout.markOwed).toBe(false);
    sendAndMark(playout, 250);
    expect(playout.markOwed).toBe(false);
    playout.sent(20);
    expect(playout.markOwed).toBe(true);
    // A clear leaves nothing to mark until audio follows it.
    playout.cleared();
    expect(playout.markOwed).toBe(false);
    playout.sent(20);
    expect(playout.markOwed).toBe(true);
  });

  it("gives up on marks the carrier does not echo", async () => {
    const clock = virtualClock();
    const playout = new CarrierPlayout(clock, true);
    const name = sendAndMark(playout, 1000);
    await clock.advance(1000 + MARK_OVERDUE_MS);
    expect(playout.giveUpIfOverdue()).toBeUndefined();
    await clock.advance(1);
    expect(playout.giveUpIfOverdue()).toEqual({ name, overdueMs: MARK_OVERDUE_MS + 1 });
    expect(playout.outstanding).toBe(0);
  });

  it("bounds how long a closing call may play: the last echo with marks, real time and a margin without", async () => {
    const clock = virtualClock();
    const marked = new CarrierPlayout(clock, true);
    expect(marked.closingPlayMs(0)).toBeUndefined();
    const name = sendAndMark(marked, 400);
    expect(marked.closingPlayMs(100)).toBe(400 + 100 + 5000);
    marked.echoed(name);
    expect(marked.closingPlayMs(0)).toBeUndefined();

    const markless = new CarrierPlayout(clock, false);
    markless.sent(400);
    await clock.advance(1000);
    // Played by the estimate, but the carrier's own playout buffer may still hold the end.
    expect(markless.closingPlayMs(0)).toBe(MARKLESS_PLAYOUT_MARGIN_MS);
  });
});
