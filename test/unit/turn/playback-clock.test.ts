import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { PlaybackClock } from "../../../src/turn/playback-clock.js";

describe("PlaybackClock: the model audio heard", () => {
  it("counts a long reply of small chunks as one run, with fillers in between left out", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    for (let i = 0; i < 500; i++) playback.queued(20, "model"); // 10 s of 20 ms deltas
    playback.queued(1000, "filler");
    for (let i = 0; i < 50; i++) playback.queued(20, "model");
    await clock.advance(9_990);
    expect(playback.heardModelMs(0)).toBe(9_990);
    await clock.advance(510); // 10.5 s: half the filler played
    expect(playback.heardModelMs(0)).toBe(10_000);
    await clock.advance(1_100); // 11.6 s: 600 ms of model audio past the filler
    expect(playback.heardModelMs(0)).toBe(10_600);
    expect(playback.heardModelMs(700)).toBe(10_000);
  });

  it("starts over with each reply's timeline", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    playback.queued(300, "model");
    await clock.advance(300);
    playback.resetTimeline();
    playback.queued(20, "model");
    playback.queued(20, "model");
    await clock.advance(30);
    expect(playback.heardModelMs(0)).toBe(30);
  });
});

describe("PlaybackClock.timeline: a reply's audio ms → its model ms, frozen", () => {
  it("leaves fillers out and keeps answering after the next reply resets the timeline", () => {
    const playback = new PlaybackClock(virtualClock(0));
    playback.queued(1000, "model");
    playback.queued(500, "filler");
    playback.queued(1000, "model");
    const timeline = playback.timeline();
    expect([0, 400, 1000, 1200, 1500, 1800, 9000].map(timeline)).toEqual([0, 400, 1000, 1000, 1000, 1300, 2000]);
    playback.resetTimeline();
    playback.queued(100, "filler");
    expect(timeline(1800)).toBe(1300);
    expect(playback.timeline()(1800)).toBe(0);
  });

  it("stays where it was taken: model audio that extends the run it ends in does not move it", () => {
    const playback = new PlaybackClock(virtualClock(0));
    playback.queued(500, "model");
    const early = playback.timeline();
    playback.queued(500, "model");
    expect(early(900)).toBe(500);
    expect(playback.timeline()(900)).toBe(900);
  });
});

describe("PlaybackClock.playedOut: waits for the end of playback on one timer", () => {
  /** Whether `promise` has settled by now (after the promise jobs that settle it have run). */
  async function settledBy(promise: Promise<void>): Promise<boolean> {
    let settled = false;
    void promise.then(() => (settled = true));
    await new Promise<void>((resolve) => setImmediate(resolve));
    return settled;
  }

  it("resolves when the queued audio has played, later when a report pushes the end later", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    playback.queued(1000, "model");
    const done = playback.playedOut(() => false, new AbortController().signal);
    await clock.advance(500);
    playback.report(800); // the listener still holds 800 ms at 500: the end moves to 1300
    await clock.advance(700);
    expect(await settledBy(done)).toBe(false);
    await clock.advance(100);
    expect(await settledBy(done)).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it("keeps one timer however many wait and however much audio is queued meanwhile", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    playback.queued(200, "model");
    const waits = [1, 2, 3].map(() => playback.playedOut(() => false, new AbortController().signal));
    for (let i = 0; i < 40; i++) playback.queued(20, "model");
    expect(clock.pending()).toBe(1);
    await clock.advance(999);
    expect(await settledBy(Promise.all(waits).then(() => undefined))).toBe(false);
    await clock.advance(1);
    expect(await settledBy(Promise.all(waits).then(() => undefined))).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it("resolves at once when playback is cleared, or the signal aborts, and sees a stop when playback is cleared", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    playback.queued(5000, "model");
    const aborter = new AbortController();
    let stopped = false;
    const aborted = playback.playedOut(() => false, aborter.signal);
    const cut = playback.playedOut(() => stopped, new AbortController().signal);
    aborter.abort();
    expect(await settledBy(aborted)).toBe(true);
    stopped = true;
    expect(await settledBy(cut)).toBe(false); // a flag alone is seen when playback is cleared or ends
    playback.cleared();
    expect(await settledBy(cut)).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it("settles, at a recheck, the waits whose stop now holds; the rest keep waiting, on the one timer", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    playback.queued(5000, "model");
    let closed = false;
    const stops = playback.playedOut(() => closed);
    const plays = playback.playedOut(() => false);
    playback.recheck();
    expect(await settledBy(stops)).toBe(false);
    closed = true;
    playback.recheck();
    expect(await settledBy(stops)).toBe(true);
    expect(await settledBy(plays)).toBe(false);
    expect(clock.pending()).toBe(1);
    await clock.advance(5000);
    expect(await settledBy(plays)).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it("returns at once when nothing is pending, or when already stopped", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    expect(await settledBy(playback.playedOut(() => false, new AbortController().signal))).toBe(true);
    playback.queued(1000, "model");
    expect(await settledBy(playback.playedOut(() => true, new AbortController().signal))).toBe(true);
    expect(clock.pending()).toBe(0);
  });
});
