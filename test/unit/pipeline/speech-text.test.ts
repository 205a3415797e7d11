import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { heardModelText, heardOf, snapToWord, type SpokenSegment } from "../../../src/pipeline/heard-cursor.js";
import { PlaybackClock } from "../../../src/turn/playback-clock.js";
import { recordHeard } from "../../../src/pipeline/record-heard.js";
import { SentenceBatcher, lastSentenceEnd } from "../../../src/pipeline/sentence-batcher.js";

describe("SentenceBatcher", () => {
  it("sends the first chunk at once, then whole sentences, never splitting on commas", () => {
    const sent: string[] = [];
    const batcher = new SentenceBatcher((text) => sent.push(text));
    for (const delta of ["Sure", ", your order", " shipped on Friday, and", " it arrives Tuesday. It", " comes by courier! Any", "thing else"]) batcher.push(delta);
    expect(sent).toEqual(["Sure", ", your order shipped on Friday, and it arrives Tuesday. ", "It comes by courier! "]);
    batcher.flush();
    expect(sent.at(-1)).toBe("Anything else");
    batcher.push("Next segment");
    expect(sent.at(-1)).toBe("Next segment");
  });

  it("finds sentence ends followed by whitespace, including quotes and ellipses", () => {
    expect(lastSentenceEnd('He said "hi." Then')).toBe(14);
    expect(lastSentenceEnd("Wait… okay")).toBe(6);
    expect(lastSentenceEnd("3.5 dollars")).toBe(0);
  });
});

describe("the heard cursor", () => {
  const segment: SpokenSegment = { text: "Your order shipped on Friday.", kind: "model", audioMs: 2900, startMs: 0, words: [] };

  it("maps heard ms proportionally, snapping back to a word boundary", () => {
    expect(heardOf(segment, 0)).toBe("");
    expect(heardOf(segment, 1000)).toBe("Your order");
    expect(heardOf(segment, 5000)).toBe("Your order shipped on Friday.");
    expect(snapToWord("Your order shipped", 7)).toBe("Your");
    expect(snapToWord("Your order shipped", 10)).toBe("Your order");
  });

  it("uses word timings when the TTS gives them", () => {
    const timed: SpokenSegment = {
      ...segment,
      words: [
        { word: "Your", startMs: 0, endMs: 300 },
        { word: "order", startMs: 300, endMs: 700 },
        { word: "shipped", startMs: 700, endMs: 2500 },
      ],
    };
    expect(heardOf(timed, 800)).toBe("Your order");
    expect(heardModelText([timed, { text: "One moment.", kind: "filler", audioMs: 500, startMs: 0, words: [] }], 800)).toBe("Your order");
  });

  it("the playback clock: audio plays in real time from when it is queued; reports only push it later", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    playback.queued(1000, "model");
    await clock.advance(400);
    expect(playback.playedMs).toBe(400);
    expect(playback.heardModelMs(150)).toBe(250);
    playback.report(900);
    expect(playback.pendingMs).toBe(900);
    playback.report(100);
    expect(playback.pendingMs).toBe(900);
    await clock.advance(900);
    expect(playback.modelAudible).toBe(true);
    await clock.advance(800);
    expect(playback.modelAudible).toBe(false);
  });
});

describe("the playback clock's start of a reply", () => {
  it("starts when the audio is queued, or after what is still playing, and later when the listener says so", async () => {
    const clock = virtualClock(0);
    const playback = new PlaybackClock(clock);
    playback.queued(500, "model");
    expect(playback.startedAt).toBe(0);
    // The listener (a carrier's marks, a client's report) still holds 1.5 s at 100 ms: this reply cannot start before 1100.
    await clock.advance(100);
    playback.report(1500);
    expect(playback.startedAt).toBe(1100);
    // A later report that is consistent with that changes nothing; less buffered than the reply is no bound at all.
    await clock.advance(1200);
    playback.report(300);
    expect(playback.startedAt).toBe(1100);
    // The next reply queued while this one still plays starts where it ends.
    playback.resetTimeline();
    expect(playback.startedAt).toBeUndefined();
    playback.queued(200, "model");
    expect(playback.startedAt).toBe(1600);
  });
});

describe("recordHeard", () => {
  const call = (id: string): ModelMessage => ({ role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool-call", toolCallId: id, toolName: "lookup", input: {} }] });
  const result = (id: string): ModelMessage => ({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "lookup", output: { type: "text", value: "shipped" } }] });

  it("keeps tool steps whole, cuts text after the heard words, and marks the cut", () => {
    const out = recordHeard([call("c1"), result("c1")], "It shipped on Friday and arrives Tuesday.", 5);
    expect(out).toEqual([
      { role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: {} }] },
      result("c1"),
      { role: "assistant", content: [{ type: "text", text: "It shipped [interrupted]" }] },
    ]);
  });

  it("records no assistant text when nothing was heard, but keeps the tool call and its result", () => {
    const out = recordHeard([call("c1"), result("c1")], "It shipped.", 0);
    expect(out).toEqual([{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: {} }] }, result("c1")]);
  });
});
