/**
 * `npm run bench:s2s`: the gateway's added latency on the s2s path (provider audio → client
 * frame), and its cost per session, against a minimal relay measured in the same run.
 *
 * This process runs the gateway (createGateway on 127.0.0.1:0, an `openai-realtime` s2s agent)
 * and, in-process, the loopback fake OpenAI Realtime server it talks to (bench/s2s/fake-host.ts).
 * Two child processes: bench/s2s/load.ts (the callers) and bench/s2s/relay.ts (the baseline,
 * with its own in-process fake). Each server takes a warm-up, then N sessions × T turns.
 *
 * Options: --sessions N (env BENCH_SESSIONS, default 50), --turns T (BENCH_TURNS, default 5),
 * --no-docs (print only). Results go to stdout and to docs/benchmarks.md, between the
 * bench:s2s markers.
 */
import type { ChildProcess } from "node:child_process";
import { cpus } from "node:os";
import { createLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import { baseOptions, compareWithRelay, docSection, driveLoad, finishRun, inProcessGateway, ms, phaseFigures, phasePlan, phaseProblems, ratio, relayLink, relayServer, runBench, within, writeSection, type BaseOptions, type LoadLink, type MeasuredServerBase, type PhaseFigures } from "../shared/common.js";
import type { Arrival, LoadPlan, ToRelay } from "../shared/protocol.js";
import { FakeHost, type DeltaMark } from "./fake-host.js";
import { summarize, type ProcessMeter, type Summary } from "../shared/stats.js";

/** The bar: added latency, provider audio → frame, p99 ≤ 2 ms at 200 calls. */
const BAR_MS = 2;
const BAR_CALLS = 200;
const RUN_LIMIT_MS = 88_000;
const PHASE_LIMIT_MS = 35_000;
const { path: DOCS, start: START, end: END } = docSection("bench:s2s");

function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BaseOptions {
  return baseOptions(argv, env, 5);
}

interface Taken {
  readonly marks: DeltaMark[];
  readonly violations: number;
}

interface MeasuredServer extends MeasuredServerBase<Taken> {
  turn(client: number, turn: number): void;
}

async function startGateway(meter: ProcessMeter): Promise<{ server: MeasuredServer; close: () => Promise<void> }> {
  const host = await FakeHost.start();
  const def = agent({ name: "bench-s2s", greeting: "Welcome to the bench line.", s2s: { kind: "openai-realtime", options: { url: host.service.url } } });
  // Logs at info, as deployed, written nowhere; Prometheus process metrics on.
  const logger = createLogger({ level: "info", destination: { write: () => true } });
  const gateway = createGateway({ agent: def, logger, env: { OPENAI_API_KEY: "test-key" } });
  const { port } = await gateway.listen(0, "127.0.0.1");
  const server: MeasuredServer = {
    ...inProcessGateway(meter, port, () => host.take(), () => gateway.sessions > 0 || host.service.openSockets() > 0),
    turn: (client, turn) => host.turn(client, turn),
  };
  return {
    server,
    close: async () => {
      await gateway.close();
      await host.service.close();
    },
  };
}

async function startRelay(child: ChildProcess): Promise<MeasuredServer> {
  return {
    ...relayServer<Taken>(await relayLink(child), 200),
    turn: (client, turn) => child.send({ type: "final", client, turn } satisfies ToRelay),
  };
}

interface PhaseResult extends PhaseFigures {
  readonly audioToClient: Summary;
  readonly violations: number;
}

async function runPhase(load: LoadLink, server: MeasuredServer, sessions: number, turns: number): Promise<PhaseResult> {
  const plan = phasePlan(server.url, sessions, turns);
  load.target((client, turn) => server.turn(client, turn));
  const driven = await driveLoad(load, server, plan);
  const { marks, violations } = driven.taken;
  return summarizePhase(server.name, plan, marks, driven.arrivals, { ...driven, violations });
}

function summarizePhase(
  server: "gateway" | "relay",
  plan: LoadPlan,
  marks: readonly DeltaMark[],
  arrivals: readonly Arrival[],
  m: Parameters<typeof phaseFigures>[2] & { violations: number },
): PhaseResult {
  const sent = new Map(marks.map((mark) => [`${mark.client}:${mark.turn}`, mark.t2]));
  const latency: number[] = [];
  for (const a of arrivals) {
    const t2 = sent.get(`${a.client}:${a.turn}`);
    if (t2 !== undefined) latency.push(a.t3 - t2);
  }
  return { ...phaseFigures(server, plan, m), audioToClient: summarize(latency), violations: m.violations };
}

// ── report ──────────────────────────────────────────────────────────────────────────────

interface Report {
  readonly options: BaseOptions;
  readonly gateway: PhaseResult;
  readonly relay: PhaseResult;
  readonly idleRss: { readonly gateway: number; readonly relay: number };
  readonly elapsedMs: number;
}


function table(report: Report): string {
  const { gateway: g, relay: r } = report;
  const rows = [`| figure (${g.sessions} sessions) | gateway | relay | gateway ÷ relay |`, "|---|--:|--:|--:|"];
  const row = (figure: string, pick: (p: PhaseResult) => number, format: (v: number) => string = ms, compare = true): void => {
    rows.push(`| ${figure} | ${format(pick(g))} | ${format(pick(r))} | ${compare ? ratio(pick(g), pick(r)) : ""} |`);
  };
  for (const p of ["p50", "p95", "p99", "max"] as const) row(`provider audio delta sent → client frame, ${p} (ms)`, (x) => x.audioToClient[p]);
  row("CPU per session-second (ms, service fake included)", (x) => x.cpuMsPerSessionSecond, (v) => v.toFixed(2));
  row("CPU per turn, all included (ms)", (x) => x.window.cpuMs / x.expected, (v) => v.toFixed(2));
  row("RSS per live session (KiB)", (x) => x.rssPerSessionKiB, (v) => v.toFixed(0));
  row("JS heap per live session (KiB)", (x) => x.heapPerSessionKiB, (v) => v.toFixed(0));
  row("event-loop delay p99 (ms)", (x) => x.window.loopDelayP99Ms);
  row("client process: CPU (ms per second)", (x) => (x.tally === undefined ? Number.NaN : x.tally.window.cpuMs / (x.tally.window.wallMs / 1000)), (v) => v.toFixed(1));
  row("server → client audio frames per turn", (x) => (x.tally?.binaryFrames ?? Number.NaN) / x.expected, (v) => v.toFixed(1));
  row("turns measured", (x) => x.audioToClient.n, (v) => v.toFixed(0));
  row("other load on the machine during the turns (cores)", (x) => x.otherCores, (v) => (Number.isNaN(v) ? "–" : Math.max(0, v).toFixed(2)), false);
  rows.push(`| idle process RSS (MiB) | ${(report.idleRss.gateway / 2 ** 20).toFixed(1)} | ${(report.idleRss.relay / 2 ** 20).toFixed(1)} | ${ratio(report.idleRss.gateway, report.idleRss.relay)} |`);
  return rows.join("\n");
}

function verdict(report: Report): string {
  const g = report.gateway;
  const p99 = g.audioToClient.p99;
  const added = p99 - report.relay.audioToClient.p99;
  return (
    `**Verdict: ${p99 <= BAR_MS ? "within" : "over"} the bar (added latency, provider audio → frame, p99 ≤ ${BAR_MS} ms at ${BAR_CALLS} calls), ` +
    `measured at ${g.sessions} sessions, not ${BAR_CALLS}** — gateway p99 ${ms(p99)} ms end to end on loopback (relay floor p99 ${ms(report.relay.audioToClient.p99)} ms, ` +
    `gateway − relay p99 ${ms(added)} ms).` +
    (g.otherCores > 0.25 ? ` Other work used ${g.otherCores.toFixed(2)} cores of the machine meanwhile: the tail may be the machine's.` : "")
  );
}

function section(report: Report): string {
  const cpu = cpus();
  return [
    START,
    "## Speech-to-speech: provider audio → client frame, and cost per session",
    "",
    "Run `npm run bench:s2s` (options `--sessions N` / `BENCH_SESSIONS`, default 50; `--turns T` / `BENCH_TURNS`, default 5; `--no-docs`). " +
      "The runner hosts the gateway (an `openai-realtime` s2s agent) and the loopback fake Realtime server (`fakes/openai-realtime.ts`, " +
      "unpaced: 200 ms of 24 kHz audio per reply in 20 ms deltas, one event-loop turn apart). Callers (`bench/s2s/load.ts`, own process) stream a " +
      "20 ms PCM16 16 kHz frame every 20 ms and take turns: the runner plays `userSays` on that caller's fake connection. Latency is from the fake " +
      "handing a reply's first `response.output_audio.delta` to its socket (monoMs, in the server process) to the caller receiving the reply's first " +
      "binary frame (monoMs, client process): two loopback hops, JSON + base64 decode, resampling and the gateway's own path. The floor is " +
      "`bench/s2s/relay.ts`: a hand-written relay (base64 → linear resample → `ws.send`) with its own in-process fake, so both CPU figures include the fake.",
    "",
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpu[0]?.model.trim() ?? "unknown CPU"} (${cpu.length} cores), Node ${process.version}, ` +
      `${process.platform}/${process.arch}; ${report.options.sessions} sessions × ${report.options.turns} turns after a 10 × 2 warm-up per server, ${(report.elapsedMs / 1000).toFixed(0)} s in all.`,
    "",
    table(report),
    "",
    verdict(report),
    END,
  ].join("\n");
}

function writeDocs(report: Report): void {
  writeSection(DOCS, START, END, section(report));
}

// ── main ────────────────────────────────────────────────────────────────────────────────

function problems(results: readonly PhaseResult[]): string[] {
  return phaseProblems(results, (r) => [
    ...(r.audioToClient.n !== r.expected ? [`${r.audioToClient.n} of ${r.expected} turns measured`] : []),
    ...(r.violations > 0 ? [`${r.violations} protocol violations at the fake`] : []),
  ]);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const began = Date.now();
  return compareWithRelay(new URL(".", import.meta.url), startGateway, startRelay, async ({ gateway, idleGateway, relay, idleRelay, load }) => {
    const phase = (server: MeasuredServer, sessions: number, turns: number): Promise<PhaseResult> =>
      within(runPhase(load, server, sessions, turns), PHASE_LIMIT_MS, `${server.name} with ${sessions} sessions`);
    console.log(`bench:s2s: gateway ${gateway.url}, relay ${relay.url}; warming up`);
    await phase(relay, 10, 2);
    await phase(gateway, 10, 2);
    console.log(`bench:s2s: ${options.sessions} sessions × ${options.turns} turns`);
    const relayResult = await phase(relay, options.sessions, options.turns);
    const gatewayResult = await phase(gateway, options.sessions, options.turns);
    const report: Report = { options, gateway: gatewayResult, relay: relayResult, idleRss: { gateway: idleGateway.rss, relay: idleRelay.rss }, elapsedMs: Date.now() - began };
    console.log(`\n${table(report)}\n\n${verdict(report)}\n`);
    const found = problems([relayResult, gatewayResult]);
    return finishRun("bench:s2s", found, options.docs, () => writeDocs(report), DOCS);
  });
}

runBench("bench:s2s", RUN_LIMIT_MS, main);
