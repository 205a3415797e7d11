import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { CLOSE, GatewayError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/log.js";
import { openWithin } from "../../../src/session/start-deadline.js";

/** A start deadline of 100 ms over a virtual clock; `hangUp()` is the client hanging up. */
function deadline() {
  const clock = virtualClock();
  let hangUp: () => void = () => {};
  const hungUp = new Promise<void>((resolve) => {
    hangUp = resolve;
  });
  return { clock, hangUp, deadline: { clock, log: silentLogger, timeoutMs: 100, hungUp } };
}

/** An open that waits until its signal aborts, then rejects with the abort's reason. */
function openUntilAborted(seen: AbortSignal[]) {
  return (signal: AbortSignal) =>
    new Promise<void>((_, reject) => {
      seen.push(signal);
      signal.addEventListener("abort", () => reject(signal.reason as Error));
    });
}

describe("opening within the start deadline", () => {
  it("resolves to no failure when the open finishes in time, and leaves no timer behind", async () => {
    const { clock, deadline: within } = deadline();
    const seen: AbortSignal[] = [];
    const opened = openWithin(within, async (signal) => {
      seen.push(signal);
      await clock.sleep(99);
    });
    await clock.advance(99);
    expect(await opened).toBeUndefined();
    expect(clock.pending()).toBe(0);
    expect(seen[0]?.aborted).toBe(false);
  });

  it("at the deadline: a fatal internal error, and the open's signal aborted so its handshakes stop", async () => {
    const { clock, deadline: within } = deadline();
    const seen: AbortSignal[] = [];
    const failure = openWithin(within, openUntilAborted(seen));
    await clock.advance(100);
    expect(await failure).toMatchObject({ code: "internal", fatal: true, closeCode: CLOSE.internal, message: "providers did not open within 100 ms" });
    expect(seen[0]?.aborted).toBe(true);
  });

  it("a client hanging up during the open aborts it; the failure ends the session with 1011", async () => {
    const { clock, hangUp, deadline: within } = deadline();
    const seen: AbortSignal[] = [];
    const failure = openWithin(within, openUntilAborted(seen));
    hangUp();
    await clock.advance(0);
    expect(seen[0]?.reason).toMatchObject({ code: "connection", message: "the client hung up during start" });
    expect(await failure).toMatchObject({ code: "connection", fatal: true, closeCode: CLOSE.internal, message: "the client hung up during start" });
    expect(clock.pending()).toBe(0);
  });

  it("an open that throws: a fatal error naming the cause, or the thrown gateway error as it is when already fatal", async () => {
    const { deadline: within } = deadline();
    const thrown = new Error("bad key");
    const plain = await openWithin(within, () => Promise.reject(thrown));
    expect(plain).toMatchObject({ code: "internal", fatal: true, closeCode: CLOSE.internal, message: "session could not start: bad key", cause: thrown });
    const refused = new GatewayError("auth", "the key was refused", { fatal: true });
    expect(await openWithin(within, () => Promise.reject(refused))).toBe(refused);
  });
});
