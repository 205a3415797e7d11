import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { DEAD_AIR_LINES, DeadAirCover, MAX_DEAD_AIR_BACKOFF_MS, MAX_NUDGES_IN_A_ROW, Nudger } from "../../../src/pipeline/silence.js";

describe("dead air", () => {
  it("covers measured silence with the declarative lines, doubling the wait up to the cap", async () => {
    const clock = virtualClock();
    const said: { line: string; at: number }[] = [];
    const state = { active: true, quiet: true, covered: false };
    const start = clock.now();
    const cover = new DeadAirCover(
      {
        clock,
        log: silentLogger,
        active: () => state.active,
        pendingMs: () => 0,
        quiet: () => state.quiet,
        covered: () => state.covered,
        speak: (line) => {
          said.push({ line, at: clock.now() - start });
          cover.arm();
        },
      },
      1500,
    );
    cover.arm();
    await clock.advance(1500 + 3000 + 6000 + MAX_DEAD_AIR_BACKOFF_MS);
    expect(said).toEqual([
      { line: DEAD_AIR_LINES[0], at: 1500 },
      { line: DEAD_AIR_LINES[1], at: 4500 },
      { line: DEAD_AIR_LINES[2], at: 10_500 },
      { line: DEAD_AIR_LINES[3], at: 18_500 },
    ]);
    state.covered = true;
    await clock.advance(60_000);
    expect(said).toHaveLength(4);
    state.active = false;
    state.covered = false;
    await clock.advance(60_000);
    expect(said).toHaveLength(4);
  });

  it("a cover of 0 never speaks", async () => {
    const clock = virtualClock();
    let spoken = 0;
    const cover = new DeadAirCover({ clock, log: silentLogger, active: () => true, pendingMs: () => 0, quiet: () => true, covered: () => false, speak: () => (spoken += 1) }, 0);
    cover.arm();
    await clock.advance(60_000);
    expect(spoken).toBe(0);
  });
});

describe("nudges", () => {
  it("nudge after the silence, waiting while engaged, at most MAX_NUDGES_IN_A_ROW until the count resets", async () => {
    const clock = virtualClock();
    const state = { engaged: false, nudges: 0 };
    const nudger: Nudger = new Nudger({
      clock,
      afterMs: 5000,
      pendingMs: () => 0,
      engaged: () => state.engaged,
      nudge: () => {
        state.nudges += 1;
        nudger.arm();
      },
    });
    state.engaged = true;
    nudger.arm();
    await clock.advance(20_000);
    expect(state.nudges).toBe(0);
    state.engaged = false;
    await clock.advance(60_000);
    expect(state.nudges).toBe(MAX_NUDGES_IN_A_ROW);
    nudger.resetCount();
    nudger.arm();
    await clock.advance(5000);
    expect(state.nudges).toBe(MAX_NUDGES_IN_A_ROW + 1);
    nudger.cancel();
    await clock.advance(60_000);
    expect(state.nudges).toBe(MAX_NUDGES_IN_A_ROW + 1);
  });
});
