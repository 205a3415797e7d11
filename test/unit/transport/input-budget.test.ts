import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { InputBudget } from "../../../src/transport/input-budget.js";
import { onPeerMessage } from "../../../src/transport/keepalive.js";

const limits = { framesPerSecond: 10, audioBytesPerSecond: 1000, textBytesPerSecond: 500, burstSeconds: 2 };

describe("InputBudget", () => {
  it("is within budget through a burst, in debt past it, and out of debt once it has refilled", () => {
    let now = 0;
    const budget = new InputBudget(limits, () => now);
    for (let i = 0; i < 20; i++) budget.spend("audio", 100);
    expect(budget.debtMs()).toBe(0);
    budget.spend("audio", 100);
    // One frame over a 10-a-second budget: 100 ms.
    expect(budget.debtMs()).toBe(100);
    now += 100;
    expect(budget.debtMs()).toBe(0);
  });

  it("charges bytes per kind: 3 s of audio at once waits 1 s, text is a bucket of its own", () => {
    let now = 0;
    const budget = new InputBudget(limits, () => now);
    budget.spend("audio", 3000);
    expect(budget.debtMs()).toBe(1000);
    now += 400;
    expect(budget.debtMs()).toBe(600);
    const other = new InputBudget(limits, () => now);
    other.spend("text", 1000);
    expect(other.debtMs()).toBe(0);
    other.spend("text", 500);
    expect(other.debtMs()).toBe(1000);
  });

  it("retunes from now on: the debt stays, the credit is kept up to the new size, refills at the new rate", () => {
    let now = 0;
    const budget = new InputBudget(limits, () => now);
    budget.spend("audio", 2500);
    // 500 bytes over at 1000 a second: 500 ms.
    expect(budget.debtMs()).toBe(500);
    budget.retune({ ...limits, audioBytesPerSecond: 500 });
    // The same 500 bytes at 500 a second: 1 s.
    expect(budget.debtMs()).toBe(1000);
    now += 1000;
    expect(budget.debtMs()).toBe(0);
    const full = new InputBudget(limits, () => now);
    // 20 frames of credit, cut to the new size of 2: the third frame at once is over.
    full.retune({ ...limits, framesPerSecond: 1 });
    full.spend("text", 1);
    full.spend("text", 1);
    expect(full.debtMs()).toBe(0);
    full.spend("text", 1);
    expect(full.debtMs()).toBe(1000);
  });

  it("refills nothing while the clock steps back, and counts from the earlier time after", () => {
    let now = 1000;
    const budget = new InputBudget(limits, () => now);
    budget.spend("audio", 2100);
    expect(budget.debtMs()).toBe(100);
    now = 500;
    expect(budget.debtMs()).toBe(100);
    now = 600;
    expect(budget.debtMs()).toBe(0);
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
    const budget = new InputBudget(limits, () => clock.now());
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
