/**
 * `npm run bench:telephony`: N simulated Twilio callers against the gateway's s2s telephony
 * bridge (an `openai-realtime` agent with `telephony: ["twilio"]`, μ-law passed through), side by
 * side with a minimal hand-written relay (the floor) and the OpenAI Agents SDK's Twilio transport,
 * at N = 50, 100 and 200 calls in one run, loopback only.
 *
 * Every server runs in a child process of its own: the gateway (bench/telephony/gateway-host.ts:
 * createGateway on 127.0.0.1:0, logging at info into a sink that only counts warnings; with --vs, a
 * second such process for the other build), the floor (bench/telephony/relay.ts) and the SDK peer
 * (bench/telephony/sdk.ts). So do the fake OpenAI Realtime service shared by all of them
 * (bench/telephony/fake-realtime.ts) and the callers (bench/telephony/callers.ts). This process only
 * runs the phases. Every phase and every call to a child is bounded; the whole run too.
 *
 * Options: --calls 50,100,200 (env BENCH_CALLS), --window S (BENCH_WINDOW_S, default 12),
 * --rounds R (BENCH_ROUNDS, default 5: each count's tables show its median round),
 * --dist (host the gateway built, from `dist/` as deployed: run `npm run build` first), --dist-of
 * DIR (the `dist/` of another checkout, built there: that revision's gateway under this harness, for
 * a before/after of the gateway alone), --vs DIR (another checkout's build as a second gateway, in a
 * process of its own, in the same rounds, right after this one: each round's paced ratios of both and
 * their means; prints only), --servers
 * floor,gateway (a subset; prints only), --no-docs (print only). From its sources the gateway runs through tsx, whose esbuild transform keeps
 * function names (`keepNames`): every closure then carries a property store of its own (about
 * 256 bytes on V8), so its heap per call reads higher than the deployed build's. Results go to stdout and to docs/benchmarks.md between the
 * bench:telephony markers.
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { gatewaySource } from "../shared/gateway-modules.js";
import { countOption, docSection, flagValue, forkBench, runBench, sleep, within, writeSection } from "../shared/common.js";
import { machineBusyMs, monoMs, type MemorySample, type WindowSample } from "../shared/stats.js";
import { boundedChild, CALL_LIMIT_MS, CHILD_START_MS, connectChild, DRAIN_MS, dialPlan, WARM_UP, type Call, type CallersTaken, type FakeTaken } from "./protocol.js";
import { contextTable, failed, LABEL, pacedCpu, problems, roundRatio, roundsLine, roundTails, section, summarizePhase, table, targets, vsLine, type Phase, type Report, type RoundRatios, type ServerName } from "./report.js";

/** Rounds at most (`--rounds`); the run must end by itself within 2 minutes plus 8 a round. */
const MAX_ROUNDS = 5;
const RUN_LIMIT_MS = 120_000 + MAX_ROUNDS * 480_000;
/** A phase's time beyond its steady-state wait and its window: dialling, settling, samples, hanging up (ms). */
const PHASE_SLACK_MS = 50_000;
/** Greetings play and the turns start before "live" memory is taken (ms). */
const SETTLE_MS = 1500;
/**
 * From the memory sample to the window (ms): the window measures a server in its steady state.
 * A phase starts on a server whose calls all ended a minute before, so V8 has let go of the maps
 * and optimized code they kept (its "weak objects"), and the sample's forced collections drop more;
 * the gateway's JIT then compiles for about 25 s at 200 calls (`--trace-opt`: 20 ms of TurboFan a
 * second in the first 15 s of its calls, 7 in the next ten, 2 after), where the floor's small
 * relay is warm within a second. docs/benchmarks.md, "Steady state, not warm-up".
 */
const AFTER_GC_MS = 25_000;
const { path: DOCS, start: START, end: END } = docSection("bench:telephony");

