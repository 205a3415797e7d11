import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { DEFAULTS } from "../../../src/manifest/index.js";
import { CALL_LIMIT_NOTICE_MS, CallEnding } from "../../../src/session/call-ending.js";

/** A call ending over a virtual clock, recording what it said and why it closed (closing ends the call: its timers stop). */
function callEnding() {
  const clock = virtualClock();
  const said: string[] = [];
  const closed: string[] = [];
  const state = { live: true };
  const ending: CallEnding = new CallEnding({
    clock,
    log: silentLogger,
    live: () => state.live,
    say: (text) => said.push(text),
    close: (reason) => {
      closed.push(reason);
      ending.stop();
    },
  });
  return { clock, ending, said, closed, state };
}

describe("the call's ending", () => {
  it("ends nothing when a reply settles and no ending was asked for", () => {
    const { ending, closed } = callEnding();
    ending.replySettled();
    expect(closed).toEqual([]);
  });

  it("end_call: the call ends when the current reply has settled, not before", () => {
    const { ending, closed, said } = callEnding();
    ending.afterReply("call ended by the agent");
    expect(closed).toEqual([]);
    ending.replySettled();
    expect(closed).toEqual(["call ended by the agent"]);
    expect(said).toEqual([]);
  });

  it("the drain's farewell is spoken, and the call ends once it has been heard", () => {
    const { ending, closed, said } = callEnding();
    ending.farewell("We are closing now.");
    expect(said).toEqual(["We are closing now."]);
    expect(closed).toEqual([]);
    ending.replySettled();
    expect(closed).toEqual(["gateway shutting down"]);
  });

  it("the call limit speaks its notice when due and ends the call once it has been heard", async () => {
    const { clock, ending, closed, said } = callEnding();
    ending.armLimit(60_000);
    await clock.advance(59_999);
    expect(said).toEqual([]);
    await clock.advance(1);
    expect(said).toEqual([DEFAULTS.callLimitPhrase]);
    await clock.advance(1000);
    ending.replySettled();
    expect(closed).toEqual(["call duration limit"]);
    expect(clock.pending()).toBe(0);
  });

  it("a notice that never finishes still ends the call CALL_LIMIT_NOTICE_MS after it was asked for", async () => {
    const { clock, ending, closed } = callEnding();
    ending.armLimit(10_000);
    await clock.advance(10_000 + CALL_LIMIT_NOTICE_MS - 1);
    expect(closed).toEqual([]);
    await clock.advance(1);
    expect(closed).toEqual(["call duration limit"]);
  });

  it("arms no limit at 0, does nothing when the limit falls due on a session no longer live, and stops with the session", async () => {
    const unlimited = callEnding();
    unlimited.ending.armLimit(0);
    expect(unlimited.clock.pending()).toBe(0);

    const ended = callEnding();
    ended.ending.armLimit(1000);
    ended.state.live = false;
    await ended.clock.advance(1000 + CALL_LIMIT_NOTICE_MS);
    expect([ended.said, ended.closed]).toEqual([[], []]);

    const stopped = callEnding();
    stopped.ending.armLimit(1000);
    stopped.ending.stop();
    expect(stopped.clock.pending()).toBe(0);
  });
});
