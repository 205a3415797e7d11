/**
 * `npm run bench:turn-counts`: what a session's turn costs the gateway, counted rather than timed
 * — instructions and simulated cache misses (bench/shared/cachegrind.ts). bench:telephony's
 * callers take a turn every two seconds or so, and on a loaded process the work a turn does once
 * (the session's events, its record saved, its metrics, its log lines, the playback wait) was about
 * a twentieth of the gateway's CPU: too little for a timed run to see a change to it, too much to
 * leave unmeasured.
 *
 * The counted child (turn-counts-child.ts) runs `--sessions N` sessions (default 50) of a build on
 * a carrier-like link, under virtual time: `--mode s2s` (the default) on the package's scripted
 * service, `--mode pipeline` on its STT and TTS fakes and a streaming model; a round is three turns
 * of each (two replies play out, the third is barged in on). Each count is the
 * difference of two processes, one running 1 and the other 31 rounds after the warm-up rounds,
 * divided by the turns between them: start-up, module loading, the sessions' set-up and the
 * JIT's start-up work cancel out. The harness's own work (the scripted events, the virtual clock's
 * timer scans) is in the counts; it is the same for every build, so a `--vs` difference is the
 * gateway's. V8's compiling inside the window is not the same from run to run (tens of thousands
 * of instructions a turn), so the first row leaves it out (shared/cachegrind.ts) and is the one to
 * judge by; a build's reading of it moved by up to 10% between runs, so repeat one that moves.
 *
 * A third process of each build runs the same rounds outside cachegrind, with the same flags, and
 * samples what they allocate (bench/shared/allocation.ts): bytes a turn, the harness's included.
 *
 * Needs `valgrind` and `setarch`. Options: --dist, --dist-of DIR (a build is counted), --vs DIR
 * (another build beside this one; prints only), --mode s2s|pipeline, --sessions N, --sites N
 * (print each build's N sites that allocated most), --no-docs. Results go to stdout and to
 * docs/benchmarks.md between the bench:turn-counts markers (s2s) or the bench:pipeline-turn-counts
 * ones. About a minute and a half on 2 cores (s2s; the pipeline about three).
 */
import { rmSync } from "node:fs";
import { cpus } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Allocation } from "../shared/allocation.js";
import { COUNT_ROWS, counted, perUnit, pooled, sampled, simulatedCaches, transpiledChild, type Counts } from "../shared/cachegrind.js";
import { countOption, docSection, flagValue, publishSection, runBench } from "../shared/common.js";
import { gatewayFromText, gatewaySource } from "../shared/gateway-modules.js";

const RUN_LIMIT_MS = 30 * 60_000;
const MODES = ["s2s", "pipeline"] as const;
type Mode = (typeof MODES)[number];
const SECTIONS = { s2s: docSection("bench:turn-counts"), pipeline: docSection("bench:pipeline-turn-counts") } as const;
/** How the report says what a round is. */
const ROUND_TEXT: Readonly<Record<Mode, string>> = {
  s2s: "speech-to-speech sessions on the scripted service",
  pipeline: "pipeline sessions on the STT and TTS fakes and a streaming model",
};
/** Rounds in the two processes whose difference is counted; three turns a round. */
const ROUNDS = [1, 31] as const;
const TURNS_PER_ROUND = 3;

function modeOption(value: string | undefined): Mode {
  const mode = MODES.find((m) => m === (value ?? "s2s"));
  if (mode === undefined) throw new Error(`--mode must be one of ${MODES.join(", ")}, got ${value ?? ""}`);
  return mode;
}

