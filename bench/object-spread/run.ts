/**
 * `npm run bench:object-spread`: what an object built from another costs on this Node, three ways.
 * The objects are the gateway's kinds: an event body given its `meta`, a settled reply given
 * `step`, usage given `steps`, the default limits under a connection's own, in turn. Built:
 *  - by a literal that names every key (the floor: what a shape-aware engine gives the others);
 *  - by a literal that starts with a spread and adds to it (`{ ...a, b }`), which src/ no longer
 *    writes (eslint refuses it);
 *  - by `spread(a, { b })` (src/spread.ts), which src/ writes instead.
 *
 * Per way: ns of process CPU an object (the median of REPS runs of OBJECTS objects, the ways
 * interleaved after a warm-up), bytes allocated an object (V8's sampling heap profiler over one
 * run: bench/shared/allocation.ts), full collections a run (`v8.GCProfiler`), and how many of the
 * last 1,000 objects of one kind share a hidden class with the first of them (V8's
 * `%HaveSameMap`, allowed at run time). A few seconds. Options: --no-docs. Results go to stdout
 * and to docs/benchmarks.md between the bench:object-spread markers.
 */
import { cpus } from "node:os";
import { GCProfiler, setFlagsFromString } from "node:v8";
import { spread } from "../../src/spread.js";
import { sampleAllocations } from "../shared/allocation.js";
import { docSection, publishSection, runBench } from "../shared/common.js";

const RUN_LIMIT_MS = 120_000;
const SECTION = docSection("bench:object-spread");
/** Objects a timed run builds, and timed runs per way. */
const OBJECTS = 200_000;
const REPS = 7;
/** Objects of one kind checked for a shared hidden class. */
const CHECKED = 1_000;

setFlagsFromString("--allow-natives-syntax");
// Compiled after the flag: V8's intrinsic, which no JavaScript syntax reaches otherwise.
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

interface Kinds {
  readonly body: { readonly type: string; readonly text: string; readonly final: boolean };
  readonly info: { readonly turnId: string; readonly status: string; readonly heardMs: number; readonly interrupted: boolean };
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number; readonly totalTokens: number };
  readonly limits: { readonly maxTextFrameBytes: number; readonly maxBinaryFrameBytes: number; readonly maxBacklogBytes: number };
}

const KINDS: Kinds = {
  body: { type: "agent-transcript.committed", text: "It shipped on Friday.", final: true },
  info: { turnId: "turn_1", status: "completed", heardMs: 1840, interrupted: false },
  usage: { inputTokens: 812, outputTokens: 64, totalTokens: 876 },
  limits: { maxTextFrameBytes: 65_536, maxBinaryFrameBytes: 262_144, maxBacklogBytes: 1_048_576 },
};
const OWN_LIMITS: Partial<Kinds["limits"]> = { maxBacklogBytes: 524_288 };

/** One way to build the four kinds' objects; `i` varies a value so nothing is hoisted. */
interface Way {
  readonly name: string;
  readonly build: (i: number) => readonly [object, object, object, object];
}

const WAYS: readonly Way[] = [
  {
    name: "a literal naming every key (the floor)",
    build: (i) => {
      const { body, info, usage, limits } = KINDS;
      return [
        { type: body.type, text: body.text, final: body.final, meta: { id: "evt_1", at: i } },
        { turnId: info.turnId, status: info.status, heardMs: info.heardMs, interrupted: info.interrupted, step: true },
        { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens, steps: i },
        { maxTextFrameBytes: limits.maxTextFrameBytes, maxBinaryFrameBytes: limits.maxBinaryFrameBytes, maxBacklogBytes: OWN_LIMITS.maxBacklogBytes ?? limits.maxBacklogBytes },
      ];
    },
  },
  {
    name: "`{ ...a, b }`",
    build: (i) => {
      const { body, info, usage, limits } = KINDS;
      return [{ ...body, meta: { id: "evt_1", at: i } }, { ...info, step: true }, { ...usage, steps: i }, { ...limits, ...OWN_LIMITS }];
    },
  },
  {
    name: "`spread(a, { b })` (src/spread.ts)",
    build: (i) => {
      const { body, info, usage, limits } = KINDS;
      return [spread(body, { meta: { id: "evt_1", at: i } }), spread(info, { step: true }), spread(usage, { steps: i }), spread(limits, OWN_LIMITS)];
    },
  },
];

let sink = 0;

function buildAll(way: Way, count: number): void {
  for (let i = 0; i < count; i++) sink += way.build(i).length;
}

/** ns of CPU an object (four a build) and full collections, over one run. */
function timed(way: Way): { readonly ns: number; readonly fullGcs: number } {
  const profiler = new GCProfiler();
  profiler.start();
  const before = process.cpuUsage();
  buildAll(way, OBJECTS);
  const used = process.cpuUsage(before);
  const fullGcs = profiler.stop().statistics.filter((gc) => gc.gcType === "MarkSweepCompact").length;
  return { ns: ((used.user + used.system) * 1000) / (OBJECTS * 4), fullGcs };
}

/** Of the last CHECKED body objects a warm way builds, how many have the first one's hidden class. */
function sharing(way: Way): number {
  const bodies = Array.from({ length: CHECKED }, (_, i) => way.build(i)[0]);
  const first = bodies[0];
  return first === undefined ? 0 : bodies.filter((body) => haveSameMap(first, body)).length;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<number> {
  const began = Date.now();
  for (const way of WAYS) buildAll(way, OBJECTS);
  const runs = WAYS.map((): { ns: number; fullGcs: number }[] => []);
  for (let rep = 0; rep < REPS; rep++) WAYS.forEach((way, i) => runs[i]?.push(timed(way)));
  const bytes: number[] = [];
  for (const way of WAYS) bytes.push((await sampleAllocations(() => Promise.resolve(buildAll(way, OBJECTS)))).bytes / (OBJECTS * 4));
  const floor = { ns: median((runs[0] ?? []).map((run) => run.ns)), bytes: bytes[0] ?? Number.NaN };
  const rows = WAYS.map((way, i) => {
    const ns = median((runs[i] ?? []).map((run) => run.ns));
    const fullGcs = median((runs[i] ?? []).map((run) => run.fullGcs));
    const b = bytes[i] ?? Number.NaN;
    return `| ${way.name} | ${ns.toFixed(1)} | ${(ns / floor.ns).toFixed(1)}× | ${b.toFixed(0)} | ${(b / floor.bytes).toFixed(1)}× | ${fullGcs} | ${sharing(way)} of ${CHECKED} |`;
  });
  const body = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; ${OBJECTS * 4} objects a run (four kinds in turn), the median of ${REPS} runs a way, interleaved; ${((Date.now() - began) / 1000).toFixed(0)} s.`,
    "",
    "| built by | CPU an object (ns) | ÷ floor | bytes allocated an object | ÷ floor | full GCs a run | objects with the first one's hidden class |",
    "|---|--:|--:|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
  publishSection("bench:object-spread", SECTION, body);
  return sink > 0 ? 0 : 1;
}

runBench("bench:object-spread", RUN_LIMIT_MS, main);
