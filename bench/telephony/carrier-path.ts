/**
 * `npm run bench:carrier-path`: the CPU a Twilio call's frames cost at the gateway's carrier edge,
 * run hot in one process, against what the hand-written relay (bench/telephony/relay.ts, the
 * telephony floor) does with the same frames, measured in the same run. Machines are noisy and
 * `bench:telephony` compares its servers minutes apart; this bench has no sockets, no other
 * processes and no timers, so a change to the per-frame path shows here in nanoseconds.
 *
 * - **caller frame → service append**: a Twilio `media` frame (Buffer, as ws hands it over) into a
 *   started, attached `CarrierBridge` (input budget, keep-alive, codec with its strict base64,
 *   chunk order, audio edge), whose handler writes the `input_audio_buffer.append` text as the
 *   OpenAI Realtime adapter does (the carrier's text where the link hands it on, else `base64Of`,
 *   into the frame template). The floor: `JSON.parse`, then
 *   `JSON.stringify` of the append, as the relay does.
 * - **service delta → carrier frame**: a `response.output_audio.delta` text, parsed, its base64
 *   decoded and handed to `CarrierBridge.audio` (framing at the carrier's rules, a mark every
 *   250 ms, the pacer, the media frame template) as the session does. The floor: `JSON.parse`,
 *   then `JSON.stringify` of the `media` frame and a `mark` every 250 ms, as the relay does.
 *
 * Both sides write to sockets that only count bytes. The calls share the run, frames round-robin
 * across them as on a loaded gateway; the clock moves 20 ms per round, so the pacer sends at once
 * and the budget never throttles. Each direction runs at two call counts: 50, where every call's
 * state stays in the caches (hot), and 1000, where it does not (each call's objects are cold
 * again by its next frame, as on a process that also runs the calls' sessions, sockets and kernel
 * writes). The floor keeps almost nothing per call, so the difference between the two counts is
 * what the gateway's per-call state costs a frame. What this leaves out, on purpose: the
 * session, runner and adapter layers between the two edges (each a method call) and the kernel's
 * writes (bench:telephony's "The budget per frame").
 *
 * Options: --dist (the built gateway, `npm run build` first), --dist-of DIR (another checkout's
 * build), --vs DIR (a before/after: DIR's build runs beside this one's, interleaved in the same
 * process, so the machine's drift between runs falls on both; prints only), --reps N (measured
 * runs per side, default 7), --whole (the gateway's whole path instead of its carrier edge: the
 * bridge, a session, the s2s runner and the OpenAI Realtime adapter over an in-process socket,
 * bench/telephony/call-sides.ts, the path `bench:carrier-counts` counts, here timed; prints only),
 * --no-docs (print only). Results go
 * to stdout and to docs/benchmarks.md between the bench:carrier-path markers. About 30 s.
 */
import { cpus } from "node:os";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { countOption, docSection, flagValue, publishSection, runBench } from "../shared/common.js";
import { gatewayFromText, gatewaySource } from "../shared/gateway-modules.js";
import { exposeGc } from "../shared/stats.js";
import { callSides, load as loadCall } from "./call-sides.js";
import { BenchClock, floorSides, FRAMES_PER_RUN, gatewaySides, load, type Side } from "./carrier-sides.js";

const RUN_LIMIT_MS = 120_000;
const SECTION = docSection("bench:carrier-path");
/** Calls sharing a run: hot (each call's state stays cached) and cold (it does not: 1000 calls' state is more than the L2 cache holds). */
const CALL_COUNTS = [50, 1000] as const;
/** Measured runs per side and direction, interleaved; the median is reported (`--reps N`). */
const REPS = countOption(flagValue(process.argv, "reps"), 7, "reps");

const SOURCE = gatewaySource(process.argv);
/** `--vs DIR`: another checkout whose build runs beside this one (a before/after). */
const VS = flagValue(process.argv, "vs");
/** `--whole`: the gateway's whole path rather than its carrier edge. */
const WHOLE = process.argv.includes("--whole");

type Sides = (calls: number) => Promise<{ inbound: Side; outbound: Side }>;

/** A build's sides at a call count: its carrier edge, or with `--whole` its whole path. */
async function sidesOf(root: URL, clock: BenchClock): Promise<Sides> {
  if (WHOLE) {
    const m = await loadCall(root);
    return (calls) => callSides(m, clock, calls);
  }
  const m = await load(root);
  return (calls) => gatewaySides(m, clock, calls);
}