interface Options {
  readonly counts: number[];
  readonly windowMs: number;
  readonly docs: boolean;
  /** The gateway's module root: this tree's `src/` (through tsx) or a built `dist/`. */
  readonly gatewayRoot: URL;
  readonly gatewayFrom: "src" | "dist";
  /** The servers to run, in this order (all three unless `--servers` names fewer: then nothing is written to the docs). */
  readonly servers: readonly ServerName[];
  /** Phases per server at each count, alternating the order: the tables show the median round. */
  readonly rounds: number;
  /** `--vs DIR`: the module root of a second gateway build, run as server `vs` after `gateway` in every round. */
  readonly vs: URL | undefined;
}

function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): Options {
  const list = flagValue(argv, "calls") ?? env.BENCH_CALLS ?? "50,100,200";
  const servers = serverList(flagValue(argv, "servers"));
  const vs = vsRoot(flagValue(argv, "vs"), servers);
  return {
    counts: list.split(",").map((n) => countOption(n.trim(), 50, "calls")),
    windowMs: countOption(flagValue(argv, "window") ?? env.BENCH_WINDOW_S, 12, "window") * 1000,
    docs: !argv.includes("--no-docs") && servers.length === ALL_SERVERS.length && vs === undefined,
    servers,
    rounds: roundsOption(flagValue(argv, "rounds") ?? env.BENCH_ROUNDS),
    vs,
    ...gatewaySource(argv),
  };
}

/** `--vs DIR`: that checkout's built `dist/` (judged against the floor, so the floor must run too). */
function vsRoot(dir: string | undefined, servers: readonly ServerName[]): URL | undefined {
  if (dir === undefined) return undefined;
  if (!servers.includes("floor") || !servers.includes("gateway")) throw new Error("--vs compares two gateways against the floor: run the floor and the gateway too");
  return gatewaySource(["--dist-of", dir]).gatewayRoot;
}

const ALL_SERVERS: readonly ServerName[] = ["floor", "gateway", "sdk"];

function roundsOption(value: string | undefined): number {
  const rounds = countOption(value, MAX_ROUNDS, "rounds");
  if (rounds > MAX_ROUNDS) throw new Error(`--rounds must be at most ${MAX_ROUNDS}, got ${rounds}`);
  return rounds;
}

/** `--servers floor,gateway`: a subset, for profiling one server or iterating on the gateway (a round runs floor, gateway, SDK, reversed every other round). */
function serverList(value: string | undefined): readonly ServerName[] {
  if (value === undefined) return ALL_SERVERS;
  const names = value.split(",").map((n) => n.trim());
  const unknown = names.filter((n) => !ALL_SERVERS.includes(n as ServerName));
  if (unknown.length > 0 || names.length === 0) throw new Error(`--servers takes a list of ${ALL_SERVERS.join(", ")}; got ${value}`);
  return ALL_SERVERS.filter((n) => names.includes(n));
}

/** A server under test, wherever it runs. */
interface Server {
  readonly name: ServerName;
  readonly url: string;
  memory(): Promise<MemorySample>;
  start(): Promise<void>;
  stop(): Promise<WindowSample>;
  /** Calls still open. */
  open(): Promise<number>;
  /** Problems since the last call. */
  problems(): Promise<string[]>;
}

