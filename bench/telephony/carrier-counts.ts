/**
 * `npm run bench:carrier-counts`: what a Twilio call's frame costs at the gateway's carrier edge,
 * counted rather than timed — instructions, and the cache misses of a simulated cache shaped like
 * this machine's — against the floor's own work on the same frames. `bench:carrier-path` times the
 * same two sides (bench/telephony/carrier-sides.ts), and on a shared machine its runs move by
 * hundreds of ns a frame; a per-frame change worth tens of ns cannot show there. Here each side
 * runs under Valgrind's cachegrind, which executes the process on a simulated CPU: the counts
 * depend on the code and the data layout only, not on what else the machine does.
 *
 * Each count is the difference of two processes, one counting 1 and the other 3 runs of 50,000
 * frames (a warm-up run before either), divided by the 100,000 frames between them, less the same
 * difference for a "prep" process that only makes the frames: start-up, module loading, the
 * calls' set-up and the JIT's work cancel out. For the counts to depend on the code alone, the
 * counted process (carrier-counts-child.ts) runs as plain JavaScript, transpiled here (tsx's
 * loader runs a thread of its own, whose work lands in the counts unevenly), with NODE_FLAGS and
 * address randomisation off (`setarch -R`). Two processes of one build then agree to about ±20
 * instructions and ±0.5 L2 misses a frame; L1 misses move more (data about ±20, instructions
 * about ±35: where the JIT puts code is not fixed).
 *
 * The simulated caches: L1 data and instructions as this CPU's (sysfs), and cachegrind's last
 * level set to this CPU's **L2** (per core), not its L3: a call's state that has left L2 by its
 * next frame is what the gateway pays for, on a process running hundreds of calls (the L3, shared
 * by the cores and the kernel's socket work, does not keep it either under load). Cold only: the
 * calls are `--calls N` (default 1000), frames round-robin across them.
 *
 * Needs `valgrind` (Debian: apt-get install valgrind) and `setarch`. Options: --dist, --dist-of
 * DIR (a build is counted, not the sources), --vs DIR (another build's edge beside this one's;
 * prints only), --calls N, --no-docs. Results go to stdout and to docs/benchmarks.md between the
 * bench:carrier-counts markers. About ten minutes on 2 cores.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, machine, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { countOption, docSection, flagValue, publishSection, runBench } from "../shared/common.js";
import { gatewayFromText, gatewaySource } from "../shared/gateway-modules.js";
import type { CountedDirection, CountedSide } from "./carrier-counts-child.js";
import { FRAMES_PER_RUN } from "./carrier-sides.js";

const RUN_LIMIT_MS = 40 * 60_000;
const SECTION = docSection("bench:carrier-counts");
const DIRECTIONS = { inbound: "caller frame → service append", outbound: "service delta → carrier frame (marks every 250 ms)" } as const;
type Direction = CountedDirection & keyof typeof DIRECTIONS;
/** Measured runs in the two processes whose difference is counted. */
const RUNS = [1, 3] as const;

/**
 * Node's flags for a counted process: V8 single-threaded (its compiler and GC on the main thread,
 * no helper threads racing it), in predictable mode (no time-based heuristics) with fixed seeds; a
 * young generation of a fixed size and an old one started large enough that no full GC falls
 * inside the counted runs (the child collects once before them).
 */
const NODE_FLAGS = ["--expose-gc", "--single-threaded", "--predictable", "--random-seed=1", "--hash-seed=1", "--min-semi-space-size=16", "--max-semi-space-size=16", "--initial-old-space-size=1024"] as const;

/** One process's totals, from cachegrind's summary. */
interface Counts {
  readonly instructions: number;
  readonly i1: number;
  readonly d1: number;
  readonly l2: number;
}

/** A cache level of this CPU from sysfs, as cachegrind's `size,associativity,line size`; undefined where unreadable. */
function cacheGeometry(level: number, type: "Data" | "Instruction" | "Unified"): string | undefined {
  for (let index = 0; index < 8; index++) {
    const dir = `/sys/devices/system/cpu/cpu0/cache/index${index}`;
    if (!existsSync(dir)) break;
    const read = (name: string): string => readFileSync(`${dir}/${name}`, "utf8").trim();
    if (Number(read("level")) !== level || read("type") !== type) continue;
    const size = read("size");
    const bytes = Number.parseInt(size, 10) * (size.endsWith("K") ? 1024 : size.endsWith("M") ? 1024 * 1024 : 1);
    return `${bytes},${read("ways_of_associativity")},${read("coherency_line_size")}`;
  }
  return undefined;
}

