import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { InputBudget, type InputBudgetLimits } from "../../../src/transport/input-budget.js";
import { onPeerMessage } from "../../../src/transport/keepalive.js";

const limits = { framesPerSecond: 10, audioBytesPerSecond: 1000, textBytesPerSecond: 500, burstSeconds: 2 };

/** One step of a budget's life: frames spent, a look at the debt, the clock set, new limits. */
type Step =
  | { readonly spend: "audio" | "text"; readonly bytes: number; readonly times?: number }
  | { readonly debtMs: number }
  | { readonly owedMs: number }
  | { readonly at: number }
  | { readonly retune: Partial<InputBudgetLimits> };

/** Run `steps` against a fresh budget (`limits`) on a clock that starts at `start` and moves only when a step sets it. */
function play(steps: readonly Step[], start = 0): void {
  let now = start;
  const budget = new InputBudget(limits, { now: () => now });
  for (const [i, step] of steps.entries()) {
    if ("spend" in step) for (let n = 0; n < (step.times ?? 1); n++) budget.spend(step.spend, step.bytes);
    else if ("debtMs" in step) expect(budget.debtMs(), `step ${i}`).toBe(step.debtMs);
    else if ("owedMs" in step) expect(budget.owedMs(), `step ${i}`).toBe(step.owedMs);
    else if ("at" in step) now = step.at;
    else budget.retune({ ...limits, ...step.retune });
  }
}

describe("InputBudget", () => {
  it("is within budget through a burst, in debt past it, and out of debt once it has refilled", () => {
    play([
      { spend: "audio", bytes: 100, times: 20 },
      { debtMs: 0 },
      // One frame over a 10-a-second budget: 100 ms.
      { spend: "audio", bytes: 100 },
      { debtMs: 100 },
      { at: 100 },
      { debtMs: 0 },
    ]);
  });

  it("charges bytes per kind: 3 s of audio at once waits 1 s, text is a bucket of its own", () => {
    play([{ spend: "audio", bytes: 3000 }, { debtMs: 1000 }, { at: 400 }, { debtMs: 600 }]);
    play([{ spend: "text", bytes: 1000 }, { debtMs: 0 }, { spend: "text", bytes: 500 }, { debtMs: 1000 }]);
  });

  it("retunes from now on: the debt stays, the credit is kept up to the new size, refills at the new rate", () => {
    play([
      // 500 bytes over at 1000 a second: 500 ms.
      { spend: "audio", bytes: 2500 },
      { debtMs: 500 },
      // The same 500 bytes at 500 a second: 1 s.
      { retune: { audioBytesPerSecond: 500 } },
      { debtMs: 1000 },
      { at: 1000 },
      { debtMs: 0 },
    ]);
    play([
      // 20 frames of credit, cut to the new size of 2: the third frame at once is over.
      { retune: { framesPerSecond: 1 } },
      { spend: "text", bytes: 1, times: 2 },
      { debtMs: 0 },
      { spend: "text", bytes: 1 },
      { debtMs: 1000 },
    ]);
  });

  it("owes, without reading the clock, the debt as of its last charge, retune or look", () => {
    play([
      // 100 bytes over a 2000-byte bucket at 1000 a second: 100 ms.
      { spend: "audio", bytes: 2100 },
      { owedMs: 100 },
      // The clock moved, unread: still owed as of the charge; a look reads it.
      { at: 60 },
      { owedMs: 100 },
      { debtMs: 40 },
      { owedMs: 40 },
      // 20 bytes over at 200 a second: 100 ms.
      { at: 80 },
      { retune: { audioBytesPerSecond: 200 } },
      { owedMs: 100 },
    ]);
  });

  it("refills nothing while the clock steps back, and counts from the earlier time after", () => {
    play([{ spend: "audio", bytes: 2100 }, { debtMs: 100 }, { at: 500 }, { debtMs: 100 }, { at: 600 }, { debtMs: 0 }], 1000);
  });
});

/** The part of a ws socket `onPeerMessage` uses. */
class FakePeer extends EventEmitter {
  paused = false;
  pauses = 0;
  pause(): void {
    this.paused = true;
    this.pauses += 1;
  }
  resume(): void {
    this.paused = false;
  }
  frame(text: string): void {
    this.emit("message", Buffer.from(text), false);
  }
}

describe("onPeerMessage with a budget", () => {
  it("handles every frame, in order; stops reading while in debt and hands over what was read meanwhile once the budget allows", async () => {
    const clock = virtualClock();
    const peer = new FakePeer();
    const handled: string[] = [];
    const budget = new InputBudget(limits, clock);
    onPeerMessage(peer as unknown as WebSocket, silentLogger, (data) => handled.push((data as Buffer).toString("utf8")), { budget, clock, dropped: () => {} });
    for (let i = 0; i < 20; i++) peer.frame(`f${i}`);
    expect(handled).toHaveLength(20);
    expect(peer.paused).toBe(false);
    peer.frame("f20");
    expect(handled).toHaveLength(21);
    expect(peer.paused).toBe(true);
    // What the socket layer had already read still arrives: held, not handled, not lost.
    for (let i = 21; i < 30; i++) peer.frame(`f${i}`);
    expect(handled).toHaveLength(21);
    await clock.advance(100);
    expect(handled).toHaveLength(22);
    expect(peer.paused).toBe(true);
    await clock.advance(1000);
    expect(handled).toEqual(Array.from({ length: 30 }, (_, i) => `f${i}`));
    await clock.advance(100);
    expect(peer.paused).toBe(false);
  });
});
