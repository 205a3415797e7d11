import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import type { EventBody } from "../../../src/events.js";
import { silentLogger } from "../../../src/log.js";
import { ReplyGate, type SpeechKind } from "../../../src/pipeline/reply-gate.js";
import { FakeTts } from "../../../src/testing/fake-speech.js";
import { PlaybackClock } from "../../../src/turn/playback-clock.js";

async function gate(releaseAfterMs = 0) {
  const clock = virtualClock();
  const tts = new FakeTts(clock, { msPerChar: 10 });
  const session = await tts.open();
  const playback = new PlaybackClock(clock);
  const out: { ms: number; at: number }[] = [];
  const sent: SpeechKind[] = [];
  const events: EventBody[] = [];
  const state = { current: true };
  const replyGate = new ReplyGate(
    {
      clock,
      log: silentLogger,
      tts: session,
      playback,
      emit: (e) => events.push(e),
      audio: (_pcm, ms) => out.push({ ms, at: clock.now() }),
      current: () => state.current,
      closed: () => false,
      sent: (kind) => sent.push(kind),
    },
    clock.now() + releaseAfterMs,
  );
  return { clock, tts, playback, out, sent, events, state, replyGate, start: clock.now() };
}

describe("the reply gate", () => {
  it("holds audio until the floor, then sends it in order; model audio counts towards the heard cursor", async () => {
    const { clock, replyGate, out, sent, playback, start } = await gate(500);
    const spoken = replyGate.speak("hello there", "model");
    await clock.advance(200);
    expect(out).toEqual([]);
    await clock.advance(300);
    expect(out.length).toBeGreaterThan(0);
    expect(out[0]?.at).toBe(start + 500);
    expect(playback.pendingMs).toBeGreaterThan(0);
    await clock.advance(500);
    await spoken;
    expect(sent.every((k) => k === "model")).toBe(true);
    expect(replyGate.firstAudioAt).toBe(start + 500);
    await clock.advance(2000);
    expect(replyGate.heard(playback.heardModelMs(0))).toBe("hello there");
  });

  it("flush sends held audio before the floor", async () => {
    const { clock, replyGate, out } = await gate(10_000);
    void replyGate.speak("hi", "filler");
    await clock.advance(100);
    expect(out).toEqual([]);
    replyGate.flush();
    expect(out.length).toBeGreaterThan(0);
    expect(replyGate.firstAudioAt).toBeUndefined();
  });

  it("close drops what is held, cancels the streams and ends the drain; a reply that lost the floor sends nothing", async () => {
    const { clock, replyGate, out, tts, state } = await gate(1000);
    const spoken = replyGate.speak("a long sentence to cut", "model");
    await clock.advance(100);
    replyGate.close();
    await spoken;
    expect(replyGate.open).toBe(false);
    expect(replyGate.empty).toBe(true);
    await clock.advance(5000);
    expect(out).toEqual([]);
    expect(tts.cancelled.length).toBeGreaterThan(0);
    const other = await gate();
    other.state.current = false;
    void other.replyGate.speak("late", "model");
    await other.clock.advance(1000);
    expect(other.out).toEqual([]);
    expect(state.current).toBe(true);
  });
});
