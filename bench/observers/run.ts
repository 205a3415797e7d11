/**
 * `npm run bench:observers`: what an agent's event observers (`events`, src/session/observers.ts)
 * cost a session, well-behaved and not. In one process, on the real clock: a text session on the
 * scripted model (a 40-word reply streamed a word every 5 ms, so ~40 `agent-transcript.updated`
 * per turn) runs TURNS turns under each observer; measured are the turn (user_text → metrics.turn)
 * and the event loop's delay (perf_hooks, 1 ms resolution) — the wait every other session on the
 * process shares. Then the emit path alone: ns per `observe()` for an event type nobody observes,
 * and for one a "*" observer copies. Results go to stdout and to docs/benchmarks.md between the
 * bench:observers markers (`--no-docs` leaves the docs alone).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { virtualClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log.js";
import { agent, type AgentEvents } from "../../src/manifest/index.js";
import { EventObservers } from "../../src/session/observers.js";
import { textSession } from "../../src/testing/text-session.js";
import { stamp, type EventBody } from "../../src/transport/protocol.js";
import { docSection, writeSection } from "../shared/common.js";
import { monoMs, summarize } from "../shared/stats.js";

const { path: DOCS, start: START, end: END } = docSection("bench:observers");
const TURNS = 20;
const REPLY = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");

/** Busy-wait: a synchronous observer doing `ms` of work (JSON, crypto, a sync log write…). */
function spin(ms: number): void {
  const until = monoMs() + ms;
  while (monoMs() < until);
}

const SCENARIOS: readonly { readonly name: string; readonly events: AgentEvents | undefined }[] = [
  { name: "no observers", events: undefined },
  { name: `"*", sync, does nothing`, events: { "*": () => {} } },
  { name: `"*", async, never settles`, events: { "*": () => new Promise<void>(() => {}) } },
  {
    name: `"*", throws every call`,
    events: {
      "*": () => {
        throw new Error("observer bug");
      },
    },
  },
  { name: "agent-transcript.updated, sync, 2 ms each", events: { "agent-transcript.updated": () => spin(2) } },
  { name: "agent-transcript.updated, sync, 20 ms each", events: { "agent-transcript.updated": () => spin(20) } },
];

interface Row {
  readonly name: string;
  readonly turnP50: number;
  readonly turnMax: number;
  readonly loopP99: number;
  readonly loopMax: number;
}

async function scenario(name: string, events: AgentEvents | undefined): Promise<Row> {
  const def = agent({ name: "bench", mode: "text", greeting: "", ...(events === undefined ? {} : { events }) });
  const { say, started } = textSession(def, { script: { rules: [{ when: ".*", say: REPLY, delayMs: 5 }] } });
  await started;
  await say("warm up");
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const turns: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    const t0 = monoMs();
    await say(`turn ${i}`);
    turns.push(monoMs() - t0);
  }
  // The observers of the last turn's events run after it: let them, so their delay is counted.
  await new Promise((resolve) => setTimeout(resolve, 100));
  loop.disable();
  const turn = summarize([...turns].sort((a, b) => a - b));
  return { name, turnP50: turn.p50, turnMax: turn.max, loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
}

/** ns per observe() call, over `n` calls of one event; the queue is drained at once, so observed calls include the (empty) observer's. */
function emitPath(events: AgentEvents, body: EventBody, n: number): number {
  const observers = EventObservers.for(events, { sessionId: "bench", mode: "text" }, { clock: virtualClock(), log: silentLogger, defer: (run) => run() })!;
  const sent = stamp(body, Date.now());
  for (let i = 0; i < 10_000; i++) observers.observe(body, sent);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) observers.observe(body, sent);
  return Number(process.hrtime.bigint() - t0) / n;
}

async function main(): Promise<void> {
  // The session's timers are unref'd (src/clock.ts): hold the process open while it runs.
  const hold = setInterval(() => {}, 1000);
  const rows: Row[] = [];
  for (const { name, events } of SCENARIOS) {
    const row = await scenario(name, events);
    rows.push(row);
    console.log(`${name.padEnd(48)} turn p50 ${row.turnP50.toFixed(1)} ms, max ${row.turnMax.toFixed(1)} ms; loop delay p99 ${row.loopP99.toFixed(1)} ms, max ${row.loopMax.toFixed(1)} ms`);
  }
  const delta: EventBody = { type: "agent-transcript.updated", text: REPLY.slice(0, 120) };
  const unobserved = emitPath({ "tool.completed": () => {} }, delta, 5_000_000);
  const observed = emitPath({ "*": () => {} }, delta, 200_000);
  console.log(`observe(), type nobody observes: ${unobserved.toFixed(1)} ns; observed by "*" (copy, freeze, queue, an empty observer's call): ${observed.toFixed(0)} ns`);

  const table = [
    "| observer | turn p50 (ms) | turn max (ms) | event-loop delay p99 (ms) | max (ms) |",
    "|---|---:|---:|---:|---:|",
    ...rows.map((r) => `| ${r.name} | ${r.turnP50.toFixed(1)} | ${r.turnMax.toFixed(1)} | ${r.loopP99.toFixed(1)} | ${r.loopMax.toFixed(1)} |`),
  ];
  const body = [
    START,
    `Node ${process.version}, ${TURNS} turns each, one text session, a 40-word reply streamed a word every 5 ms (\`npm run bench:observers\`).`,
    "",
    ...table,
    "",
    `The emit path alone: an event type nobody observes costs ${unobserved.toFixed(1)} ns per event (one map lookup); one a \`"*"\` observer receives, ${observed.toFixed(0)} ns (the JSON copy, the deep freeze, the queue entry and the call of an empty observer).`,
    END,
  ].join("\n");
  if (!process.argv.includes("--no-docs")) writeSection(DOCS, START, END, body);
  clearInterval(hold);
}

await main();
