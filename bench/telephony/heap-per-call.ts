/**
 * `npm run bench:telephony:heap -- [--dist | --dist-of DIR] [--calls 50,100] [--top 40] [--shapes] [--owners] [--from A,B]`: what a
 * call keeps on the gateway's heap, by kind of object. It runs bench:telephony (run.ts) for two
 * call counts with `--heapsnapshot-signal` (its children inherit it), takes a heap snapshot of the gateway's
 * process in each gateway phase (14 s after
 * the floor phase of that count ends: the calls are all up and streaming, within the 30 s window),
 * and divides the difference between the two snapshots by the difference in calls: what one
 * live call holds, free of what the process holds whatever the calls (code, modules, the harness).
 * Counts of objects are exact whatever the machine's load; bytes in flight (buffers, queued
 * frames) vary with it. Run it on each build (`--dist-of <checkout>` for another revision's
 * `dist/`) and compare the tables: the node types, then closures and objects by name (`--shapes`:
 * plain objects by their first property names; `--owners`: every node by what holds it). `--from`
 * reads two snapshots already taken (the gateway's, at the two counts of `--calls`) instead of running.
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

/** Names that say nothing of who holds a node: `--owners` looks past them, up the retainers. */
const ANONYMOUS = new Set(["", "(anonymous)", "Object", "Array", "Map", "Set", "SmallMap", "SmallSet", "Promise", "system / Context"]);
/** How far up its retainers `--owners` looks for a node's owner. */
const OWNER_DEPTH = 6;

/**
 * `--owners`: every node (code left out) counted under what holds it, `type @ Owner.path`: the
 * nearest object or closure up its retainers with a name of its own (a class, a named function),
 * and the edges from it, so `array @ LogThrottle.#kinds.table` is the hash table of the `Map` in
 * a `LogThrottle`'s `#kinds`. A node's retainer is the edge to it from an object or a closure if
 * there is one, else from an array or a scope context (weak edges, maps and prototypes left
 * out). Finds what a class keeps through its collections, closures and contexts, which the
 * by-name table counts only as `Array`, `Map` or a context.
 */
