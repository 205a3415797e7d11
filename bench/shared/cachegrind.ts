/**
 * Counting a process's work instead of timing it: the child runs under Valgrind's cachegrind,
 * which executes it on a simulated CPU, so its instructions and cache misses depend on the code
 * and the data layout only, not on what else the machine does. Shared by `bench:carrier-counts`
 * (a frame at the carrier edge) and `bench:turn-counts` (a session's turn).
 *
 * For the counts to depend on the code alone, the counted child runs as plain JavaScript,
 * transpiled here (tsx's loader runs a thread of its own, whose work lands in the counts
 * unevenly), with NODE_FLAGS and address randomisation off (`setarch -R`).
 *
 * The simulated caches: L1 data and instructions as this CPU's (sysfs), and cachegrind's last
 * level set to this CPU's **L2** (per core), not its L3: state that has left L2 by the time it is
 * next used is what the gateway pays for on a process running hundreds of calls (the L3, shared by
 * the cores and the kernel's socket work, does not keep it either under load).
 *
 * V8's compiling is counted apart (`compiling`): with a single thread its compilers run inside
 * the counted work whenever a function gets hot or re-optimizes after a rare path, and how much
 * of that falls inside the window moves from run to run. Three runs of one build of a turn
 * (bench:turn-counts) read 21,249, 50,385 and 80,633 instructions a turn of compiling, and
 * 71.0k, 74.4k and 78.1k of the rest (the rest still holds the interpreter's work between a
 * deoptimization and the re-optimization); compare the rest, and repeat a reading that moves.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { machine, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import type { Allocation } from "./allocation.js";

/**
 * Node's flags for a counted process: V8 single-threaded (its compiler and GC on the main thread,
 * no helper threads racing it), in predictable mode with fixed seeds; a young generation of a
 * fixed size and an old one started large enough that no full GC falls inside the counted work
 * (the child collects once before it). Predictable mode leaves two collectors that run as tasks
 * when the event loop is idle, so by the clock: the early scavenge once the young generation is
 * 80% full (`--minor-gc-task`) and the memory reducer. A child that turns the event loop (a
 * session's timers) collected 12 to 21 times over the same work with them; without them, by
 * allocation alone, the same number every run.
 */
const NODE_FLAGS = [
  "--expose-gc",
  "--single-threaded",
  "--predictable",
  "--random-seed=1",
  "--hash-seed=1",
  "--min-semi-space-size=16",
  "--max-semi-space-size=16",
  "--initial-old-space-size=1024",
  "--no-minor-gc-task",
  "--no-memory-reducer",
] as const;

/** One process's totals, from cachegrind's summary and its per-function counts. */
export interface Counts {
  readonly instructions: number;
  /** Of `instructions`, those in V8's parsers and compilers (COMPILING). */
  readonly compiling: number;
  /** `instructions` − `compiling`: the code's own work, and the GC's. */
  readonly running: number;
  readonly i1: number;
  readonly d1: number;
  readonly l2: number;
}

/** The rows a counts table shows, with their labels. */
export const COUNT_ROWS: readonly (readonly [keyof Counts, string])[] = [
  ["instructions", "instructions"],
  ["i1", "L1 instruction misses"],
  ["d1", "L1 data misses"],
  ["l2", "L2 misses"],
];

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

/** A cachegrind geometry as a reader says it: "32 KiB, 8-way, 64 B lines". */
function described(geometry: string | undefined): string {
  if (geometry === undefined) return "cachegrind's default";
  const [bytes, ways, line] = geometry.split(",").map(Number) as [number, number, number];
  return `${bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`}, ${ways}-way, ${line} B lines`;
}

/** The simulated caches: cachegrind's arguments, and how a results page names them. */
export interface SimulatedCaches {
  readonly args: readonly string[];
  readonly text: string;
}

/** This machine's caches for cachegrind, after checking that valgrind and setarch are here. */
export function simulatedCaches(bench: string): SimulatedCaches {
  for (const [tool, args] of [["valgrind", ["--version"]], ["setarch", ["--version"]]] as const) {
    const probe = spawnSync(tool, args, { encoding: "utf8" });
    if (probe.error !== undefined || probe.status !== 0) throw new Error(`${bench} needs ${tool} (Debian: apt-get install ${tool === "valgrind" ? "valgrind" : "util-linux"})`);
  }
  const caches = { I1: cacheGeometry(1, "Instruction"), D1: cacheGeometry(1, "Data"), LL: cacheGeometry(2, "Unified") };
  return {
    args: Object.entries(caches).flatMap(([name, geometry]) => (geometry === undefined ? [] : [`--${name}=${geometry}`])),
    text: Object.entries(caches)
      .map(([name, g]) => `${name === "LL" ? "L2 (as cachegrind's LL)" : name} ${described(g)}`)
      .join(", "),
  };
}

const NUMBER = (label: string, text: string): number => {
  const match = new RegExp(`${label}:\\s+([\\d,]+)`).exec(text);
  if (match?.[1] === undefined) throw new Error(`no "${label}" in cachegrind's summary:\n${text.slice(-2000)}`);
  return Number(match[1].replaceAll(",", ""));
};

