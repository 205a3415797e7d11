// The soak of bench/soak/run.ts, shortened for CI: 40 sessions of every kind (text, pipeline, s2s,
// phone) against one gateway process for 60 s, churned all along. `npm run soak` is the same code
// for 10 minutes at 100 sessions, with its figures in docs/reliability.md. The test runs the bench
// as a command (tests do not import bench/) and reads the result it writes (SOAK_RESULT, JSON).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/** The fields of the soak's result (`SoakResult` in bench/soak/run.ts) this test reads. */
interface SoakFigures {
  readonly kinds: readonly string[];
  readonly handleSlack: number;
  readonly errors: readonly unknown[];
  readonly stalls: number;
  readonly opened: number;
  readonly turnsPerSession: readonly number[];
  readonly turns: Readonly<Record<string, number>>;
  readonly mix: Readonly<Record<string, number>>;
  readonly churned: number;
  readonly bargeIns: number;
  readonly toolCalls: number;
  readonly warmUpS: number;
  readonly baseline: { readonly handles: number };
  readonly after: { readonly handles: number; readonly sessions: Readonly<Record<string, number>> };
  readonly samples: readonly { readonly t: number }[];
  readonly slopes: { readonly rssMiBPerMin: number; readonly heapMiBPerMin: number };
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs `npm run soak`'s file with `env`; resolves with its exit code (null: killed by a signal). */
function runSoakCommand(env: Record<string, string>, signal: AbortSignal): Promise<number | null> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/soak/run.ts"], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit"] });
  // SIGTERM: the runner aborts its run and kills its gateway child.
  signal.addEventListener("abort", () => child.kill("SIGTERM"), { once: true });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
}

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
  // A failure or a timeout still ends the soak: SIGTERM aborts its run, which kills the gateway process.
  afterAll(() => stop.abort());
  const dir = mkdtempSync(join(tmpdir(), "soak-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers every session, reports no unexpected error, leaks no handle and does not grow", { timeout: 100_000 }, async () => {
    const file = join(dir, "result.json");
    const env = { SOAK_SECONDS: String(SECONDS), SOAK_SESSIONS: String(SESSIONS), SOAK_NO_DOCS: "1", SOAK_QUIET: "1", SOAK_RESULT: file };
    const code = await runSoakCommand(env, stop.signal);
    // Exit 1 means errors were counted: the result still says which (below). No file: the run itself failed.
    expect(code === 0 || code === 1, `the soak exited with ${String(code)}`).toBe(true);
    const r = JSON.parse(readFileSync(file, "utf8")) as SoakFigures;
    const KINDS = r.kinds;
    const HANDLE_SLACK = r.handleSlack;
    expect(KINDS).toEqual(["text", "pipeline", "s2s", "phone"]);
    // The list itself, so a failure says what went wrong (gateway log lines, stalls, stray errors).
    expect(r.errors).toEqual([]);
    expect(r.stalls).toBe(0);
    // Every session answered at least one turn, every kind kept answering, sessions were churned.
    expect(r.turnsPerSession.length).toBe(r.opened);
    expect(r.turnsPerSession[0]).toBeGreaterThan(0);
    for (const kind of KINDS) expect(r.turns[kind], `${kind} turns`).toBeGreaterThan((r.mix[kind] ?? Number.NaN) * 2);
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