function ownerTally(path: string): Map<string, Tally> {
  const snapshot = JSON.parse(readFileSync(path, "utf8")) as Snapshot;
  const { node_fields: fields, node_types: [types], edge_fields: edgeFields, edge_types: [edgeTypes] } = snapshot.snapshot.meta;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ["type", "name", "self_size", "edge_count"].map((field) => fields.indexOf(field)) as [number, number, number, number];
  const [edgeTypeAt, edgeNameAt, toAt] = ["type", "name_or_index", "to_node"].map((field) => edgeFields.indexOf(field)) as [number, number, number];
  const [weak, shortcut, element, hidden] = ["weak", "shortcut", "element", "hidden"].map((type) => edgeTypes.indexOf(type));
  const { nodes, edges, strings } = snapshot;
  const count = nodes.length / fields.length;
  const typeOf = (node: number): string => types[nodes[node * fields.length + typeAt]!]!;
  const nameOf = (node: number): string => strings[nodes[node * fields.length + nameAt]!]!;
  const retainer = new Int32Array(count).fill(-1);
  const rank = new Int8Array(count);
  const via: string[] = new Array<string>(count);
  let edge = 0;
  for (let node = 0; node < count; node++) {
    const type = typeOf(node);
    const name = nameOf(node);
    const holderRank = (type === "object" || type === "closure") && !name.startsWith("system /") ? 3 : type === "array" || name === "system / Context" ? 2 : 1;
    const edgeCount = nodes[node * fields.length + edgeCountAt]!;
    for (let e = 0; e < edgeCount; e++, edge += edgeFields.length) {
      const edgeType = edges[edge + edgeTypeAt]!;
      if (edgeType === weak || edgeType === shortcut) continue;
      const label = edgeType === element || edgeType === hidden ? "[]" : strings[edges[edge + edgeNameAt]!]!;
      if (label === "map" || label === "__proto__") continue;
      const to = edges[edge + toAt]! / fields.length;
      if (holderRank > rank[to]!) {
        retainer[to] = node;
        rank[to] = holderRank;
        via[to] = label;
      }
    }
  }
  const owner = (node: number): string => {
    const path: string[] = [];
    for (let at = node, depth = 0; depth < OWNER_DEPTH; depth++) {
      const holder = retainer[at]!;
      if (holder < 0) break;
      path.unshift(via[at]!);
      const type = typeOf(holder);
      if ((type === "object" || type === "closure") && !ANONYMOUS.has(nameOf(holder)) && !nameOf(holder).startsWith("system /")) return `${nameOf(holder).slice(0, 40)}.${path.join(".")}`;
      at = holder;
    }
    return `?.${path.join(".")}`;
  };
  const out = new Map<string, Tally>();
  for (let node = 0; node < count; node++) {
    const type = typeOf(node);
    if (type === "code") continue;
    const key = `${type === "object" ? `object: ${nameOf(node).slice(0, 40) || "(anonymous)"}` : type} @ ${owner(node)}`;
    const was = out.get(key) ?? { count: 0, bytes: 0 };
    out.set(key, { count: was.count + 1, bytes: was.bytes + nodes[node * fields.length + sizeAt]! });
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
  const owners = argv.includes("--owners");
  const dir = mkdtempSync(join(tmpdir(), "bench-heap-"));
  try {
    const given = flagValue(argv, "from")?.split(",");
    const paths = given ?? (await capture([low, high], gatewayFlags, dir));
    if (paths.length !== 2) throw new Error("--from takes two snapshots of the gateway, at the two counts of --calls: A.heapsnapshot,B.heapsnapshot");
    const difference = (tallies: Map<string, Tally>[]): { key: string; count: number; bytes: number }[] => {
      const [before, after] = tallies as [Map<string, Tally>, Map<string, Tally>];
      return [...new Set([...before.keys(), ...after.keys()])].map((key) => {
        const a = before.get(key) ?? { count: 0, bytes: 0 };
        const b = after.get(key) ?? { count: 0, bytes: 0 };
        return { key, count: (b.count - a.count) / (high - low), bytes: (b.bytes - a.bytes) / (high - low) };
      });
    };
    const perCall = difference(paths.map((path) => tally(path, shapes)));
    const types = perCall.filter((row) => !row.key.includes(": "));
    const total = types.reduce((sum, row) => sum + row.bytes, 0);
    console.log(`\nbench:telephony:heap (${gatewayFlags.join(" ") || "sources"}): per call, from ${low} to ${high} live calls: ${(total / 1024).toFixed(1)} KiB\n`);
    console.log("| node type | per call | bytes per call |\n|---|--:|--:|");
    for (const row of types.sort((p, q) => q.bytes - p.bytes)) if (Math.abs(row.count) >= 0.5) console.log(`| ${row.key} | ${row.count.toFixed(1)} | ${row.bytes.toFixed(0)} |`);
    console.log("\n| closure or object, by name | per call | bytes per call |\n|---|--:|--:|");
    const named = perCall.filter((row) => row.key.includes(": ") && Math.abs(row.count) >= 0.5);
    for (const row of named.sort((p, q) => q.count - p.count).slice(0, top)) console.log(`| ${row.key} | ${row.count.toFixed(1)} | ${row.bytes.toFixed(0)} |`);
    if (owners) {
      // Source text V8 loaded between the snapshots is the process's, not a call's (under half a node a call).
      const held = difference(paths.map(ownerTally)).filter((row) => Math.abs(row.count) >= 0.5);
      console.log("\n| node, by what holds it | per call | bytes per call |\n|---|--:|--:|");
      for (const row of held.sort((p, q) => q.bytes - p.bytes).slice(0, top)) console.log(`| ${row.key} | ${row.count.toFixed(1)} | ${row.bytes.toFixed(0)} |`);
    }
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
