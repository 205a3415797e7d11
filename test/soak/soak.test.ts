// The soak of bench/soak/run.ts, shortened for CI: 40 sessions of every kind (text, pipeline, s2s,
// phone) against one gateway process for 60 s, churned all along. `npm run soak` is the same code
// for 10 minutes at 100 sessions, with its figures in docs/reliability.md.
import { afterAll, describe, expect, it } from "vitest";
import { HANDLE_SLACK, runSoak, type SoakResult } from "../../bench/soak/run.js";
import { KINDS } from "../../bench/soak/protocol.js";

const SECONDS = 60;
/** What 2 shared cores hold with room to spare: about 0.3 cores for the gateway, a little more for the callers and fakes. */
const SESSIONS = 40;

/**
 * Memory slopes after the warm-up (MiB per minute, least squares over ~24 samples, each taken after
 * a full GC). At 40 sessions the run churns about 230 sessions and 1 900 turns a minute, so a leak
 * of anything per session or per turn adds up fast. RSS moves in steps of ±15 MiB when V8 or the
 * allocator gives pages back, which over 48 s reads as a steep slope either way (clean runs here:
 * −32 to −20 MiB/min); the heap after a GC is steady (0 to +3 MiB/min, resume records expiring
 * included). Calibration: the
 * gateway process made to keep 64 KiB of Buffer and 12 KiB of JS array per pipeline turn (~630 a
 * minute, so ~21 KiB and ~4 KiB per turn of all kinds) read +38.7 MiB/min of RSS and +8.4 MiB/min
 * of heap. So the heap bound catches JS leaks from about 3 KiB per turn (or 30 KiB per session),
 * and the RSS bound, set above the step noise, native ones (socket buffers, WASM resampler state)
 * from about 25 KiB per turn (or 200 KiB per session: more than a live session holds).
 */
const RSS_SLOPE_BOUND_MIB_PER_MIN = 48;
const HEAP_SLOPE_BOUND_MIB_PER_MIN = 6;

describe(`soak: ${SESSIONS} sessions for ${SECONDS} s against one gateway process`, () => {
  const stop = new AbortController();
  // A failure or a timeout still kills the gateway process (it also exits when this worker does).
  afterAll(() => stop.abort());
  let result: SoakResult | undefined;

  it("answers every session, reports no unexpected error, leaks no handle and does not grow", { timeout: 100_000 }, async () => {
    result = await runSoak({ seconds: SECONDS, sessions: SESSIONS, progress: false, signal: stop.signal });
    const r = result;
    // The list itself, so a failure says what went wrong (gateway log lines, stalls, stray errors).
    expect(r.errors).toEqual([]);
    expect(r.stalls).toBe(0);
    // Every session answered at least one turn, every kind kept answering, sessions were churned.
    expect(r.turnsPerSession.length).toBe(r.opened);
    expect(r.turnsPerSession[0]).toBeGreaterThan(0);
    for (const kind of KINDS) expect(r.turns[kind], `${kind} turns`).toBeGreaterThan(r.mix[kind] * 2);
    expect(r.churned).toBeGreaterThanOrEqual(SESSIONS);
    expect(r.bargeIns).toBeGreaterThan(0);
    expect(r.toolCalls).toBeGreaterThan(0);
    // After every session closed: none live, and the handles are back (a count, not a time).
    expect(r.after.sessions).toEqual({ text: 0, pipeline: 0, s2s: 0 });
    expect(r.after.handles).toBeLessThanOrEqual(r.baseline.handles + HANDLE_SLACK);
    expect(r.samples.filter((s) => s.t >= r.warmUpS).length).toBeGreaterThanOrEqual(15);
    expect(r.slopes.rssMiBPerMin).toBeLessThan(RSS_SLOPE_BOUND_MIB_PER_MIN);
    expect(r.slopes.heapMiBPerMin).toBeLessThan(HEAP_SLOPE_BOUND_MIB_PER_MIN);
  });
});