const gc = exposeGc();

/** CPU ns per frame of one run of `side`, from a collected heap (no run pays for another's garbage). */
function run(side: Side): number {
  side.reset();
  gc();
  const before = process.cpuUsage();
  for (let i = 0; i < side.frames; i++) side.round(i);
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / FRAMES_PER_RUN;
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function main(): Promise<number> {
  const began = Date.now();
  const clock = new BenchClock();
  const sides = await sidesOf(SOURCE.gatewayRoot, clock);
  const vsSides = VS === undefined ? undefined : await sidesOf(pathToFileURL(`${resolve(VS, "dist")}/`), clock);
  const cases: { name: string; calls: number; gateway: Side; floor: Side; vs: Side | undefined }[] = [];
  for (const calls of CALL_COUNTS) {
    const gateway = await sides(calls);
    const floor = floorSides(calls);
    const vs = vsSides === undefined ? undefined : await vsSides(calls);
    cases.push({ name: "caller frame → service append", calls, gateway: gateway.inbound, floor: floor.inbound, vs: vs?.inbound });
    cases.push({ name: "service delta → carrier frame (marks every 250 ms)", calls, gateway: gateway.outbound, floor: floor.outbound, vs: vs?.outbound });
  }
  const samples = cases.map(() => ({ gateway: [] as number[], floor: [] as number[], vs: [] as number[] }));
  // Warm-up (JIT), unmeasured; then REPS runs, the sides alternating.
  for (const c of cases) {
    for (let w = 0; w < 2; w++) for (const side of [c.gateway, c.floor, c.vs]) if (side !== undefined) run(side);
  }
  // Which build runs first alternates, so neither always follows the floor's run.
  for (let rep = 0; rep < REPS; rep++) {
    for (const [k, c] of cases.entries()) {
      const vsFirst = rep % 2 === 1 && c.vs !== undefined;
      if (vsFirst && c.vs !== undefined) samples[k]?.vs.push(run(c.vs));
      samples[k]?.gateway.push(run(c.gateway));
      samples[k]?.floor.push(run(c.floor));
      if (!vsFirst && c.vs !== undefined) samples[k]?.vs.push(run(c.vs));
    }
  }
  for (const c of cases) if (c.gateway.written() === 0 || c.floor.written() === 0) throw new Error(`${c.name}, ${c.calls} calls: nothing written`);
  const vsHead = VS === undefined ? "" : ` ${VS}'s build (ns a frame) | this − that (ns) |`;
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; the gateway ${gatewayFromText(SOURCE.gatewayFrom)}; ${FRAMES_PER_RUN} frames a run (${CALL_COUNTS.map((n) => `${n} calls × ${FRAMES_PER_RUN / n}`).join(", ")}), the median of ${REPS} interleaved runs, ${((Date.now() - began) / 1000).toFixed(0)} s.`,
    "",
    `| direction | calls | floor: the relay's work (ns a frame) | gateway's ${WHOLE ? "whole path" : "carrier edge"} (ns a frame) | gateway − floor (ns) | ÷ floor |${vsHead}`,
    `|---|--:|--:|--:|--:|--:|${VS === undefined ? "" : "--:|--:|"}`,
  ];
  for (const [k, c] of cases.entries()) {
    const floorNs = median(samples[k]?.floor ?? []);
    const gatewayNs = median(samples[k]?.gateway ?? []);
    const vsNs = median(samples[k]?.vs ?? []);
    const vsCells = VS === undefined ? "" : ` ${vsNs.toFixed(0)} | ${(gatewayNs - vsNs).toFixed(0)} |`;
    lines.push(`| ${c.name} | ${c.calls} | ${floorNs.toFixed(0)} | ${gatewayNs.toFixed(0)} | ${(gatewayNs - floorNs).toFixed(0)} | ${(gatewayNs / floorNs).toFixed(2)}× |${vsCells}`);
  }
  if (VS !== undefined || WHOLE) console.log(lines.join("\n"));
  else publishSection("bench:carrier-path", SECTION, lines.join("\n"));
  return 0;
}

runBench("bench:carrier-path", RUN_LIMIT_MS, main);