function requireTools(): void {
  for (const [tool, args] of [["valgrind", ["--version"]], ["setarch", ["--version"]]] as const) {
    const probe = spawnSync(tool, args, { encoding: "utf8" });
    if (probe.error !== undefined || probe.status !== 0) throw new Error(`bench:carrier-counts needs ${tool} (Debian: apt-get install ${tool === "valgrind" ? "valgrind" : "util-linux"})`);
  }
}

/** A cachegrind geometry as a reader says it: "32 KiB, 8-way, 64 B lines". */
function described(geometry: string | undefined): string {
  if (geometry === undefined) return "cachegrind's default";
  const [bytes, ways, line] = geometry.split(",").map(Number) as [number, number, number];
  return `${bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`}, ${ways}-way, ${line} B lines`;
}

const NUMBER = (label: string, text: string): number => {
  const match = new RegExp(`${label}:\\s+([\\d,]+)`).exec(text);
  if (match?.[1] === undefined) throw new Error(`no "${label}" in cachegrind's summary:\n${text.slice(-2000)}`);
  return Number(match[1].replaceAll(",", ""));
};

/** The child's sources (bench/ paths), as plain JavaScript: no TypeScript loader, and no loader thread, in a counted process. */
const CHILD_SOURCES = ["telephony/carrier-counts-child.ts", "telephony/carrier-sides.ts", "shared/counting-socket.ts"] as const;

/** The child transpiled into a temporary directory; its entry point and the directory. */
function transpiledChild(): { readonly entry: string; readonly dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "carrier-counts-"));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  for (const source of CHILD_SOURCES) {
    const text = readFileSync(fileURLToPath(new URL(`../${source}`, import.meta.url)), "utf8");
    const out = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } });
    const path = join(dir, source.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, out.outputText);
  }
  return { entry: join(dir, CHILD_SOURCES[0].replace(/\.ts$/, ".js")), dir };
}

