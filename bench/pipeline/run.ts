/**
 * `npm run bench`: the gateway's own share of pipeline latency, and its cost per session.
 *
 * This process runs the gateway (createGateway, on 127.0.0.1:0) with zero-latency fakes for
 * STT, LLM and TTS (bench/shared/providers.ts). Two child processes: bench/pipeline/load.ts (the callers, `ws`
 * clients) and bench/pipeline/relay.ts (the baseline: a minimal hand-written relay on the same fakes).
 * Both servers take the same load, one after the other, at 1 session and at N sessions, and
 * the gateway is quoted as a ratio of the relay measured in the same run.
 *
 * Options: --sessions N (env BENCH_SESSIONS, default 50), --turns T per session (BENCH_TURNS,
 * default 10), --solo-turns T for the 1-session run (default 20), --dist / --dist-of DIR (the
 * gateway built: bench/shared/gateway-modules.ts), --no-docs (print only).
 * Results go to stdout and to docs/benchmarks.md, between the bench:pipeline markers.
 */
import type { ChildProcess } from "node:child_process";
import { cpus } from "node:os";
import { baseOptions, compareWithRelay, countOption, docSection, driveLoad, finishRun, flagValue, inProcessGateway, ms, phaseFigures, phasePlan, phaseProblems, ratio, relayLink, relayServer, runBench, sleep, within, writeSection, type BaseOptions, type LoadLink, type MeasuredServerBase, type PhaseFigures } from "../shared/common.js";
import { gatewayFromText, gatewaySource, type GatewaySource } from "../shared/gateway-modules.js";
import { benchGateway } from "../shared/providers.js";
import type { Arrival, LoadPlan, ToRelay, TurnMarks } from "../shared/protocol.js";
import { summarize, type MemorySample, type ProcessMeter, type Summary } from "../shared/stats.js";

/**
 * The bars (issue 23, at 50 sessions): each leg's gateway share — the gateway's p99 less the
 * relay's in the same round — at most `shareMs`; CPU per turn at most `cpuVsRelay` × the relay's.
 */
const BARS = { shareMs: 2, cpuVsRelay: 2 } as const;
/** Other load on the machine above this (cores) makes the verdict say the tail may be noise. */
const NOISY_CORES = 0.25;
/** Loaded rounds at most (`--rounds`); the whole run must end by itself within a minute plus 30 s a round. */
const MAX_ROUNDS = 9;
const RUN_LIMIT_MS = 60_000 + MAX_ROUNDS * 30_000;
const PHASE_LIMIT_MS = 40_000;
/** How long each server's idle CPU is measured (ms). */
const IDLE_WINDOW_MS = 2000;
const { path: DOCS, start: START, end: END } = docSection("bench:pipeline");

interface Options extends BaseOptions, GatewaySource {
  readonly soloTurns: number;
  /** Loaded phases per server, alternating: the verdict takes the median round. */
  readonly rounds: number;
}

function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): Options {
  const { sessions, turns, docs } = baseOptions(argv, env, 10);
  const rounds = countOption(flagValue(argv, "rounds") ?? env.BENCH_ROUNDS, 3, "rounds");
  if (rounds > MAX_ROUNDS) throw new Error(`--rounds must be at most ${MAX_ROUNDS}, got ${rounds}`);
  return { sessions, turns, soloTurns: countOption(flagValue(argv, "solo-turns"), 20, "solo-turns"), rounds, docs, ...gatewaySource(argv) };
}

// ── the two servers under test ──────────────────────────────────────────────────────────

/** A server the runner can measure: the gateway in this process, or the relay child. */
interface MeasuredServer extends MeasuredServerBase<{ readonly marks: TurnMarks[]; readonly mismatches: number }> {
  final(client: number, turn: number): void;
}

