import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../../src/clock.js";
import { AgentTrack } from "../../../../src/session/recording/agent-track.js";

const RATE = 8000;
/** `ms` of agent audio at 8 kHz, every sample `value`. */
const audio = (ms: number, value: number): Int16Array => new Int16Array((RATE * ms) / 1000).fill(value);

function track() {
  const clock = virtualClock();
  const placed: { at: number; length: number; value: number }[] = [];
  const t = new AgentTrack(clock, clock.now(), RATE, (offset, samples) => placed.push({ at: offset / (RATE / 1000), length: samples.length / (RATE / 1000), value: samples[0] ?? 0 }));
  return { clock, t, placed };
}

describe("the agent channel is placed where it played", () => {
  it("audio plays from when it is sent, back to back with what is queued; placed once played", async () => {
    const { clock, t, placed } = track();
    await clock.advance(100);
    t.queued(audio(200, 1));
    t.queued(audio(200, 2));
    expect(placed).toEqual([]);
    await clock.advance(450);
    t.report(0);
    expect(placed).toEqual([
      { at: 100, length: 200, value: 1 },
      { at: 300, length: 200, value: 2 },
    ]);
    // After a gap, the next audio starts when it is sent.
    t.queued(audio(100, 3));
    await clock.advance(200);
    t.report(0);
    expect(placed.at(-1)).toEqual({ at: 550, length: 100, value: 3 });
    expect(t.mark()).toEqual({ startMs: 100, endMs: 650 });
  });

  it("a barge-in (cleared) cuts the audio where the caller stopped hearing it; what never played is dropped", async () => {
    const { clock, t, placed } = track();
    t.queued(audio(1000, 1));
    t.queued(audio(1000, 2));
    await clock.advance(1300);
    t.cleared();
    expect(placed).toEqual([
      { at: 0, length: 1000, value: 1 },
      { at: 1000, length: 300, value: 2 },
    ]);
    expect(t.mark()).toEqual({ startMs: 0, endMs: 1300 });
    // The next reply starts on a fresh playback line.
    await clock.advance(200);
    t.queued(audio(100, 3));
    t.cleared();
    await clock.advance(1000);
    t.report(0);
    expect(placed.at(-1)).toEqual({ at: 1000, length: 300, value: 2 });
  });

  it("a listener that buffers more than estimated (a playback report) moves audio not yet started later", async () => {
    const { clock, t, placed } = track();
    t.queued(audio(200, 1));
    t.queued(audio(200, 2));
    await clock.advance(100);
    // 100 ms in, the client says 500 ms are still to play: 200 ms more than the estimate.
    t.report(500);
    await clock.advance(1000);
    t.report(0);
    expect(placed).toEqual([
      { at: 0, length: 200, value: 1 },
      { at: 400, length: 200, value: 2 },
    ]);
    expect(t.mark()).toEqual({ startMs: 0, endMs: 600 });
  });

  it("a reply's span starts where its first audio played, after a report moved it", async () => {
    const { clock, t } = track();
    t.queued(audio(300, 1));
    await clock.advance(400);
    t.report(0);
    expect(t.mark()).toEqual({ startMs: 0, endMs: 300 });
    // The next reply is queued behind nothing, then the listener says it is still busy for 500 ms.
    t.queued(audio(200, 2));
    t.report(700);
    expect(t.mark()).toEqual({ startMs: 900, endMs: 1100 });
  });
});
