/**
 * `npm run bench:telephony:heap -- [--dist | --dist-of DIR] [--calls 50,100] [--top 40] [--shapes]`: what a
 * call keeps on the gateway's heap, by kind of object. It runs bench:telephony (run.ts) for two
 * call counts with `--heapsnapshot-signal` (its children inherit it), takes a heap snapshot of the gateway's
 * process in each gateway phase (14 s after
 * the floor phase of that count ends: the calls are all up and streaming, within the 30 s window),
 * and divides the difference between the two snapshots by the difference in calls: what one
 * live call holds, free of what the process holds whatever the calls (code, modules, the harness).
 * Counts of objects are exact whatever the machine's load; bytes in flight (buffers, queued
 * frames) vary with it. Run it on each build (`--dist-of <checkout>` for another revision's
 * `dist/`) and compare the tables: the node types, then closures and objects by name (`--shapes`:
 * plain objects by their first property names).
 * Prints only (no docs section): docs/benchmarks.md quotes it with the command.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { countOption, flagValue, sleep } from "../shared/common.js";

/** Ms after "floor …, N calls" when the gateway's N calls are up (run.ts: warm-up, ramp, 25 s to a steady state, then a 30 s window). */
const SNAPSHOT_AFTER_MS = 14_000;

interface Tally {
  readonly count: number;
  readonly bytes: number;
}

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: [string[]]; readonly edge_fields: string[]; readonly edge_types: [string[]] } };
  readonly nodes: number[];
  readonly edges: number[];
  readonly strings: string[];
}

/** How many of a plain object's property names `--shapes` shows. */
const SHAPE_KEYS = 6;

/**
 * Node counts and self sizes in a V8 heap snapshot, by node type (`type`) and, for closures and
 * objects, by name (`type: name`). `shapes`: a plain `Object` is told apart by its first property
 * names (`object: Object {a,b,…}`), to find which literal a call keeps.
 */
function tally(path: string, shapes: boolean): Map<string, Tally> {
  const snapshot = JSON.parse(readFileSync(path, "utf8")) as Snapshot;
  const { node_fields: fields, node_types: [types], edge_fields: edgeFields, edge_types: [edgeTypes] } = snapshot.snapshot.meta;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ["type", "name", "self_size", "edge_count"].map((field) => fields.indexOf(field)) as [number, number, number, number];
  const [edgeTypeAt, edgeNameAt] = ["type", "name_or_index"].map((field) => edgeFields.indexOf(field)) as [number, number];
  const property = edgeTypes.indexOf("property");
  const out = new Map<string, Tally>();
  const add = (key: string, bytes: number): void => {
    const was = out.get(key) ?? { count: 0, bytes: 0 };
    out.set(key, { count: was.count + 1, bytes: was.bytes + bytes });
  };
  const { nodes, edges, strings } = snapshot;
  let edge = 0;
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[nodes[i + typeAt]!]!;
    const bytes = nodes[i + sizeAt]!;
    const edgeCount = nodes[i + edgeCountAt]!;
    add(type, bytes);
    if (type === "closure" || type === "object") {
      let name = strings[nodes[i + nameAt]!]!.slice(0, 60) || "(anonymous)";
      if (shapes && name === "Object") {
        const keys: string[] = [];
        for (let e = edge; e < edge + edgeCount * edgeFields.length && keys.length < SHAPE_KEYS; e += edgeFields.length) {
          if (edges[e + edgeTypeAt] === property) keys.push(strings[edges[e + edgeNameAt]!]!);
        }
        name = `Object {${keys.join(",")}}`;
      }
      add(`${type}: ${name}`, bytes);
    }
    edge += edgeCount * edgeFields.length;
  }
  return out;
}

