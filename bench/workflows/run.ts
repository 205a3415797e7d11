/**
 * `npm run bench:workflows`: what the workflow engine costs on each store (docs/workflows.md
 * "Where runs live"): runs in a directory (the baseline) and in PostgreSQL (a private server
 * started for the run, as the tests do: fakes/postgres-server.ts). One process, about 1 min.
 *
 * The SDK keeps one world per process, so the two stores cannot run side by side: each round
 * opens the engine on the directory, measures, closes it, then does the same on the database,
 * and rounds alternate so drift on a shared machine falls on both. Per round, on the monotonic
 * clock (`monoMs`):
 * - **open**: `createWorkflowEngine` until it resolves (schemas, the world's start, the first prune);
 * - **start()**: the `start` call of a one-step run, until it returns the run id;
 * - **one-step run**: from `start` to its end heard through `onRunEnd` (the store's own
 *   announcement: in process on a directory, LISTEN/NOTIFY on PostgreSQL);
 * - **ten-step run**: the same for ten steps; **per step** is (ten-step − one-step) ÷ 9 of the
 *   medians: the engine's cost of one more step (the body replays from the top after each).
 * The report quotes PostgreSQL against the directory of the same run.
 *
 * Options: --rounds N (default 3), --runs N (runs of each kind per round, default 10),
 * --no-docs (print only). Results go to stdout and to docs/benchmarks.md between the
 * bench:workflows markers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { workflow } from "../../src/manifest/index.js";
import { createWorkflowEngine, type RunEnd, type RunsIn } from "../../src/workflows/index.js";
import { POSTGRES_BIN, startPostgres } from "../../fakes/postgres-server.js";
import { countOption, docSection, flagValue, ms, ratio, runBench, writeSection } from "../shared/common.js";
import { monoMs, summarize, type Summary } from "../shared/stats.js";

const RUN_LIMIT_MS = 600_000;
const { path: DOCS, start: START, end: END } = docSection("bench:workflows");

const workflows = {
  one: workflow({ description: "One step", steps: { add: (n: number) => n + 1 } }).body(async (_input, ctx) => ctx.steps.add(0)),
  ten: workflow({ description: "Ten steps", steps: { add: (n: number) => n + 1 } }).body(async (_input, ctx) => {
    let n = 0;
    for (let k = 0; k < 10; k += 1) n = await ctx.steps.add(n);
    return n;
  }),
};

interface Figures {
  open: number[];
  start: number[];
  one: number[];
  ten: number[];
}

/** The runs' ends as `onRunEnd` hears them: `of(runId)` resolves with one, whether it came before or after the ask. */
class Ends {
  readonly #heard = new Map<string, RunEnd>();
  readonly #waiting = new Map<string, (end: RunEnd) => void>();

  hear(end: RunEnd): void {
    const waiter = this.#waiting.get(end.runId);
    if (waiter === undefined) this.#heard.set(end.runId, end);
    else waiter(end);
  }

  of(runId: string): Promise<RunEnd> {
    const heard = this.#heard.get(runId);
    return heard !== undefined ? Promise.resolve(heard) : new Promise((resolve) => this.#waiting.set(runId, resolve));
  }
}

async function round(runsIn: RunsIn, runs: number, into: Figures): Promise<void> {
  const opening = monoMs();
  const engine = await createWorkflowEngine({ ...runsIn, workflows });
  into.open.push(monoMs() - opening);
  const ends = new Ends();
  engine.onRunEnd((end) => ends.hear(end));
  try {
    for (const [name, sink] of [["one", into.one], ["ten", into.ten]] as const) {
      for (let i = 0; i < runs; i += 1) {
        const began = monoMs();
        const { runId } = await engine.start(name, {});
        if (name === "one") into.start.push(monoMs() - began);
        const end = await ends.of(runId);
        if (end.status !== "completed") throw new Error(`run ${runId} of ${name} ended ${end.status}`);
        sink.push(monoMs() - began);
      }
    }
  } finally {
    await engine.close();
  }
}

async function main(): Promise<number> {
  const rounds = countOption(flagValue(process.argv, "rounds"), 3, "rounds");
  const runs = countOption(flagValue(process.argv, "runs"), 10, "runs");
  const docs = !process.argv.includes("--no-docs");
  const began = monoMs();
  const dir = mkdtempSync(join(tmpdir(), "bench-wf-"));
  const postgres = POSTGRES_BIN === undefined ? undefined : await startPostgres();
  if (postgres === undefined) console.warn("PostgreSQL is not installed (apt-get install postgresql): the directory only");
  const stores: Array<{ label: string; runsIn: RunsIn; figures: Figures }> = [{ label: "directory (baseline)", runsIn: { dir }, figures: { open: [], start: [], one: [], ten: [] } }];
  if (postgres !== undefined) stores.push({ label: "PostgreSQL", runsIn: { database: postgres.database("bench") }, figures: { open: [], start: [], one: [], ten: [] } });
  try {
    // One unreported round each: the JIT, the SDK's first imports, the database's first set-up.
    for (const store of stores) await round(store.runsIn, 2, { open: [], start: [], one: [], ten: [] });
    for (let r = 0; r < rounds; r += 1) for (const store of r % 2 === 0 ? stores : [...stores].reverse()) await round(store.runsIn, runs, store.figures);
  } finally {
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const summaries = stores.map((store) => ({ open: summarize(store.figures.open), start: summarize(store.figures.start), one: summarize(store.figures.one), ten: summarize(store.figures.ten) }));
  const perStep = summaries.map((s) => (s.ten.p50 - s.one.p50) / 9);
  const row = (label: string, values: readonly number[]): string => {
    const [base, ...rest] = values;
    return `| ${label} | ${values.map((v) => ms(v)).join(" | ")} |${rest.length > 0 ? ` ${rest.map((v) => ratio(v, base ?? 0)).join(" | ")} |` : ""}`;
  };
  const pick = (figure: (s: (typeof summaries)[number]) => Summary, at: (s: Summary) => number): number[] => summaries.map((s) => at(figure(s)));
  const cpu = cpus()[0]?.model.trim().split(/\s+/).slice(0, 2).join(" ") ?? "unknown CPU";
  const others = stores.slice(1).map((s) => `${s.label} ÷ directory`);
  const body = [
    START,
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpu} (${cpus().length} cores), Node ${process.version}, ${process.platform}/${process.arch}; ${rounds} rounds per store, alternating, ${runs} runs of each kind per round, after one unreported round each; ${((monoMs() - began) / 1000).toFixed(0)} s in all.`,
    "",
    `| figure (ms) | ${stores.map((s) => s.label).join(" | ")} |${others.length > 0 ? ` ${others.join(" | ")} |` : ""}`,
    `|---|${stores.map(() => "--:").join("|")}|${others.map(() => "--:").join("|")}${others.length > 0 ? "|" : ""}`,
    row("open the engine, p50", pick((s) => s.open, (s) => s.p50)),
    row("start(), p50", pick((s) => s.start, (s) => s.p50)),
    row("start(), p95", pick((s) => s.start, (s) => s.p95)),
    row("one-step run, start → end heard, p50", pick((s) => s.one, (s) => s.p50)),
    row("one-step run, start → end heard, p95", pick((s) => s.one, (s) => s.p95)),
    row("ten-step run, start → end heard, p50", pick((s) => s.ten, (s) => s.p50)),
    row("per step, (ten − one) ÷ 9 of the p50s", perStep),
    END,
  ].join("\n");
  console.log(body);
  if (docs) writeSection(DOCS, START, END, body);
  return 0;
}

runBench("bench:workflows", RUN_LIMIT_MS, main);
