import { describe, expect, it } from "vitest";
import { TurnState, type TurnPhase } from "../../../src/turn/turn-state.js";

describe("the turn state", () => {
  it("walks a barge-in: idle → listening → thinking → speaking → interrupted → listening → idle", () => {
    const seen: [TurnPhase, TurnPhase][] = [];
    const state = new TurnState((from, to) => seen.push([from, to]));
    for (const phase of ["listening", "thinking", "speaking", "interrupted", "listening", "idle"] as const) state.to(phase);
    expect(seen.map(([, to]) => to)).toEqual(["listening", "thinking", "speaking", "interrupted", "listening", "idle"]);
    expect(state.phase).toBe("idle");
  });

  it("says when a reply is in flight, ignores staying put and refuses a transition no one planned", () => {
    const state = new TurnState();
    expect(state.replying).toBe(false);
    state.to("thinking");
    state.to("thinking");
    expect(state.replying).toBe(true);
    state.to("interrupted");
    expect(state.replying).toBe(true);
    expect(() => state.to("speaking")).toThrow(/interrupted → speaking/);
    state.to("idle");
    expect(() => state.to("speaking")).toThrow(/idle → speaking/);
  });
});
