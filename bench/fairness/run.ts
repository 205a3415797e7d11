/**
 * `npm run bench:fairness`: what one abusive neighbour costs a well-behaved session (issue 14
 * item 5). This process runs the gateway (createGateway on 127.0.0.1:0, a pipeline agent on the
 * zero-latency fakes of bench/shared/providers.ts, logging at info to nowhere). A victim peer takes typed
 * turns and times each from `user_text` sent to the reply's first audio frame; it runs alone,
 * then beside an abuser peer flooding one way as fast as the gateway will read it: `cancel`
 * commands, invalid JSON, 1 MiB audio frames at 48 kHz (the costliest audio path), maximum-length
 * typed turns, then all four at once. Peers are their own processes (bench/fairness/peer.ts).
 * The victim's figures beside an abuser are quoted against its figures alone in the same run.
 *
 * Options: --turns N victim turns per scenario (env BENCH_TURNS, default 500), --no-docs (print
 * only). Results go to stdout and to docs/reliability.md, between the fairness markers.
 */
import type { ChildProcess } from "node:child_process";
import { countOption, docSection, flagValue, forkBench, ms, ratio, runBench, sleep, within, writeSection } from "../shared/common.js";
import { benchGateway } from "../shared/providers.js";
import type { AbuseMode, FromPeer, ToPeer } from "./protocol.js";
import { summarize, type Summary } from "../shared/stats.js";

const { path: DOCS, start: START, end: END } = docSection("fairness", "reliability.md");
const RUN_LIMIT_MS = 300_000;
/** The victim pauses this long between turns (ms): a conversation, not a benchmark loop. */
const GAP_MS = 20;
/** The flood builds up this long before the victim starts (ms). */
const WARMUP_MS = 1000;

type Scenario = "alone" | AbuseMode;
const SCENARIOS: readonly Scenario[] = ["alone", "cancel", "invalid-json", "audio", "typed", "all"];
const DESCRIBED: Record<Scenario, string> = {
  alone: "alone",
  cancel: "`cancel` flood",
  "invalid-json": "invalid JSON flood",
  audio: "1 MiB audio frames (48 kHz)",
  typed: "20 000-character `user_text` flood",
  all: "all four at once (4 connections)",
};

interface Result {
  readonly scenario: Scenario;
  readonly firstAudio: Summary;
  readonly completed: Summary;
  readonly errors: number;
  /** Gateway CPU over the victim's run (% of one core). */
  readonly cpuPercent: number;
  /** What the abuser wrote to its socket while the victim ran (frames, MiB); the gateway read at most its budget of it. Zero alone. */
  readonly abuserFrames: number;
  readonly abuserMiB: number;
}

function ask(child: ChildProcess, message: ToPeer): void {
  child.send(message);
}

function next<T extends FromPeer["type"]>(child: ChildProcess, type: T): Promise<Extract<FromPeer, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: FromPeer): void => {
      if (message.type === "failed") reject(new Error(message.error));
      if (message.type !== type) return;
      child.off("message", onMessage);
      resolve(message as Extract<FromPeer, { type: T }>);
    };
    child.on("message", onMessage);
  });
}

async function scenario(url: string, which: Scenario, turns: number): Promise<Result> {
  const abuser = which === "alone" ? undefined : forkBench(new URL("./peer.ts", import.meta.url));
  const victim = forkBench(new URL("./peer.ts", import.meta.url));
  try {
    if (abuser !== undefined && which !== "alone") {
      const abusing = next(abuser, "abusing");
      ask(abuser, { type: "abuse", url, mode: which });
      await within(abusing, 10_000, "the abuser's start");
      await sleep(WARMUP_MS);
    }
    const cpu = process.cpuUsage();
    const started = performance.now();
    const done = next(victim, "victim-done");
    ask(victim, { type: "victim", url, turns, gapMs: GAP_MS });
    const outcome = await within(done, 120_000, `the victim's turns (${which})`);
    const used = process.cpuUsage(cpu);
    const wallMs = performance.now() - started;
    let abuserFrames = 0;
    let abuserMiB = 0;
    if (abuser !== undefined) {
      const stopped = next(abuser, "abuser-stopped");
      ask(abuser, { type: "stop" });
      const tally = await within(stopped, 10_000, "the abuser's stop");
      abuserFrames = tally.sent;
      abuserMiB = tally.bytes / (1024 * 1024);
    }
    return {
      scenario: which,
      firstAudio: summarize(outcome.firstAudioMs),
      completed: summarize(outcome.completedMs),
      errors: outcome.errors.length,
      cpuPercent: ((used.user + used.system) / 1000 / wallMs) * 100,
      abuserFrames,
      abuserMiB,
    };
  } finally {
    victim.kill();
    abuser?.kill();
  }
}

