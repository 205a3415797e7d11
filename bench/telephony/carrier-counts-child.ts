/**
 * One counted process of `bench:carrier-counts` (bench/telephony/carrier-counts.ts), run by it
 * under cachegrind as plain JavaScript (transpiled, no loader thread: only the work counted runs).
 * Arguments: `side:direction:calls:runs` and, for a gateway side, the URL of its build's `dist/`.
 * A warm-up run (the JIT's work), then the frames of `runs` runs made at once and the heap
 * collected — the frames sit in the old generation, the young one holds only what handling them
 * leaves — then, unless the side is "prep" (the frames made, none handled), `runs` runs. Node's
 * flags (the parent's) keep V8 on this one thread, predictable, and free of full GCs after this
 * collection. Imports only node builtins, the bench's sides and the build.
 */
import { callSides, load as loadCall } from "./call-sides.js";
import { BenchClock, floorSides, gatewaySides, load, type Side } from "./carrier-sides.js";

/** What a process counts: the frames only made ("prep"), the floor's work, the gateway's carrier edge ("edge") or its whole path ("call"). */
export type CountedSide = "prep" | "floor" | "edge" | "call";
export type CountedDirection = "inbound" | "outbound";

async function main(spec: string, root: string | undefined): Promise<void> {
  const [side, direction, callsText, runsText] = spec.split(":") as [CountedSide, CountedDirection, string, string];
  const calls = Number(callsText);
  const runs = Number(runsText);
  const build = side === "edge" || side === "call" ? root : "";
  if (build === undefined) throw new Error("a gateway side needs its build's URL");
  const work: Side = (await sides(side, build, calls))[direction];
  work.reset(1);
  for (let i = 0; i < work.frames; i++) work.round(i);
  work.reset(runs);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc");
  gc();
  if (side !== "prep") for (let i = 0; i < work.frames * runs; i++) work.round(i);
}

async function sides(side: CountedSide, root: string, calls: number): Promise<{ inbound: Side; outbound: Side }> {
  if (side === "edge") return gatewaySides(await load(new URL(root)), new BenchClock(), calls);
  if (side === "call") return callSides(await loadCall(new URL(root)), new BenchClock(), calls);
  return floorSides(calls);
}

await main(process.argv[2] ?? "", process.argv[3]);