async function startGateway(meter: ProcessMeter, root: URL): Promise<{ server: MeasuredServer; close: () => Promise<void> }> {
  const { gateway, port, voice, recorder } = await benchGateway("bench", "Welcome to the bench line.", root);
  const final = (client: number, turn: number, attempt = 0): void => {
    // The runner can hear of a final before the gateway has read that client's first mic frame.
    if (!voice.final(client, turn) && attempt < 200) setTimeout(() => final(client, turn, attempt + 1), 5);
  };
  const server: MeasuredServer = {
    ...inProcessGateway(meter, port, () => recorder.take(), () => gateway.sessions > 0),
    final: (client, turn) => final(client, turn),
  };
  return { server, close: () => gateway.close() };
}

async function startRelay(child: ChildProcess): Promise<MeasuredServer> {
  return {
    ...relayServer<{ marks: TurnMarks[]; mismatches: number }>(await relayLink(child), 100),
    final: (client, turn) => child.send({ type: "final", client, turn } satisfies ToRelay),
  };
}

// ── one phase: a server, a number of sessions, a number of turns ────────────────────────

interface PhaseResult extends PhaseFigures {
  readonly turns: number;
  readonly sttToLlm: Summary;
  /** t0 → the STT final callback returned: the server's synchronous work on the final. */
  readonly finalSync: Summary;
  /** t1 → t2: the model's stream through the gateway to the TTS's first audio. */
  readonly llmToTts: Summary;
  readonly ttsToClient: Summary;
  /** t2 → the TTS audio callback returned: the server's synchronous path to `ws.send`. */
  readonly inServer: Summary;
  readonly finalToClient: Summary;
  /** CPU per session-second less what the process burns idle (timers, metrics, the meter) over the window. */
  readonly netCpuMsPerSessionSecond: number;
  readonly mismatches: number;
}

/** CPU the server burns with no sessions (ms per second), over `ms`. */
async function idleCpu(server: MeasuredServer, ms: number): Promise<number> {
  await server.start();
  await sleep(ms);
  const window = await server.stop();
  return window.cpuMs / (window.wallMs / 1000);
}

async function runPhase(load: LoadLink, server: MeasuredServer, sessions: number, turns: number, idleCpuMsPerSecond: number): Promise<PhaseResult> {
  const plan = phasePlan(server.url, sessions, turns);
  load.target((client, turn) => server.final(client, turn));
  const driven = await driveLoad(load, server, plan);
  const { marks, mismatches } = driven.taken;
  return summarizePhase(server.name, plan, marks, driven.arrivals, { ...driven, mismatches, idleCpuMsPerSecond });
}

function summarizePhase(
  server: "gateway" | "relay",
  plan: LoadPlan,
  marks: readonly TurnMarks[],
  arrivals: readonly Arrival[],
  measured: Parameters<typeof phaseFigures>[2] & { mismatches: number; idleCpuMsPerSecond: number },
): PhaseResult {
  const byTurn = new Map(marks.map((m) => [`${m.client}:${m.turn}`, m]));
  const sttToLlm: number[] = [];
  const finalSync: number[] = [];
  const llmToTts: number[] = [];
  const ttsToClient: number[] = [];
  const inServer: number[] = [];
  const finalToClient: number[] = [];
  for (const m of marks) {
    if (m.t0 !== undefined && m.t1 !== undefined) sttToLlm.push(m.t1 - m.t0);
    if (m.t0 !== undefined && m.t0Returned !== undefined) finalSync.push(m.t0Returned - m.t0);
    if (m.t2 !== undefined && m.t2Returned !== undefined) inServer.push(m.t2Returned - m.t2);
    if (m.t1 !== undefined && m.t2 !== undefined) llmToTts.push(m.t2 - m.t1);
  }
  for (const a of arrivals) {
    const m = byTurn.get(`${a.client}:${a.turn}`);
    if (m?.t2 !== undefined) ttsToClient.push(a.t3 - m.t2);
    if (m?.t0 !== undefined) finalToClient.push(a.t3 - m.t0);
  }
  const { window } = measured;
  const sessionSeconds = (plan.sessions * window.wallMs) / 1000;
  return {
    ...phaseFigures(server, plan, measured),
    turns: plan.turns,
    sttToLlm: summarize(sttToLlm),
    finalSync: summarize(finalSync),
    llmToTts: summarize(llmToTts),
    ttsToClient: summarize(ttsToClient),
    inServer: summarize(inServer),
    finalToClient: summarize(finalToClient),
    netCpuMsPerSessionSecond: (window.cpuMs - (measured.idleCpuMsPerSecond * window.wallMs) / 1000) / sessionSeconds,
    mismatches: measured.mismatches,
  };
}

