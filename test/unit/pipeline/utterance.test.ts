import { describe, expect, it } from "vitest";
import { virtualClock, type Clock } from "../../../src/clock.js";
import type { EventBody } from "../../../src/events.js";
import { MANUAL_FINAL_WAIT_MS, SPEECH_IDLE_WATCHDOG_MS, Utterances, type UtteranceSettings } from "../../../src/pipeline/utterance.js";

function utterances(settings: Partial<UtteranceSettings> = {}, held = false, acknowledged: readonly string[] = []) {
  const clock = virtualClock();
  let timersSet = 0;
  const counted: Clock = { ...clock, setTimeout: (fn, ms) => (timersSet++, clock.setTimeout(fn, ms)) };
  const events: EventBody[] = [];
  const turns: { text: string; endedAt: number; startedAt: number }[] = [];
  const calls = { finalize: 0, opened: 0, dropped: 0, quiet: 0 };
  const tracker = new Utterances({
    clock: counted,
    settings: { detection: "auto", minSilenceMs: 300, maxSilenceMs: 1200, ...settings },
    emit: (e) => events.push(e),
    finalize: () => (calls.finalize += 1),
    opened: () => (calls.opened += 1),
    holdStart: () => held,
    dropped: () => (calls.dropped += 1),
    ended: (turn) => turns.push(turn),
    acknowledgement: (text) => acknowledged.includes(text),
    quiet: () => (calls.quiet += 1),
  });
  return { clock, events, turns, calls, tracker, types: () => events.map((e) => e.type), timersSet: () => timersSet };
}

describe("utterances", () => {
  it("a VAD end waits minSilenceMs after a final, then ends the turn with its words and timing", async () => {
    const { clock, tracker, turns, calls, types } = utterances();
    tracker.vad("start");
    const startedAt = clock.now();
    await clock.advance(500);
    tracker.touch().transcript.final("book a table");
    const endedAt = clock.now();
    tracker.vad("end");
    expect(calls.finalize).toBe(1);
    await clock.advance(299);
    expect(turns).toEqual([]);
    await clock.advance(1);
    expect(turns).toEqual([{ text: "book a table", endedAt, startedAt }]);
    expect(types()).toEqual(["speech.started", "speech.stopped"]);
    expect(calls).toMatchObject({ opened: 1, dropped: 1 });
  });

  it("without a final, the VAD end waits up to maxSilenceMs", async () => {
    const { clock, tracker, turns } = utterances();
    tracker.vad("start");
    tracker.touch().transcript.partial("maybe");
    tracker.vad("end");
    await clock.advance(1199);
    expect(turns).toEqual([]);
    await clock.advance(1);
    expect(turns.map((t) => t.text)).toEqual(["maybe"]);
  });

  it("holds speech.started while the agent is heard, and releases it once", () => {
    const { tracker, types } = utterances({}, true);
    const utterance = tracker.touch();
    expect(types()).toEqual([]);
    tracker.release(utterance);
    tracker.release(utterance);
    expect(types()).toEqual(["speech.started"]);
  });

  it("a word limit ends the turn at once with user-turn.exceeded", () => {
    const { tracker, turns, events } = utterances({ userTurnLimit: { maxWords: 3 } });
    const utterance = tracker.touch();
    utterance.transcript.partial("one two three four");
    tracker.checkLimit(utterance);
    expect(events).toContainEqual({ type: "user-turn.exceeded", limit: "words", words: 4, durationMs: 0 });
    expect(turns.map((t) => t.text)).toEqual(["one two three four"]);
  });

  it("push-to-talk: commit waits for the final (or MANUAL_FINAL_WAIT_MS); silence while holding ends nothing", async () => {
    const { clock, tracker, turns, calls } = utterances({ detection: "manual" });
    tracker.manual("start");
    tracker.current?.transcript.partial("hold");
    await clock.advance(SPEECH_IDLE_WATCHDOG_MS * 2);
    expect(tracker.current).toBeDefined();
    expect(calls.quiet).toBe(0);
    tracker.manual("commit");
    expect(calls.finalize).toBe(1);
    tracker.current?.transcript.final("hold on");
    expect(tracker.finalArrived()).toBe(true);
    expect(turns.map((t) => t.text)).toEqual(["hold on"]);
    tracker.manual("start");
    tracker.current?.transcript.partial("again");
    tracker.manual("commit");
    await clock.advance(MANUAL_FINAL_WAIT_MS);
    expect(turns.map((t) => t.text)).toEqual(["hold on", "again"]);
    tracker.vad("end");
    expect(calls.finalize).toBe(2);
  });

  it("the watchdog reports a quiet utterance with automatic detection; clear drops it silently as a turn", async () => {
    const { clock, tracker, calls, turns, types } = utterances();
    tracker.touch();
    await clock.advance(SPEECH_IDLE_WATCHDOG_MS);
    expect(calls.quiet).toBe(1);
    tracker.drop();
    expect(types()).toEqual(["speech.started", "speech.stopped"]);
    expect(turns).toEqual([]);
  });
});

describe("utterances: the watchdog", () => {
  it("is one timer that every partial moves, not a timer per partial", async () => {
    const { clock, tracker, calls, timersSet } = utterances();
    // 3 s of partials every 50 ms (an STT's interim results).
    for (let i = 0; i < 60; i++) {
      tracker.touch().transcript.partial(`word ${i}`);
      await clock.advance(50);
    }
    const lastTouch = clock.now() - 50;
    expect(timersSet()).toBe(1);
    await clock.advance(lastTouch + SPEECH_IDLE_WATCHDOG_MS - clock.now() - 1);
    expect(calls.quiet).toBe(0);
    await clock.advance(1);
    expect(calls.quiet).toBe(1);
    // The first timer, then one for the rest of the wait from the last partial.
    expect(timersSet()).toBe(2);
    expect(clock.pending()).toBe(0);
  });
});

describe("utterances: a held acknowledgement", () => {
  it("ends silently: no speech.started, no speech.stopped, no turn", () => {
    const { tracker, turns, types, calls } = utterances({}, true, ["uh-huh"]);
    const utterance = tracker.touch();
    utterance.transcript.final("uh-huh");
    tracker.end();
    expect(turns).toEqual([]);
    expect(types()).toEqual([]);
    expect(calls.dropped).toBe(1);
    expect(tracker.current).toBeUndefined();
  });

  it("is asked about only while held: a released (or never held) one is a turn", () => {
    const held = utterances({}, true, ["uh-huh"]);
    const utterance = held.tracker.touch();
    utterance.transcript.final("uh-huh");
    held.tracker.release(utterance);
    held.tracker.end();
    expect(held.turns.map((t) => t.text)).toEqual(["uh-huh"]);
    const open = utterances({}, false, ["uh-huh"]);
    open.tracker.touch().transcript.final("uh-huh");
    open.tracker.end();
    expect(open.turns.map((t) => t.text)).toEqual(["uh-huh"]);
  });
});