/** Runs bench:telephony and snapshots its gateway phase at each call count; the snapshots' paths, in order. */
async function capture(calls: readonly [number, number], gatewayFlags: readonly string[], dir: string): Promise<string[]> {
  const run = fileURLToPath(new URL("./run.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", "--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`, run, "--calls", calls.join(","), "--window", "30", "--rounds", "1", "--no-docs", ...gatewayFlags], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const snapshots: string[] = [];
  try {
    for (const n of calls) {
      while (!out.includes(`floor (hand-written relay), ${n} calls`)) {
        if (child.exitCode !== null) throw new Error(`bench:telephony ended before the gateway phase at ${n} calls:\n${out}`);
        await sleep(500);
      }
      // The gateway runs in a process of its own (bench/telephony/gateway-host.ts), which run.ts names.
      const pid = Number(/the gateway from .* \(process (\d+)\)/.exec(out)?.[1]);
      if (!Number.isInteger(pid)) throw new Error(`bench:telephony did not say the gateway's process:\n${out}`);
      await sleep(SNAPSHOT_AFTER_MS);
      process.kill(pid, "SIGUSR2");
      snapshots.push(await written(dir, snapshots.length + 1));
      console.log(`bench:telephony:heap: snapshot at ${n} calls`);
    }
  } finally {
    child.kill("SIGTERM");
  }
  return snapshots;
}

/** The `nth` snapshot in `dir`, once its size has stopped changing. */
async function written(dir: string, nth: number): Promise<string> {
  let last = -1;
  for (;;) {
    await sleep(2000);
    const files = readdirSync(dir).filter((f) => f.endsWith(".heapsnapshot")).sort();
    const file = files[nth - 1];
    if (file === undefined) continue;
    const size = statSync(join(dir, file)).size;
    if (size > 0 && size === last) return join(dir, file);
    last = size;
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const [low, high] = (flagValue(argv, "calls") ?? "50,100").split(",").map((n) => countOption(n, 0, "calls"));
  if (low === undefined || high === undefined || high <= low) throw new Error("--calls takes two counts, the second larger: 50,100");
  const top = countOption(flagValue(argv, "top"), 40, "top");
  const shapes = argv.includes("--shapes");
  const gatewayFlags = argv.includes("--dist") ? ["--dist"] : flagValue(argv, "dist-of") !== undefined ? ["--dist-of", flagValue(argv, "dist-of")!] : [];
  const dir = mkdtempSync(join(tmpdir(), "bench-heap-"));
  try {
    const [before, after] = (await capture([low, high], gatewayFlags, dir)).map((path) => tally(path, shapes)) as [Map<string, Tally>, Map<string, Tally>];
    const perCall = [...new Set([...before.keys(), ...after.keys()])].map((key) => {
      const a = before.get(key) ?? { count: 0, bytes: 0 };
      const b = after.get(key) ?? { count: 0, bytes: 0 };
      return { key, count: (b.count - a.count) / (high - low), bytes: (b.bytes - a.bytes) / (high - low) };
    });
    const types = perCall.filter((row) => !row.key.includes(": "));
    const total = types.reduce((sum, row) => sum + row.bytes, 0);
    console.log(`\nbench:telephony:heap (${gatewayFlags.join(" ") || "sources"}): per call, from ${low} to ${high} live calls: ${(total / 1024).toFixed(1)} KiB\n`);
    console.log("| node type | per call | bytes per call |\n|---|--:|--:|");
    for (const row of types.sort((p, q) => q.bytes - p.bytes)) if (Math.abs(row.count) >= 0.5) console.log(`| ${row.key} | ${row.count.toFixed(1)} | ${row.bytes.toFixed(0)} |`);
    console.log("\n| closure or object, by name | per call | bytes per call |\n|---|--:|--:|");
    const named = perCall.filter((row) => row.key.includes(": ") && Math.abs(row.count) >= 0.5);
    for (const row of named.sort((p, q) => q.count - p.count).slice(0, top)) console.log(`| ${row.key} | ${row.count.toFixed(1)} | ${row.bytes.toFixed(0)} |`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