// ── report ──────────────────────────────────────────────────────────────────────────────

interface IdleSample extends MemorySample {
  readonly cpuMsPerSecond: number;
}

interface Report {
  readonly options: Options;
  readonly idle: { readonly gateway: IdleSample; readonly relay: IdleSample };
  readonly solo: { readonly gateway: PhaseResult; readonly relay: PhaseResult };
  /** The median round by CPU per turn ÷ the relay's: the table's loaded columns. */
  readonly loaded: Round;
  /** Every loaded round, in the order run. */
  readonly rounds: readonly Round[];
  readonly elapsedMs: number;
}

interface Round {
  readonly gateway: PhaseResult;
  readonly relay: PhaseResult;
}

const cpuPerTurn = (r: PhaseResult): number => r.window.cpuMs / r.expected;
const cpuRatio = (round: Round): number => cpuPerTurn(round.gateway) / cpuPerTurn(round.relay);
/** Each leg's gateway share in a round: gateway p99 − relay p99 (ms). */
function shares(round: Round): readonly (readonly [string, number])[] {
  const { gateway: g, relay: r } = round;
  return [
    ["STT final → LLM request", g.sttToLlm.p99 - r.sttToLlm.p99],
    ["LLM request → first TTS audio", g.llmToTts.p99 - r.llmToTts.p99],
    ["first TTS audio → client frame", g.ttsToClient.p99 - r.ttsToClient.p99],
  ];
}
/** The middle value (the lower middle of an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
const kib = (v: number): string => v.toFixed(0);

function table(report: Report): string {
  const { solo, loaded, idle } = report;
  const rows: string[] = [];
  const row = (figure: string, pick: (r: PhaseResult) => number, format: (v: number) => string = ms, compare = true): void => {
    const cells = [solo, loaded].flatMap((pair) => {
      const g = pick(pair.gateway);
      const r = pick(pair.relay);
      return [format(g), format(r), compare ? ratio(g, r) : ""];
    });
    rows.push(`| ${figure} | ${cells.join(" | ")} |`);
  };
  const n = loaded.gateway.sessions;
  rows.push(`| figure | gateway, 1 session | relay, 1 session | gateway ÷ relay | gateway, ${n} sessions | relay, ${n} sessions | gateway ÷ relay |`);
  rows.push("|---|--:|--:|--:|--:|--:|--:|");
  for (const p of ["p50", "p95", "p99", "max"] as const) row(`STT final → LLM request, ${p} (ms)`, (r) => r.sttToLlm[p]);
  for (const p of ["p50", "p99"] as const) row(`… of which inside the STT \`final\` callback, ${p} (ms)`, (r) => r.finalSync[p]);
  row("LLM request → first TTS audio, p50 (ms)", (r) => r.llmToTts.p50);
  row("LLM request → first TTS audio, p99 (ms)", (r) => r.llmToTts.p99);
  for (const p of ["p50", "p95", "p99", "max"] as const) row(`first TTS audio → client frame, ${p} (ms)`, (r) => r.ttsToClient[p]);
  row("… of which inside the server (TTS audio callback → `ws.send` done), p99 (ms)", (r) => r.inServer.p99);
  row("STT final → first audio frame at the client, p50 (ms)", (r) => r.finalToClient.p50);
  row("STT final → first audio frame at the client, p99 (ms)", (r) => r.finalToClient.p99);
  row("CPU per session-second (ms)", (r) => r.cpuMsPerSessionSecond, (v) => v.toFixed(2));
  row("… net of the idle process's own CPU (ms)", (r) => r.netCpuMsPerSessionSecond, (v) => v.toFixed(2));
  row("CPU per turn, all included (ms)", (r) => r.window.cpuMs / r.expected, (v) => v.toFixed(2));
  row("RSS per live session (KiB)", (r) => r.rssPerSessionKiB, kib);
  row("JS heap per live session (KiB)", (r) => r.heapPerSessionKiB, kib);
  row("event-loop delay p99 (ms)", (r) => r.window.loopDelayP99Ms);
  row("event-loop delay max (ms)", (r) => r.window.loopDelayMaxMs);
  row("client process: CPU (ms per second)", (r) => (r.tally === undefined ? Number.NaN : r.tally.window.cpuMs / (r.tally.window.wallMs / 1000)), (v) => v.toFixed(1));
  row("client process: event-loop delay p99 (ms)", (r) => r.tally?.window.loopDelayP99Ms ?? Number.NaN);
  row("server → client text frames per turn", (r) => (r.tally?.textFrames ?? Number.NaN) / r.expected, (v) => v.toFixed(1));
  row("server → client text KiB per turn", (r) => (r.tally?.textBytes ?? Number.NaN) / r.expected / 1024, (v) => v.toFixed(2));
  row("server → client audio frames per turn", (r) => (r.tally?.binaryFrames ?? Number.NaN) / r.expected, (v) => v.toFixed(1));
  row("turns measured", (r) => r.ttsToClient.n, (v) => v.toFixed(0));
  row("other load on the machine during the turns (cores)", (r) => r.otherCores, (v) => (Number.isNaN(v) ? "–" : Math.max(0, v).toFixed(2)), false);
  rows.push(`| idle process RSS (MiB) | ${mib(idle.gateway.rss)} | ${mib(idle.relay.rss)} | ${ratio(idle.gateway.rss, idle.relay.rss)} | | | |`);
  rows.push(
    `| idle process CPU (ms per second) | ${idle.gateway.cpuMsPerSecond.toFixed(2)} | ${idle.relay.cpuMsPerSecond.toFixed(2)} | ${ratio(idle.gateway.cpuMsPerSecond, idle.relay.cpuMsPerSecond)} | | | |`,
  );
  return rows.join("\n");
}

function verdict(report: Report): string {
  const g = report.loaded.gateway;
  const perRound = report.rounds.map(shares);
  const legs = shares(report.loaded).map(([leg], i) => [leg, median(perRound.map((round) => round[i]?.[1] ?? Number.NaN))] as const);
  const ratios = report.rounds.map(cpuRatio);
  const cpu = median(ratios);
  const frames = (g.tally?.textFrames ?? Number.NaN) / g.expected;
  const over = legs.filter(([, share]) => share > BARS.shareMs).map(([leg]) => leg);
  const noisy = g.otherCores > NOISY_CORES ? ` Other work used ${g.otherCores.toFixed(2)} cores of the machine meanwhile: the tail may be the machine's, rerun before trusting it.` : "";
  return (
    `**Verdict at ${g.sessions} sessions: each leg's gateway share (gateway p99 − relay p99) ≤ ${BARS.shareMs} ms ${over.length === 0 ? "met" : `not met (${over.join("; ")})`}; ` +
    `CPU per turn ≤ ${BARS.cpuVsRelay}× the relay's ${cpu <= BARS.cpuVsRelay ? "met" : "not met"} (${cpu.toFixed(2)}×).** ` +
    `Medians of ${ratios.length} alternating round${ratios.length === 1 ? "" : "s"} (the table's ${g.sessions}-session columns are the median round by CPU): CPU per turn ÷ the relay's ${ratios.map((v) => `${v.toFixed(2)}×`).join(", ")}; ` +
    `shares ${legs.map(([leg, share]) => `${leg} ${ms(share)} ms`).join(", ")}. ` +
    `Text frames per turn: ${frames.toFixed(1)}, the callers choosing \`?events=reply.completed\` (docs/protocol.md "Choosing events").${noisy}`
  );
}

function section(report: Report): string {
  const cpu = cpus();
  const o = report.options;
  return [
    START,
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpu[0]?.model.trim() ?? "unknown CPU"} (${cpu.length} cores), Node ${process.version}, ${process.platform}/${process.arch}; ` +
      `${o.sessions} sessions × ${o.turns} turns in ${o.rounds} alternating round${o.rounds === 1 ? "" : "s"} and 1 session × ${o.soloTurns} turns; the gateway ${gatewayFromText(o.gatewayFrom)}; ${(report.elapsedMs / 1000).toFixed(0)} s in all.`,
    "",
    table(report),
    "",
    verdict(report),
    "",
    END,
  ].join("\n");
}

const INTRO = `# Benchmarks

## Pipeline: the gateway's share of latency, and its cost per session

Run \`npm run bench\`. Options: \`--sessions N\` (or \`BENCH_SESSIONS\`, default 50), \`--turns T\` (or
\`BENCH_TURNS\`, default 10), \`--solo-turns T\` (the 1-session run, default 20), \`--dist\` (host the
gateway built, as deployed: \`npm run build\` first), \`--dist-of DIR\` (another checkout's build), \`--rounds R\` (or \`BENCH_ROUNDS\`, loaded
rounds, default 3, at most 9), \`--no-docs\` (print only). About two minutes, loopback only. It rewrites the section between the markers below.

Three processes: the runner holds the gateway (\`createGateway\` on 127.0.0.1:0, with the zero-latency
fake STT, LLM and TTS of \`bench/shared/providers.ts\` injected through \`voice\` and \`resolveModel\`). The
callers run in \`bench/pipeline/load.ts\`: one \`ws\` client per session. Each sends a 20 ms PCM frame every 20 ms
for its whole life and waits for the greeting. After a random start within 1 s it takes turns, one
after another: 200 ms of "speech", then the STT final, then it waits for \`reply.completed\` and a
pause of about 100 ms. The floor is \`bench/pipeline/relay.ts\`, a minimal hand-written relay on the same fakes
and the same load: the final calls the model directly, and deltas go straight to the TTS and audio
straight to \`ws.send\`. Shared machines are noisy, so read the gateway ÷ relay ratios from the same
run before the absolute numbers.

Per turn, on the system's monotonic clock (one clock for all three processes):

- **STT final → LLM request**: from the bench calling the fake STT's \`final(text, {endOfTurn: true})\`
  to the model's \`doStream\` call. The "inside the STT \`final\` callback" row is the synchronous
  part. A p99 well above it is time spent queued behind other sessions' work on the one event loop.
  The relay makes a direct call here, so its floor is microseconds and the ratio is mostly that.
- **LLM request → first TTS audio**: the model's stream through the reply loop (one model call per step), the turn loop and
  the sentence batcher to the TTS's first audio chunk.
- **first TTS audio → client frame**: from the fake TTS emitting the reply's first PCM chunk to the
  caller's \`ws\` receiving the reply's first binary frame. The "inside the server" row covers the
  TTS callback → voice loop → pacer → \`ws.send\` returning. The rest is loopback, scheduling and the
  client process, shown below. The pacer holds nothing here: a caller speaks only after
  \`reply.completed\`, which the gateway sends once the previous reply has played out. No audio is
  ahead of real time, so the 1.5 s lead is unused and the first chunk goes out in the same call.
- **CPU per session-second**: the server process's user + system CPU during the turns, divided by
  sessions × wall seconds (1 ms/s = 0.1 % of a core). At 1 session this is mostly per-wakeup
  overhead. The callers here take a turn every ~0.65 s, far more often than real callers, so
  **CPU per turn** is the figure to scale from.
- **RSS / heap per live session**: measured after a full GC with every session greeted and
  streaming, minus the same before the callers connected. At 1 session this is below the noise
  (RSS can even go down). **Idle process RSS** is taken right after listening. The relay runs
  under tsx, which costs about as much as the whole relay process; so does the gateway from its
  sources (the default), while with \`--dist\` it is the build users deploy. The run line says which.

The gateway logs at info into a sink (the formatting cost is paid, no I/O), and its Prometheus
process metrics are on, as deployed. Each server gets an unreported warm-up of 10 sessions × 3 turns.
Idle CPU is measured before any session.

`;

function writeDocs(report: Report): void {
  writeSection(DOCS, START, END, section(report), `${INTRO}${START}\n${END}\n`);
}

// ── main ────────────────────────────────────────────────────────────────────────────────

function problems(results: readonly PhaseResult[]): string[] {
  return phaseProblems(results, (r) => [
    ...(r.ttsToClient.n !== r.expected || r.sttToLlm.n !== r.expected ? [`${r.sttToLlm.n}/${r.ttsToClient.n} of ${r.expected} turns measured`] : []),
    ...(r.mismatches > 0 ? [`${r.mismatches} replies spoken on the wrong session`] : []),
  ]);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const began = Date.now();
  return compareWithRelay(new URL(".", import.meta.url), (meter) => startGateway(meter, options.gatewayRoot), startRelay, async ({ gateway, idleGateway, relay, idleRelay, load }) => {
    // Idle CPU first, before any session: after load, V8's memory reducer and JIT keep a process
    // busy for seconds, which is not what an idle gateway costs.
    await sleep(1000);
    const idle = { relay: await idleCpu(relay, IDLE_WINDOW_MS), gateway: await idleCpu(gateway, IDLE_WINDOW_MS) };
    const phase = (server: MeasuredServer, sessions: number, turns: number): Promise<PhaseResult> =>
      within(runPhase(load, server, sessions, turns, idle[server.name]), PHASE_LIMIT_MS, `${server.name} with ${sessions} sessions`);

    console.log(`bench: gateway ${gateway.url}, relay ${relay.url}; warming up`);
    await phase(relay, 10, 3);
    await phase(gateway, 10, 3);
    console.log(`bench: 1 session × ${options.soloTurns} turns`);
    const soloRelay = await phase(relay, 1, options.soloTurns);
    const soloGateway = await phase(gateway, 1, options.soloTurns);
    const rounds: Round[] = [];
    for (let i = 0; i < options.rounds; i++) {
      console.log(`bench: ${options.sessions} sessions × ${options.turns} turns, round ${i + 1} of ${options.rounds}`);
      // Alternating which server goes first, so a drift of the machine over the run favours neither.
      if (i % 2 === 0) {
        const loadedRelay = await phase(relay, options.sessions, options.turns);
        rounds.push({ relay: loadedRelay, gateway: await phase(gateway, options.sessions, options.turns) });
      } else {
        const loadedGateway = await phase(gateway, options.sessions, options.turns);
        rounds.push({ gateway: loadedGateway, relay: await phase(relay, options.sessions, options.turns) });
      }
    }
    const loaded = [...rounds].sort((a, b) => cpuRatio(a) - cpuRatio(b))[Math.floor((rounds.length - 1) / 2)];
    if (loaded === undefined) throw new Error("no loaded round ran");

    const report: Report = {
      options,
      idle: { gateway: { ...idleGateway, cpuMsPerSecond: idle.gateway }, relay: { ...idleRelay, cpuMsPerSecond: idle.relay } },
      solo: { gateway: soloGateway, relay: soloRelay },
      loaded,
      rounds,
      elapsedMs: Date.now() - began,
    };
    console.log(`\n${table(report)}\n\n${verdict(report)}\n`);
    const found = problems([soloRelay, soloGateway, ...rounds.flatMap((round) => [round.relay, round.gateway])]);
    return finishRun("bench", found, options.docs, () => writeDocs(report), DOCS);
  });
}

runBench("bench", RUN_LIMIT_MS, main);
