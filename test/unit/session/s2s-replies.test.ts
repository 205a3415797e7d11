import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { S2sReplies, turnLatencies } from "../../../src/session/s2s-replies.js";

describe("s2s replies", () => {
  it("times a reply to speech: end of speech → response started (endpoint) → first audio heard (voice to voice)", async () => {
    const clock = virtualClock();
    const replies = new S2sReplies(clock);
    replies.speechStopped(false);
    await clock.advance(300);
    const reply = replies.start("r1");
    expect(replies.current).toBe(reply);
    reply.firstAudioAt = clock.now() + 200;
    expect(turnLatencies(reply, clock.now() + 500)).toEqual({ endpointMs: 300, voiceToVoiceMs: 800 });
    // Nothing reports playback: the first audio leaving the gateway stands in.
    expect(turnLatencies(reply, undefined)).toEqual({ endpointMs: 300, voiceToVoiceMs: 500 });
    // The speech is answered once: the next response answers nothing.
    expect(turnLatencies(replies.start("r2"), undefined)).toEqual({});
  });

  it("dates nothing from an end of speech the service inferred", () => {
    const replies = new S2sReplies(virtualClock());
    replies.speechStopped(true);
    expect(replies.start("r1").speech).toBeUndefined();
  });

  it("hands the caller's speech on from a tool step to the response after its results", async () => {
    const clock = virtualClock();
    const replies = new S2sReplies(clock);
    replies.speechStopped(false);
    await clock.advance(100);
    const step = replies.start("step");
    expect(replies.done("step")).toBe(step);
    replies.ended(step, true);
    expect(replies.current).toBeUndefined();
    await clock.advance(400);
    const answer = replies.start("answer");
    expect(answer.speech).toBe(step.speech);
    answer.firstAudioAt = clock.now();
    expect(turnLatencies(answer, clock.now())).toEqual({ endpointMs: 100, voiceToVoiceMs: 500 });
  });

  it("finds a reply by its response until the service has finished it", () => {
    const replies = new S2sReplies(virtualClock());
    const reply = replies.start("r1");
    expect(replies.get("r1")).toBe(reply);
    expect(replies.done("r1")).toMatchObject({ responseId: "r1", done: true });
    expect(replies.get("r1")).toBeUndefined();
    expect(replies.done("r1")).toBeUndefined();
    expect(replies.current).toBe(reply);
    replies.ended(reply, false);
    expect(replies.inFlight).toBe(false);
  });

  it("stays in flight while the caller still hears a finished reply, and a barge-in cuts it and the one in flight", async () => {
    const clock = virtualClock();
    const replies = new S2sReplies(clock);
    const earlier = replies.start("earlier");
    replies.done("earlier");
    const heard = replies.hear(earlier, () => clock.sleep(1000));
    replies.ended(earlier, false);
    expect(replies.inFlight).toBe(true);
    const later = replies.start("later");
    expect(replies.interrupt()).toEqual({ playing: [earlier], current: later });
    expect([earlier.interrupted, later.interrupted]).toEqual([true, true]);
    expect(replies.current).toBeUndefined();
    expect(replies.inFlight).toBe(false);
    expect(replies.interrupt()).toEqual({ playing: [], current: undefined });
    await clock.advance(1000);
    await heard;
  });

  it("reports the reply in flight once, not also as playing, when it is cut while being heard", () => {
    const replies = new S2sReplies(virtualClock());
    const reply = replies.start("r1");
    void replies.hear(reply, () => new Promise<void>(() => {}));
    expect(replies.interrupt()).toEqual({ playing: [], current: reply });
  });
});