function table(results: readonly Result[]): string {
  const alone = results.find((r) => r.scenario === "alone");
  const rows = results.map((r) =>
    [
      DESCRIBED[r.scenario],
      r.firstAudio.n,
      ms(r.firstAudio.p50),
      ms(r.firstAudio.p99),
      ms(r.firstAudio.max),
      r.scenario === "alone" || alone === undefined ? "1×" : ratio(r.firstAudio.p99, alone.firstAudio.p99),
      ms(r.completed.p99),
      r.errors,
      r.cpuPercent.toFixed(0),
      r.abuserFrames === 0 ? "–" : `${r.abuserFrames} (${r.abuserMiB.toFixed(1)} MiB)`,
    ].join(" | "),
  );
  return [
    "| neighbour | victim turns | first audio p50 (ms) | p99 (ms) | max (ms) | p99 ÷ alone | reply completed p99 (ms) | victim errors | gateway CPU (% core) | abuser wrote (frames) |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ...rows.map((row) => `| ${row} |`),
  ].join("\n");
}

/** The bound this run reached: the worst single abuser's p99, against alone. */
function bound(results: readonly Result[]): string {
  const alone = results.find((r) => r.scenario === "alone");
  const single = results.filter((r) => r.scenario !== "alone" && r.scenario !== "all");
  const all = results.find((r) => r.scenario === "all");
  if (alone === undefined || single.length === 0) return "";
  const worst = single.reduce((a, b) => (b.firstAudio.p99 > a.firstAudio.p99 ? b : a));
  const allText = all === undefined ? "" : ` With all four floods at once its p99 was ${ms(all.firstAudio.p99)} ms (${ratio(all.firstAudio.p99, alone.firstAudio.p99)}).`;
  return (
    `**Bound reached:** beside any one abusive neighbour the victim's p99 turn latency stayed within ` +
    `${ms(worst.firstAudio.p99 - alone.firstAudio.p99)} ms of its p99 alone (${ms(alone.firstAudio.p99)} → ${ms(worst.firstAudio.p99)} ms, ` +
    `${ratio(worst.firstAudio.p99, alone.firstAudio.p99)}, worst: ${DESCRIBED[worst.scenario]}), and no victim turn failed.${allText}`
  );
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const turns = countOption(flagValue(argv, "turns") ?? process.env.BENCH_TURNS, 500, "turns");
  const docs = !argv.includes("--no-docs");
  const { gateway, port } = await benchGateway("bench-fairness", "Hello.");
  const url = `ws://127.0.0.1:${port}/websocket`;
  const results: Result[] = [];
  try {
    // A first victim alone warms the gateway's code up (JIT); its figures are not kept.
    await scenario(url, "alone", Math.min(turns, 100));
    for (const which of SCENARIOS) {
      const result = await scenario(url, which, turns);
      results.push(result);
      console.log(`${DESCRIBED[which]}: first audio p50 ${ms(result.firstAudio.p50)} ms, p99 ${ms(result.firstAudio.p99)} ms, max ${ms(result.firstAudio.max)} ms; errors ${result.errors}`);
      for (let i = 0; i < 200 && gateway.sessions > 0; i++) await sleep(10);
    }
  } finally {
    await gateway.close();
  }
  const text = [
    START,
    `Last run: ${new Date().toISOString().slice(0, 10)}, ${turns} victim turns per row, \`npm run bench:fairness\`.`,
    "",
    table(results),
    "",
    bound(results),
    END,
  ].join("\n");
  console.log(`\n${table(results)}\n\n${bound(results)}`);
  if (docs) writeSection(DOCS, START, END, text);
  return results.some((r) => r.errors > 0) ? 1 : 0;
}

runBench("bench:fairness", RUN_LIMIT_MS, main);