/** A server child: its URL once listening (`listen` takes `args`), or why it cannot run. */
async function startChild(name: ServerName, child: ChildProcess, args: { readonly providerUrl: string; readonly root?: string }): Promise<Server | string> {
  try {
    const call = await within(connectChild(child, LABEL[name]), CHILD_START_MS, `starting ${LABEL[name]}`);
    const url = await within(call<string>("listen", args), CALL_LIMIT_MS, `${LABEL[name]} listen`);
    const bounded = <T>(what: string, args?: unknown): Promise<T> => within(call<T>(what, args), CALL_LIMIT_MS, `${LABEL[name]} ${what}`);
    return {
      name,
      url,
      memory: () => bounded("memory"),
      start: () => bounded<null>("start").then(() => undefined),
      stop: () => bounded("stop"),
      open: () => bounded("open"),
      problems: () => bounded("problems"),
    };
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

interface Rig {
  readonly fake: Call;
  readonly callers: Call;
}

async function runPhase(rig: Rig, server: Server, calls: number, windowMs: number, steadyMs: number): Promise<Phase> {
  const before = await server.memory();
  const { heard } = await rig.callers<{ heard: number }>("dial", dialPlan(server.url, calls));
  await sleep(SETTLE_MS);
  const live = await server.memory();
  await sleep(steadyMs);
  const [callerBefore, fakeBefore] = await Promise.all([rig.callers<number>("cpu"), rig.fake<number>("cpu")]);
  const machineBefore = machineBusyMs();
  await server.start();
  const from = monoMs();
  await sleep(windowMs);
  const to = monoMs();
  const sample = await server.stop();
  const machineAfter = machineBusyMs();
  const [callerAfter, fakeAfter] = await Promise.all([rig.callers<number>("cpu"), rig.fake<number>("cpu")]);
  await sleep(DRAIN_MS);
  const { open } = await rig.callers<{ open: number }>("hangUp");
  let left = await server.open();
  for (let i = 0; i < 50 && (left > 0 || (await rig.fake<number>("open")) > 0); i++) {
    await sleep(100);
    left = await server.open();
  }
  const window = { from, to };
  const [fake, callerTaken, serverProblems] = await Promise.all([rig.fake<FakeTaken>("collect", window), rig.callers<CallersTaken>("collect", window), server.problems()]);
  const extra = [...serverProblems];
  if (open > 0) extra.push(`${open} caller sockets still open 5 s after hanging up`);
  if (left > 0) extra.push(`${left} calls still open on the server 5 s after the callers hung up`);
  return summarizePhase({
    server: server.name,
    calls,
    heard,
    window,
    sample,
    before,
    live,
    fake,
    callers: callerTaken,
    callerMs: callerAfter - callerBefore,
    fakeMs: fakeAfter - fakeBefore,
    machineMs: machineBefore === undefined || machineAfter === undefined ? Number.NaN : machineAfter - machineBefore,
    problems: extra,
  });
}

function print(report: Report): void {
  const versus = vsLine(report);
  console.log(`\n${table(report)}\n\n${targets(report)}\n\n${roundsLine(report)}\n\n${versus === undefined ? "" : `${versus}\n\n`}${contextTable(report)}\n`);
  for (const line of problems(report)) console.error(`bench:telephony: ${line}`);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const began = Date.now();
  // Every server is a process of its own (the gateway too: bench/telephony/gateway-host.ts), none of them this one.
  const gatewayHost = new URL("./gateway-host.ts", import.meta.url);
  const children = {
    fake: forkBench(new URL("./fake-realtime.ts", import.meta.url)),
    callers: forkBench(new URL("./callers.ts", import.meta.url)),
    gateway: forkBench(gatewayHost),
    vs: options.vs === undefined ? undefined : forkBench(gatewayHost),
    floor: forkBench(new URL("./relay.ts", import.meta.url)),
    sdk: forkBench(new URL("./sdk.ts", import.meta.url)),
  };
  try {
    const rig: Rig = { fake: await boundedChild(children.fake, "the fake service"), callers: await boundedChild(children.callers, "the callers") };
    const providerUrl = await rig.fake<string>("url");
    const roots: Partial<Record<ServerName, URL>> = { gateway: options.gatewayRoot, ...(options.vs === undefined ? {} : { vs: options.vs }) };
    const idleRss: Partial<Record<ServerName, number>> = {};
    const servers = new Map<ServerName, Server | string>();
    for (const name of ["gateway", "vs", "floor", "sdk"] as const) {
      const child = children[name];
      if (child === undefined || (name !== "vs" && !options.servers.includes(name))) continue;
      const root = roots[name];
      const server = await startChild(name, child, { providerUrl, ...(root === undefined ? {} : { root: fileURLToPath(root) }) });
      servers.set(name, server);
      if (typeof server === "string") {
        console.error(`bench:telephony: ${LABEL[name]} cannot run: ${server}`);
        continue;
      }
      idleRss[name] = (await server.memory()).rss;
      if (root !== undefined) console.log(`bench:telephony: ${name === "vs" ? "the --vs gateway" : "the gateway"} from ${fileURLToPath(root)} (process ${child.pid ?? "?"})`);
    }
    const order = options.vs === undefined ? options.servers : options.servers.flatMap((n): ServerName[] => (n === "gateway" ? ["gateway", "vs"] : [n]));
    const phase = async (name: ServerName, calls: number, windowMs: number, steadyMs = AFTER_GC_MS): Promise<Phase> => {
      const server = servers.get(name);
      if (server === undefined || typeof server === "string") return { server: name, calls, reason: server ?? "not started" };
      try {
        return await within(runPhase(rig, server, calls, windowMs, steadyMs), PHASE_SLACK_MS + steadyMs + windowMs, `${LABEL[name]} with ${calls} calls`);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        console.error(`bench:telephony: ${LABEL[name]} with ${calls} calls failed: ${reason}`);
        // A failed phase may leave calls up: hang them up before the next one.
        await rig.callers("hangUp").catch(() => undefined);
        await sleep(1000);
        await rig.fake("collect", { from: 0, to: 0 }).catch(() => undefined);
        await rig.callers("collect", { from: 0, to: 0 }).catch(() => undefined);
        return { server: name, calls, reason };
      }
    };
    console.log(`bench:telephony: warming up (${WARM_UP.calls} calls per server)`);
    for (const name of order) await phase(name, WARM_UP.calls, WARM_UP.windowMs, WARM_UP.steadyMs);
    const phases: Phase[] = [];
    const ran: Phase[] = [];
    const rounds: RoundRatios[] = [];
    for (const calls of options.counts) {
      const sets: Phase[][] = [];
      for (let i = 0; i < options.rounds; i++) {
        // The order alternates round to round, so a drift of the machine over the run favours no server.
        const set: Phase[] = [];
        for (const name of i % 2 === 0 ? order : [...order].reverse()) {
          const result = await phase(name, calls, options.windowMs);
          set.push(result);
          ran.push(result);
          console.log(`bench:telephony: ${LABEL[name]}, ${calls} calls, round ${i + 1} of ${options.rounds}: ${failed(result) ? `failed (${result.reason})` : `${result.cpuPercentPerCall.toFixed(3)} % of a core per call, ${pacedCpu(result).toFixed(3)} paced by the rig (callers ${result.callerCores.toFixed(3)} + fake ${result.fakeCores.toFixed(3)} cores)`}`);
        }
        sets.push(set);
      }
      // The median round by the gateway's paced CPU ÷ the floor's (a round where either failed sorts last).
      const paced = (set: readonly Phase[]): number => roundRatio(set).paced;
      const ranked = [...sets].sort((a, b) => (Number.isNaN(paced(a)) ? 1 : Number.isNaN(paced(b)) ? -1 : paced(a) - paced(b)));
      const valid = ranked.filter((set) => !Number.isNaN(paced(set)));
      phases.push(...(valid[Math.floor((valid.length - 1) / 2)] ?? ranked[0] ?? []));
      rounds.push({ calls, ratios: sets.map((set) => roundRatio(set)), tails: sets.map((set) => roundTails(set)), vs: options.vs === undefined ? [] : sets.map((set) => roundRatio(set, "vs")) });
    }
    const report: Report = { phases, ran, rounds, counts: options.counts, windowMs: options.windowMs, idleRss, elapsedMs: Date.now() - began, gatewayFrom: options.gatewayFrom };
    print(report);
    if (options.docs) {
      writeSection(DOCS, START, END, section(report, { start: START, end: END }));
      console.log(`bench:telephony: wrote ${DOCS}`);
    }
    return ran.some((p) => failed(p) && p.server !== "sdk") ? 1 : 0;
  } finally {
    for (const child of Object.values(children)) child?.kill();
  }
}

runBench("bench:telephony", RUN_LIMIT_MS, main);
