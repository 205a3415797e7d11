/**
 * Before/after: runs benchmarks at a base revision and at the working tree, one after the other
 * in the same session (machines are shared and noisy: figures are only comparable within a run),
 * and writes the figures that matter side by side into docs/benchmarks.md.
 *
 *   npm run bench:compare -- --base <rev> [--benches pipeline,s2s,telephony] [--rounds 2] [--no-docs]
 *
 * The base is checked out in a temporary git worktree sharing this checkout's node_modules; each
 * bench runs there with `--no-docs` (older trees kept benches as bench/<name>.ts, newer ones as
 * bench/<name>/run.ts: both are found). Rows are picked from each bench's printed tables by their
 * first cell; a bench whose output lacks a row shows "–" for it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { docSection, flagValue, writeSection } from "../shared/common.js";

const ROOT = resolve(import.meta.dirname, "../..");
const { path: DOCS, start: START, end: END } = docSection("bench:compare");

/** What each bench is run with, and the rows (by first cell) the comparison keeps. */
const BENCHES: Readonly<Record<string, { readonly args: readonly string[]; readonly rows: readonly string[] }>> = {
  pipeline: {
    // One round each: the comparison alternates base and head rounds itself.
    args: ["--rounds", "1"],
    rows: [
      "STT final → first audio frame at the client, p50 (ms)",
      "STT final → first audio frame at the client, p99 (ms)",
      "CPU per session-second (ms)",
      "CPU per turn, all included (ms)",
      "other load on the machine during the turns (cores)",
    ],
  },
  s2s: {
    args: [],
    rows: [
      "provider audio delta sent → client frame, p50 (ms)",
      "provider audio delta sent → client frame, p99 (ms)",
      "CPU per session-second (ms, service fake included)",
      "CPU per turn, all included (ms)",
      "other load on the machine during the turns (cores)",
    ],
  },
  telephony: { args: ["--calls", "50,100", "--rounds", "1"], rows: ["50", "100"] },
};

function benchFile(tree: string, name: string): string {
  const nested = join(tree, "bench", name, "run.ts");
  return existsSync(nested) ? nested : join(tree, "bench", `${name}.ts`);
}

/** Runs one bench in `tree`; its stdout (the tables), or the failure in one line. */
function runIn(tree: string, name: string): string {
  const bench = BENCHES[name];
  if (bench === undefined) throw new Error(`unknown bench ${name}; known: ${Object.keys(BENCHES).join(", ")}`);
  console.log(`bench:compare: ${name} in ${tree}`);
  const run = spawnSync(process.execPath, ["--import", "tsx", benchFile(tree, name), "--no-docs", ...bench.args], { cwd: tree, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) return `failed (exit ${run.status ?? run.signal}): ${(run.stderr || run.stdout).trim().split("\n").at(-1) ?? ""}`;
  return run.stdout;
}

/** The rows whose first cell is `label`, from the first table of `output` that has any (telephony: one per server at that call count). */
function rowsOf(output: string, label: string): string[][] {
  const tables: string[][][] = [];
  let table: string[][] = [];
  for (const line of output.split("\n")) {
    if (!line.startsWith("| ")) {
      if (table.length > 0) tables.push(table);
      table = [];
      continue;
    }
    table.push(
      line
        .slice(2, -2)
        .split(" | ")
        .map((cell) => cell.trim()),
    );
  }
  if (table.length > 0) tables.push(table);
  for (const rows of tables) {
    const picked = rows.filter((cells) => cells[0] === label);
    if (picked.length > 0) return picked;
  }
  return [];
}

/** One round: the bench's output before (base) and after (head). */
interface Round {
  readonly before: string;
  readonly after: string;
}

function compareSection(name: string, rounds: readonly Round[]): string {
  const bench = BENCHES[name];
  if (bench === undefined) return "";
  const runs = rounds.flatMap((round, i) => [
    { which: `before, round ${i + 1}`, output: round.before },
    { which: `after, round ${i + 1}`, output: round.after },
  ]);
  const lines = [`### ${name}`, ""];
  for (const { which, output } of runs) if (output.startsWith("failed")) lines.push(`- ${which}: ${output}`);
  lines.push("| figure | run | cells as the bench prints them |", "|---|---|---|");
  for (const label of bench.rows) {
    for (const { which, output } of runs) {
      const rows = rowsOf(output, label);
      if (rows.length === 0) lines.push(`| ${label} | ${which} | – |`);
      for (const cells of rows) lines.push(`| ${label} | ${which} | ${cells.slice(1).join(" · ")} |`);
    }
  }
  return lines.join("\n");
}

function main(): number {
  const argv = process.argv.slice(2);
  const base = flagValue(argv, "base");
  if (base === undefined) {
    console.error("usage: npm run bench:compare -- --base <rev> [--benches pipeline,s2s,telephony] [--rounds 2] [--no-docs]");
    return 2;
  }
  const roundCount = Number(flagValue(argv, "rounds") ?? "2");
  if (!Number.isInteger(roundCount) || roundCount < 1) {
    console.error("bench:compare: --rounds must be a whole number ≥ 1");
    return 2;
  }
  const names = (flagValue(argv, "benches") ?? "pipeline,s2s,telephony").split(",").filter((n) => n !== "");
  const rev = spawnSync("git", ["rev-parse", "--short", base], { cwd: ROOT, encoding: "utf8" }).stdout.trim();
  const headRev = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout.trim();
  if (rev === "") {
    console.error(`bench:compare: no revision ${base}`);
    return 2;
  }
  const tree = mkdtempSync(join(tmpdir(), "sb-compare-"));
  rmSync(tree, { recursive: true });
  const added = spawnSync("git", ["worktree", "add", "--detach", tree, rev], { cwd: ROOT, encoding: "utf8" });
  if (added.status !== 0) {
    console.error(`bench:compare: git worktree add failed: ${added.stderr.trim()}`);
    return 1;
  }
  const started = Date.now();
  const sections: string[] = [];
  try {
    symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
    for (const name of names) {
      const rounds: Round[] = [];
      for (let round = 0; round < roundCount; round++) rounds.push({ before: runIn(tree, name), after: runIn(ROOT, name) });
      sections.push(compareSection(name, rounds));
    }
  } finally {
    spawnSync("git", ["worktree", "remove", "--force", tree], { cwd: ROOT });
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  const body = [
    START,
    "## Before/after: a base revision against the working tree",
    "",
    `Run \`npm run bench:compare -- --base <rev>\` (options \`--benches pipeline,s2s,telephony\`, \`--rounds N\` (default 2), \`--no-docs\`). Each bench runs at the base revision (a temporary git worktree) and then at the working tree, back to back, N rounds alternating, so both sides saw the same machine; the cells are the bench's own (for pipeline: gateway · relay · ratio at 1 session, then at 50; for s2s: gateway · relay · ratio; for telephony: server · CPU per call · RSS · heap · latencies · barge-ins · CPU ÷ floor · CPU ÷ SDK, one line per server). Read the ratios against each run's own floor, not the raw milliseconds, and the "other load" row before trusting a tail.`,
    "",
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpus()[0]?.model.trim() ?? "unknown CPU"} (${cpus().length} cores), Node ${process.version}; base ${rev}, head ${headRev} plus the working tree; ${seconds} s in all.`,
    "",
    ...sections.flatMap((section) => [section, ""]),
    END,
  ].join("\n");
  console.log(body);
  if (!argv.includes("--no-docs")) writeSection(DOCS, START, END, body);
  return 0;
}

process.exitCode = main();
