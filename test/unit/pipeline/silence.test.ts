import { describe, expect, it } from "vitest";
import { virtualClock, type Clock } from "../../../src/clock.js";
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

describe("dead air: re-armed by every chunk of audio", () => {
  it("keeps one timer that the chunks move, and speaks coverMs after the audio sent has played", async () => {
    const clock = virtualClock();
    let timersSet = 0;
    const counted: Clock = { ...clock, setTimeout: (fn, ms) => (timersSet++, clock.setTimeout(fn, ms)) };
    /** Audio sent and not yet played (ms): each 20 ms chunk adds 20, real time plays it. */
    let playsUntil = clock.now();
    const said: number[] = [];
    const cover = new DeadAirCover(
      { clock: counted, log: silentLogger, active: () => true, pendingMs: () => Math.max(0, playsUntil - clock.now()), quiet: () => playsUntil <= clock.now(), covered: () => false, speak: () => said.push(clock.now()) },
      1500,
    );
    cover.arm();
    // 2 s of a reply's audio, a 20 ms chunk every 20 ms (as TTS streams it), each one re-arming.
    for (let i = 0; i < 100; i++) {
      playsUntil = Math.max(playsUntil, clock.now()) + 20;
      cover.arm();
      await clock.advance(20);
    }
    // The first wait ran out at 1.5 s and was set again for the rest: two timers for 101 arms.
    expect(timersSet).toBe(2);
    await clock.advance(playsUntil + 1500 - clock.now());
    expect(said).toEqual([playsUntil + 1500]);
    expect(timersSet).toBeLessThanOrEqual(3);
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
