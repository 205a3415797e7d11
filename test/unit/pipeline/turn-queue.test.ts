// The voice loop's turn queue on its own: inputs answered one at a time, in order.
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { TurnQueue } from "../../../src/pipeline/turn-queue.js";
import type { TurnInput } from "../../../src/pipeline/turn-input.js";

const user = (text: string): TurnInput => ({ kind: "user", text, endedAt: 0, startedAt: 0, committedAt: 0 });

function queue() {
  const answered: string[] = [];
  const pending: (() => void)[] = [];
  const turns = new TurnQueue((input) => {
    answered.push(input.kind === "user" ? input.text : input.kind);
    return new Promise<void>((resolve) => pending.push(resolve));
  }, silentLogger);
  /** Ends the reply in flight; the next one starts on a later microtask. */
  const finish = async (): Promise<void> => {
    pending.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { turns, answered, finish };
}

describe("TurnQueue", () => {
  it("answers one input at a time, in the order they came; only caller turns count as waiting turns", async () => {
    const { turns, answered, finish } = queue();
    turns.push({ kind: "say", text: "Hi.", record: true });
    turns.push(user("one"));
    turns.push({ kind: "nudge" });
    turns.push(user("two"));
    expect(answered).toEqual(["say"]);
    expect(turns.length).toBe(3);
    expect(turns.userTurns).toBe(2);
    expect(turns.lastUser()).toMatchObject({ text: "two" });
    await finish();
    expect(answered).toEqual(["say", "one"]);
    await finish();
    await finish();
    expect(answered).toEqual(["say", "one", "nudge", "two"]);
    expect(turns.length).toBe(0);
  });

  it("putBack puts a turn at the front; clear drops what waits, not the reply in flight", async () => {
    const { turns, answered, finish } = queue();
    turns.push(user("first"));
    turns.push(user("second"));
    turns.putBack(user("first, merged"));
    await finish();
    expect(answered).toEqual(["first", "first, merged"]);
    turns.clear();
    await finish();
    expect(answered).toEqual(["first", "first, merged"]);
    turns.push(user("third"));
    expect(answered).toEqual(["first", "first, merged", "third"]);
  });

  it("a reply that throws is logged and ends the run; the next push starts a new one", async () => {
    const errors: unknown[] = [];
    const log = { ...silentLogger, error: (fields: unknown) => void errors.push(fields) } as typeof silentLogger;
    const answered: string[] = [];
    const turns = new TurnQueue((input) => {
      answered.push(input.kind);
      return input.kind === "nudge" ? Promise.reject(new Error("broken")) : Promise.resolve();
    }, log);
    turns.push({ kind: "nudge" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toHaveLength(1);
    turns.push(user("after"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toEqual(["nudge", "user"]);
  });
});