/** Run one side's process (`entry`, the transpiled child) under cachegrind; its summary. */
function counted(cacheArgs: readonly string[], entry: string, childArgs: readonly string[]): Promise<Counts> {
  const argv = [machine(), "-R", "valgrind", "--tool=cachegrind", "--cache-sim=yes", ...cacheArgs, "--cachegrind-out-file=/dev/null", process.execPath, ...NODE_FLAGS, entry, ...childArgs];
  return new Promise((done, fail) => {
    const proc = spawn("setarch", argv, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    proc.stderr.setEncoding("utf8").on("data", (text: string) => (err += text));
    proc.on("error", fail);
    proc.on("close", (code) => {
      if (code !== 0) return fail(new Error(`cachegrind run ${childArgs.join(" ")} exited ${code}:\n${err.slice(-2000)}`));
      try {
        done({ instructions: NUMBER("I\\s+refs", err), i1: NUMBER("I1\\s+misses", err), d1: NUMBER("D1\\s+misses", err), l2: NUMBER("LL misses", err) });
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

/** Run `jobs` at most `width` at a time. */
async function pooled<T>(jobs: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array<T>(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let k = next++; k < jobs.length; k = next++) results[k] = await (jobs[k] as () => Promise<T>)();
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return results;
}

const perFrame = (more: Counts, less: Counts, prepMore: Counts, prepLess: Counts): Counts => {
  const frames = (RUNS[1] - RUNS[0]) * FRAMES_PER_RUN;
  const of = (key: keyof Counts): number => (more[key] - less[key] - (prepMore[key] - prepLess[key])) / frames;
  return { instructions: of("instructions"), i1: of("i1"), d1: of("d1"), l2: of("l2") };
};

async function parent(): Promise<number> {
  const began = Date.now();
  requireTools();
  const source = gatewaySource(process.argv);
  const vs = flagValue(process.argv, "vs");
  const calls = countOption(flagValue(process.argv, "calls"), 1000, "calls");
  if (FRAMES_PER_RUN % calls !== 0) throw new Error(`--calls must divide ${FRAMES_PER_RUN}`);
  const caches = { I1: cacheGeometry(1, "Instruction"), D1: cacheGeometry(1, "Data"), LL: cacheGeometry(2, "Unified") };
  const cacheArgs = Object.entries(caches).flatMap(([name, geometry]) => (geometry === undefined ? [] : [`--${name}=${geometry}`]));
  // The child is plain JavaScript: it loads a build, not the sources through tsx.
  if (source.gatewayFrom !== "dist") throw new Error("bench:carrier-counts counts a build: pass --dist (after `npm run build`) or --dist-of DIR");
  const sides: { name: string; kind: CountedSide; root?: string }[] = [
    { name: "prep", kind: "prep" },
    { name: "floor", kind: "floor" },
    { name: "gateway", kind: "gateway", root: source.gatewayRoot.href },
  ];
  if (vs !== undefined) sides.push({ name: vs, kind: "gateway", root: pathToFileURL(`${resolve(vs, "dist")}/`).href });
  const child = transpiledChild();
  const jobs = (Object.keys(DIRECTIONS) as Direction[]).flatMap((direction) =>
    sides.flatMap((side) => RUNS.map((runs) => ({ direction, side: side.name, runs, run: () => counted(cacheArgs, child.entry, [`${side.kind}:${direction}:${calls}:${runs}`, ...(side.root === undefined ? [] : [side.root])]) }))),
  );
  console.log(`bench:carrier-counts: ${jobs.length} processes under cachegrind, ${cpus().length} at a time`);
  const results = await pooled(jobs.map((job) => job.run), cpus().length).finally(() => rmSync(child.dir, { recursive: true, force: true }));
  const at = (direction: Direction, side: string, runs: number): Counts => {
    const k = jobs.findIndex((job) => job.direction === direction && job.side === side && job.runs === runs);
    return results[k] as Counts;
  };
  const vsHead = vs === undefined ? "" : ` ${vs}'s edge | this − that |`;
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; the gateway ${gatewayFromText(source.gatewayFrom)}; ${calls} calls, frames round-robin; per frame over ${(RUNS[1] - RUNS[0]) * FRAMES_PER_RUN} frames; simulated caches ${Object.entries(caches).map(([name, g]) => `${name === "LL" ? "L2 (as cachegrind's LL)" : name} ${described(g)}`).join(", ")}; ${((Date.now() - began) / 60_000).toFixed(1)} min.`,
    "",
    `| direction | a frame's | floor: the relay's work | gateway's carrier edge | gateway − floor | ÷ floor |${vsHead}`,
    `|---|---|--:|--:|--:|--:|${vs === undefined ? "" : "--:|--:|"}`,
  ];
  const rows: readonly [keyof Counts, string][] = [
    ["instructions", "instructions"],
    ["i1", "L1 instruction misses"],
    ["d1", "L1 data misses"],
    ["l2", "L2 misses"],
  ];
  for (const direction of Object.keys(DIRECTIONS) as Direction[]) {
    const side = (name: string): Counts => perFrame(at(direction, name, RUNS[1]), at(direction, name, RUNS[0]), at(direction, "prep", RUNS[1]), at(direction, "prep", RUNS[0]));
    const floor = side("floor");
    const gateway = side("gateway");
    const other = vs === undefined ? undefined : side(vs);
    for (const [key, label] of rows) {
      const digits = key === "instructions" ? 0 : 1;
      const vsCells = other === undefined ? "" : ` ${other[key].toFixed(digits)} | ${(gateway[key] - other[key]).toFixed(digits)} |`;
      lines.push(`| ${DIRECTIONS[direction]} | ${label} | ${floor[key].toFixed(digits)} | ${gateway[key].toFixed(digits)} | ${(gateway[key] - floor[key]).toFixed(digits)} | ${(gateway[key] / floor[key]).toFixed(2)}× |${vsCells}`);
    }
  }
  if (vs !== undefined) console.log(lines.join("\n"));
  else publishSection("bench:carrier-counts", SECTION, lines.join("\n"));
  return 0;
}

runBench("bench:carrier-counts", RUN_LIMIT_MS, parent);
