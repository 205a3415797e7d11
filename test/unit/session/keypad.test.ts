import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { DEFAULTS, type ResolvedConfig } from "../../../src/manifest/index.js";
import type { ToolInvocation } from "../../../src/pipeline/tool-port.js";
import { MAX_QUEUED_TURNS } from "../../../src/session/conversation.js";
import { Keypad } from "../../../src/session/keypad.js";

/** A keypad over a virtual clock, recording the turns and tool calls its entries became. */
function keypad(dtmf: ResolvedConfig["dtmf"]) {
  const clock = virtualClock();
  const state = { live: true, queued: 0, activity: 0 };
  const turns: string[] = [];
  const calls: ToolInvocation[] = [];
  const pad = new Keypad({
    clock,
    log: silentLogger,
    dtmfSetting: dtmf,
    live: () => state.live,
    activity: () => state.activity++,
    queuedTurns: () => state.queued,
    userText: (text) => turns.push(text),
    callTool: (call) => calls.push(call),
  });
  return { clock, pad, state, turns, calls };
}

describe("the caller's keypad", () => {
  it("turns an entry into a typed turn; every key is activity", async () => {
    const { clock, pad, state, turns } = keypad("text");
    pad.digit("1");
    pad.digit("2");
    await clock.advance(DEFAULTS.dtmfInterDigitMs);
    expect(turns).toEqual(["The caller pressed 12"]);
    pad.digit("9");
    pad.digit("#");
    expect(turns).toEqual(["The caller pressed 12", "The caller pressed 9"]);
    expect(state.activity).toBe(4);
  });

  it("drops a keypad turn when too many turns are waiting, as typed ones are", () => {
    const { pad, state, turns } = keypad("text");
    state.queued = MAX_QUEUED_TURNS;
    pad.digit("#");
    expect(turns).toEqual([]);
    state.queued = MAX_QUEUED_TURNS - 1;
    pad.digit("#");
    expect(turns).toEqual(["The caller pressed #"]);
  });

  it("calls dtmf.tool once per entry, numbering the calls, and the session's end cancels them", () => {
    const { pad, turns, calls } = keypad({ tool: "enter_pin" });
    for (const digit of ["4", "2", "#", "7", "#"]) pad.digit(digit);
    expect(turns).toEqual([]);
    expect(calls.map(({ toolCallId, toolName, args }) => ({ toolCallId, toolName, args }))).toEqual([
      { toolCallId: "dtmf_1", toolName: "enter_pin", args: { digits: "42" } },
      { toolCallId: "dtmf_2", toolName: "enter_pin", args: { digits: "7" } },
    ]);
    expect(calls[0]?.signal.aborted).toBe(false);
    pad.close();
    expect(calls.every((call) => call.signal.aborted)).toBe(true);
  });

  it("ignores keys while the session is not live, and drops an entry the session's end cut short", async () => {
    const { clock, pad, state, turns } = keypad("text");
    state.live = false;
    pad.digit("5");
    pad.digit("#");
    expect([turns, state.activity]).toEqual([[], 0]);
    state.live = true;
    pad.digit("6");
    pad.close();
    await clock.advance(DEFAULTS.dtmfInterDigitMs);
    expect(turns).toEqual([]);
    expect(clock.pending()).toBe(0);
  });
});
