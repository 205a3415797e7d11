/**
 * `npm run bench:carrier-counts`: what a Twilio call's frame costs the gateway, counted rather than
 * timed — instructions, and the cache misses of a simulated cache shaped like this machine's —
 * against the floor's own work on the same frames. Two gateway sides: its carrier edge alone (a
 * `CarrierBridge`, carrier-sides.ts) and its whole path (the bridge, the session, the s2s runner
 * and the OpenAI Realtime adapter over an in-process provider socket, call-sides.ts).
 * `bench:carrier-path` times the edge and the floor, and on a shared machine its runs move by
 * hundreds of ns a frame; a per-frame change worth tens of ns cannot show there. Here each side
 * runs under Valgrind's cachegrind, which executes the process on a simulated CPU: the counts
 * depend on the code and the data layout only, not on what else the machine does.
 *
 * Each count is the difference of two processes, one counting 1 and the other 3 runs of 50,000
 * frames (a warm-up run before either), divided by the 100,000 frames between them, less the same
 * difference for a "prep" process that only makes the frames: start-up, module loading, the
 * calls' set-up and the JIT's work cancel out. Each process is run `--repeat N` times (default 2)
 * and the repeat with the fewest instructions counted: now and then one process of the whole
 * path does a one-off piece of work of a hundred million instructions or more (docs/benchmarks.md). How the counted process (carrier-counts-child.ts)
 * is run, and the caches simulated, are bench/shared/cachegrind.ts's. Two processes of one build
 * agree to about ±20 instructions and ±0.5 L2 misses a frame; L1 misses move more (data about
 * ±20, instructions about ±35: where the JIT puts code is not fixed). Cold only: the calls are
 * `--calls N` (default 1000), frames round-robin across them.
 *
 * Needs `valgrind` (Debian: apt-get install valgrind) and `setarch`. Options: --dist, --dist-of
 * DIR (a build is counted, not the sources), --vs DIR (another build's whole path beside this
 * one's, and nothing else; prints only), --calls N, --repeat N, --no-docs. Results go to stdout
 * and to docs/benchmarks.md between the bench:carrier-counts markers. About fifteen minutes on 2
 * cores (ten with --vs).
 */
import { rmSync } from "node:fs";
import { cpus } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { countOption, docSection, flagValue, publishSection, runBench } from "../shared/common.js";
import { COUNT_ROWS, counted, minus, perUnit, pooled, simulatedCaches, transpiledChild, type Counts } from "../shared/cachegrind.js";
import { gatewayFromText, gatewaySource } from "../shared/gateway-modules.js";
import type { CountedDirection, CountedSide } from "./carrier-counts-child.js";
import { FRAMES_PER_RUN } from "./carrier-sides.js";

const RUN_LIMIT_MS = 40 * 60_000;
const SECTION = docSection("bench:carrier-counts");
const DIRECTIONS = { inbound: "caller frame → service append", outbound: "service delta → carrier frame (marks every 250 ms)" } as const;
type Direction = CountedDirection & keyof typeof DIRECTIONS;
/** Measured runs in the two processes whose difference is counted. */
const RUNS = [1, 3] as const;
/** The child's sources (bench/ paths, its entry point first). */
const CHILD_SOURCES = ["telephony/carrier-counts-child.ts", "telephony/carrier-sides.ts", "telephony/call-sides.ts", "shared/counting-socket.ts"] as const;

/** A frame's counts: the side's work over the frames between its two processes, less the prep process's (making the frames). */
const perFrame = (more: Counts, less: Counts, prepMore: Counts, prepLess: Counts): Counts => {
  const frames = (RUNS[1] - RUNS[0]) * FRAMES_PER_RUN;
  return minus(perUnit(more, less, frames), perUnit(prepMore, prepLess, frames));
};