async function parent(): Promise<number> {
  const began = Date.now();
  const caches = simulatedCaches("bench:turn-counts");
  const source = gatewaySource(process.argv);
  if (source.gatewayFrom !== "dist") throw new Error("bench:turn-counts counts a build: pass --dist (after `npm run build`) or --dist-of DIR");
  const vs = flagValue(process.argv, "vs");
  const sessions = countOption(flagValue(process.argv, "sessions"), 50, "sessions");
  const mode = modeOption(flagValue(process.argv, "mode"));
  const section = SECTIONS[mode];
  const builds = [{ name: "this build", root: source.gatewayRoot.href }, ...(vs === undefined ? [] : [{ name: vs, root: pathToFileURL(`${resolve(vs, "dist")}/`).href }])];
  const sites = flagValue(process.argv, "sites") === undefined ? 0 : countOption(flagValue(process.argv, "sites"), 0, "sites");
  const child = transpiledChild(["session/turn-counts-child.ts", "shared/allocation.ts"]);
  const jobs = builds.flatMap((build) => ROUNDS.map((rounds) => () => counted(caches, child.entry, [`${sessions}:${rounds}`, build.root, mode])));
  console.log(`bench:turn-counts: ${jobs.length} processes under cachegrind, ${cpus().length} at a time, then one a build sampling its allocations`);
  const turns = (ROUNDS[1] - ROUNDS[0]) * TURNS_PER_ROUND * sessions;
  // Sampled after the counted ones: a loaded machine moves what cachegrind counts (docs/benchmarks.md).
  const [results, allocations] = await pooled(jobs, cpus().length)
    .then(async (counts) => [counts, await pooled(builds.map((build) => () => sampled(child.entry, [`${sessions}:${ROUNDS[1] - ROUNDS[0]}`, build.root, mode, "alloc"])), 1)] as const)
    .finally(() => rmSync(child.dir, { recursive: true, force: true }));
  const perTurn = builds.map((_, b): Counts => perUnit(results[2 * b + 1] as Counts, results[2 * b] as Counts, turns));
  const [mine, other] = perTurn as [Counts, Counts | undefined];
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; the gateway ${gatewayFromText(source.gatewayFrom)}; ${sessions} ${ROUND_TEXT[mode]}; per turn over ${turns} turns (a barge-in every third); simulated caches ${caches.text}; ${((Date.now() - began) / 60_000).toFixed(1)} min.`,
    "",
    `| a turn's | this build |${other === undefined ? "" : ` ${vs} | this − that |`}`,
    `|---|--:|${other === undefined ? "" : "--:|--:|"}`,
  ];
  // The code's own work first: V8's compiling lands in one window or the next (cachegrind.ts).
  const rows: readonly (readonly [keyof Counts, string])[] = [["running", "instructions, V8's compiling left out"], ["compiling", "instructions V8 spent compiling"], ...COUNT_ROWS];
  for (const [key, label] of rows) {
    const digits = key === "instructions" || key === "running" || key === "compiling" ? 0 : 1;
    lines.push(`| ${label} | ${mine[key].toFixed(digits)} |${other === undefined ? "" : ` ${other[key].toFixed(digits)} | ${(mine[key] - other[key]).toFixed(digits)} |`}`);
  }
  const [mineBytes, otherBytes] = allocations.map((allocation) => allocation.bytes / turns) as [number, number | undefined];
  lines.push(`| bytes allocated (sampled; the harness's included) | ${mineBytes.toFixed(0)} |${otherBytes === undefined ? "" : ` ${otherBytes.toFixed(0)} | ${(mineBytes - otherBytes).toFixed(0)} |`}`);
  if (sites > 0) for (const [b, allocation] of allocations.entries()) console.log(siteTable(builds[b]?.name ?? "", allocation, turns, sites));
  if (vs !== undefined) console.log(lines.join("\n"));
  else publishSection("bench:turn-counts", section, lines.join("\n"));
  return 0;
}

/** A build's `count` sites that allocated most, in bytes a turn. */
function siteTable(name: string, allocation: Allocation, turns: number, count: number): string {
  const rows = allocation.sites.slice(0, count).map(({ site, bytes }) => `| ${(bytes / turns).toFixed(0)} | ${site} |`);
  return [`\nbench:turn-counts: where ${name} allocated (bytes a turn; a frame inlines what it calls)`, "", "| bytes | site (‹ its caller) |", "|--:|---|", ...rows].join("\n");
}

runBench("bench:turn-counts", RUN_LIMIT_MS, parent);
