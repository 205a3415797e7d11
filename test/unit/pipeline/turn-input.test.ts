// What a reply answers: the continuation merge (an utterance joining the user turn before it).
// test/unit/pipeline/voice-loop.test.ts ("preemptive generation and continuation") drives it
// through a whole session.
import { describe, expect, it } from "vitest";
import { MAX_MERGED_TURN_CHARS, mergeContinuation, type Speculation, type TurnInput } from "../../../src/pipeline/turn-input.js";

describe("mergeContinuation", () => {
  type UserInput = Extract<TurnInput, { kind: "user" }>;
  const user = (text: string, speculation?: Speculation): UserInput => ({ kind: "user", text, endedAt: 900, committedAt: 1000, startedAt: 0, ...(speculation === undefined ? {} : { speculation }) });

  it("an utterance started within the window joins the turn, whose speculation no longer fits its words", () => {
    const controller = new AbortController();
    const previous = user("hi", { forText: "hi", controller, result: new Promise(() => undefined) });
    expect(mergeContinuation(previous, "and my friend says hi", 2500, 1500)).toBe(true);
    expect(previous.text).toBe("hi and my friend says hi");
    expect(previous.speculation).toBeUndefined();
    expect((controller.signal.reason as Error).message).toBe("merged");
  });

  it("not after the window, not with the window off, and not past the merged-turn bound", () => {
    expect(mergeContinuation(user("hi"), "later", 2501, 1500)).toBe(false);
    expect(mergeContinuation(user("hi"), "now", 1000, 0)).toBe(false);
    const long = user("x".repeat(MAX_MERGED_TURN_CHARS - 3));
    expect(mergeContinuation(long, "yes", 1100, 1500)).toBe(false);
    expect(mergeContinuation(long, "ye", 1100, 1500)).toBe(true);
    expect(long.text).toHaveLength(MAX_MERGED_TURN_CHARS);
  });
});