async function parent(): Promise<number> {
  const began = Date.now();
  const caches = simulatedCaches("bench:carrier-counts");
  const source = gatewaySource(process.argv);
  const vs = flagValue(process.argv, "vs");
  const calls = countOption(flagValue(process.argv, "calls"), 1000, "calls");
  if (FRAMES_PER_RUN % calls !== 0) throw new Error(`--calls must divide ${FRAMES_PER_RUN}`);
  // The child is plain JavaScript: it loads a build, not the sources through tsx.
  if (source.gatewayFrom !== "dist") throw new Error("bench:carrier-counts counts a build: pass --dist (after `npm run build`) or --dist-of DIR");
  // A --vs run counts the two builds' whole paths only (and the prep they are both less).
  const sides: { name: string; kind: CountedSide; root?: string }[] =
    vs === undefined
      ? [
          { name: "prep", kind: "prep" },
          { name: "floor", kind: "floor" },
          { name: "edge", kind: "edge", root: source.gatewayRoot.href },
          { name: "call", kind: "call", root: source.gatewayRoot.href },
        ]
      : [
          { name: "prep", kind: "prep" },
          { name: "call", kind: "call", root: source.gatewayRoot.href },
          { name: vs, kind: "call", root: pathToFileURL(`${resolve(vs, "dist")}/`).href },
        ];
  const child = transpiledChild(CHILD_SOURCES);
  const repeats = countOption(flagValue(process.argv, "repeat"), 2, "repeat");
  const jobs = (Object.keys(DIRECTIONS) as Direction[]).flatMap((direction) =>
    sides.flatMap((side) =>
      RUNS.flatMap((runs) =>
        Array.from({ length: repeats }, () => ({ direction, side: side.name, runs, run: () => counted(caches, child.entry, [`${side.kind}:${direction}:${calls}:${runs}`, ...(side.root === undefined ? [] : [side.root])]) })),
      ),
    ),
  );
  console.log(`bench:carrier-counts: ${jobs.length} processes under cachegrind, ${cpus().length} at a time`);
  const results = await pooled(jobs.map((job) => job.run), cpus().length).finally(() => rmSync(child.dir, { recursive: true, force: true }));
  // A process's one-off work (a collection, a batch of compiles) only ever adds to its counts: of
  // the repeats of one process, the one that ran the fewest instructions is the one without it.
  const at = (direction: Direction, side: string, runs: number): Counts =>
    results.filter((_, k) => jobs[k]?.direction === direction && jobs[k]?.side === side && jobs[k]?.runs === runs).reduce((least, counts) => (counts.instructions < least.instructions ? counts : least));
  const side = (direction: Direction, name: string): Counts =>
    perFrame(at(direction, name, RUNS[1]), at(direction, name, RUNS[0]), at(direction, "prep", RUNS[1]), at(direction, "prep", RUNS[0]));
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; the gateway ${gatewayFromText(source.gatewayFrom)}; ${calls} calls, frames round-robin; per frame over ${(RUNS[1] - RUNS[0]) * FRAMES_PER_RUN} frames, each process the fewest-instructions of ${repeats} repeats; simulated caches ${caches.text}; ${((Date.now() - began) / 60_000).toFixed(1)} min.`,
    "",
    vs === undefined
      ? "| direction | a frame's | floor: the relay's work | gateway's carrier edge | gateway's whole path | whole − floor | ÷ floor |\n|---|---|--:|--:|--:|--:|--:|"
      : `| direction | a frame's | this build's whole path | ${vs}'s whole path | this − that |\n|---|---|--:|--:|--:|`,
  ];
  for (const direction of Object.keys(DIRECTIONS) as Direction[]) {
    const call = side(direction, "call");
    const [floor, edge, other] = vs === undefined ? [side(direction, "floor"), side(direction, "edge"), undefined] : [undefined, undefined, side(direction, vs)];
    for (const [key, label] of COUNT_ROWS) {
      const f = (n: number): string => n.toFixed(key === "instructions" ? 0 : 1);
      const cells =
        floor !== undefined && edge !== undefined
          ? [f(floor[key]), f(edge[key]), f(call[key]), f(call[key] - floor[key]), `${(call[key] / floor[key]).toFixed(2)}×`]
          : [f(call[key]), f(other?.[key] ?? 0), f(call[key] - (other?.[key] ?? 0))];
      lines.push(`| ${DIRECTIONS[direction]} | ${label} | ${cells.join(" | ")} |`);
    }
  }
  if (vs !== undefined) console.log(lines.join("\n"));
  else publishSection("bench:carrier-counts", SECTION, lines.join("\n"));
  return 0;
}

runBench("bench:carrier-counts", RUN_LIMIT_MS, parent);