/**
 * A counted child's sources (paths under bench/, the first its entry point), as plain JavaScript
 * in a temporary directory: no TypeScript loader, and no loader thread, in a counted process.
 */
export function transpiledChild(sources: readonly string[]): { readonly entry: string; readonly dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "counted-"));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  for (const source of sources) {
    const text = readFileSync(fileURLToPath(new URL(`../${source}`, import.meta.url)), "utf8");
    const out = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } });
    const path = join(dir, source.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, out.outputText);
  }
  return { entry: join(dir, (sources[0] ?? "").replace(/\.ts$/, ".js")), dir };
}

/**
 * V8's parsing and compiling, by the C++ symbols cachegrind names (demangled): TurboFan and
 * Turboshaft, Maglev, Sparkplug, the bytecode generator, the parsers and scanner, scopes, and the
 * zones their graphs live in. The code they emit, the interpreter's handlers and the GC are not.
 */
const COMPILING = /v8::internal::(compiler|turboshaft|maglev|baseline|interpreter)::|v8::internal::(Compiler|OptimizingCompileDispatcher|Parser|ParserBase|PreParser|Scanner|Zone|AstValueFactory|DeclarationScope|Scope)\b/;

/** The instructions of a cachegrind out file (`events:` names the columns; `fn=` starts a function): all, and those COMPILING matches. */
export function instructionsByKind(text: string): { readonly instructions: number; readonly compiling: number } {
  let column = 1;
  let compilingFn = false;
  let instructions = 0;
  let compiling = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("events:")) column = 1 + line.slice(7).trim().split(/\s+/).indexOf("Ir");
    else if (line.startsWith("fn=")) compilingFn = COMPILING.test(line);
    else if (line.charCodeAt(0) >= 48 && line.charCodeAt(0) <= 57) {
      const ir = Number(line.split(" ")[column] ?? 0);
      instructions += ir;
      if (compilingFn) compiling += ir;
    }
  }
  return { instructions, compiling };
}

/** Run one process (`entry`, a transpiled child, with `childArgs`) under cachegrind; its counts. */
export function counted(caches: SimulatedCaches, entry: string, childArgs: readonly string[]): Promise<Counts> {
  const dir = mkdtempSync(join(tmpdir(), "cachegrind-"));
  const out = join(dir, "cachegrind.out");
  const argv = [machine(), "-R", "valgrind", "--tool=cachegrind", "--cache-sim=yes", ...caches.args, `--cachegrind-out-file=${out}`, process.execPath, ...NODE_FLAGS, entry, ...childArgs];
  return new Promise<Counts>((done, fail) => {
    const proc = spawn("setarch", argv, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    proc.stderr.setEncoding("utf8").on("data", (text: string) => (err += text));
    proc.on("error", fail);
    proc.on("close", (code) => {
      if (code !== 0) return fail(new Error(`cachegrind run ${childArgs.join(" ")} exited ${code}:\n${err.slice(-2000)}`));
      try {
        const instructions = NUMBER("I\\s+refs", err);
        const byKind = instructionsByKind(readFileSync(out, "utf8"));
        if (byKind.instructions !== instructions) throw new Error(`cachegrind's functions sum to ${byKind.instructions} instructions, its summary says ${instructions}`);
        done({ instructions, compiling: byKind.compiling, running: instructions - byKind.compiling, i1: NUMBER("I1\\s+misses", err), d1: NUMBER("D1\\s+misses", err), l2: NUMBER("LL misses", err) });
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/**
 * Run one process (`entry`, a transpiled child that samples its work with `sampleAllocations` and
 * prints the result as its last line of output) with the counted processes' flags, not under
 * cachegrind: what it allocated (bench/shared/allocation.ts).
 */
export function sampled(entry: string, childArgs: readonly string[]): Promise<Allocation> {
  return new Promise<Allocation>((done, fail) => {
    const proc = spawn(process.execPath, [...NODE_FLAGS, entry, ...childArgs], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    proc.stdout.setEncoding("utf8").on("data", (text: string) => (out += text));
    proc.stderr.setEncoding("utf8").on("data", (text: string) => (err += text));
    proc.on("error", fail);
    proc.on("close", (code) => {
      if (code !== 0) return fail(new Error(`sampled run ${childArgs.join(" ")} exited ${code}:\n${err.slice(-2000)}`));
      try {
        done(JSON.parse(out.trim().split("\n").at(-1) ?? "") as Allocation);
      } catch (error) {
        fail(new Error(`sampled run ${childArgs.join(" ")} printed no allocation: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  });
}

/** Run `jobs` at most `width` at a time. */
export async function pooled<T>(jobs: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array<T>(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let k = next++; k < jobs.length; k = next++) results[k] = await (jobs[k] as () => Promise<T>)();
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return results;
}

/** `(more − less) / units`, each count: the work between two processes that differ only in how much of it they did. */
export function perUnit(more: Counts, less: Counts, units: number): Counts {
  const of = (key: keyof Counts): number => (more[key] - less[key]) / units;
  return { instructions: of("instructions"), compiling: of("compiling"), running: of("running"), i1: of("i1"), d1: of("d1"), l2: of("l2") };
}

/** `a − b`, each count. */
export function minus(a: Counts, b: Counts): Counts {
  return perUnit(a, b, 1);
}
