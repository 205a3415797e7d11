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
});
