/**
 * Plumbing shared by the bench runners (bench/pipeline/run.ts, bench/s2s/run.ts) and their load
 * children (bench/pipeline/load.ts, bench/s2s/load.ts): CLI options, the relay child's RPC, the load
 * child's link, one phase's measurement sequence, report formatting, the docs section and main.
 */
import { fork, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { setTimeout as sleepFor } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { wsMasking as wsMaskingOf } from "../../src/server/ws-masking.js";
import { send, type Arrival, type FromLoad, type FromRelay, type LoadPlan, type LoadTally, type ServerCall, type ToLoad, type ToRelay } from "./protocol.js";
import { machineBusyMs, ProcessMeter, type MemorySample, type WindowSample } from "./stats.js";

// ── options ─────────────────────────────────────────────────────────────────────────────

/**
 * The gateway's start-up warning for a carrier nobody authenticates. The benches' phone callers
 * dial an unsigned Twilio on loopback on purpose, so that line is expected there, not a problem.
 */
export function isOpenCarrierNotice(message: string | undefined): boolean {
  return message?.startsWith("unauthenticated telephony entry points") === true;
}

/**
 * How ws masks and unmasks frames in the bench's processes (src/server/ws-masking.ts): every
 * server in a run loads the same ws, so this is one line of a run's context.
 */
export function wsMasking(): string {
  const masking = wsMaskingOf();
  return masking.native ? "native (bufferutil)" : `in JavaScript (${masking.why})`;
}

/** The value after `--name` in argv, if any. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? undefined : argv[i + 1];
}

/** A whole number ≥ 1, or `fallback` when unset. */
export function countOption(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1, got ${value}`);
  return n;
}

/** The options every relay comparison takes. */
export interface BaseOptions {
  readonly sessions: number;
  readonly turns: number;
  /** Write the results into the docs (off with --no-docs). */
  readonly docs: boolean;
}

/** --sessions / BENCH_SESSIONS (default 50), --turns / BENCH_TURNS, --no-docs. */
export function baseOptions(argv: readonly string[], env: NodeJS.ProcessEnv, defaultTurns: number): BaseOptions {
  return {
    sessions: countOption(flagValue(argv, "sessions") ?? env.BENCH_SESSIONS, 50, "sessions"),
    turns: countOption(flagValue(argv, "turns") ?? env.BENCH_TURNS, defaultTurns, "turns"),
    docs: !argv.includes("--no-docs"),
  };
}

// ── the servers under test ──────────────────────────────────────────────────────────────

/** What every measured server offers; `marks()` returns each bench's own marks. */
export interface MeasuredServerBase<Taken> {
  readonly name: "gateway" | "relay";
  readonly url: string;
  memory(): Promise<MemorySample>;
  start(): Promise<void>;
  stop(): Promise<WindowSample>;
  marks(): Promise<Taken>;
  /** Resolves when the server holds no sessions any more. */
  settled(): Promise<void>;
}

/**
 * The gateway, running in this process, as a measured server: memory and CPU from `meter`, its
 * marks from `take`, settled once `busy()` turns false (polled every 10 ms, for 2 s at most).
 */
export function inProcessGateway<Taken>(meter: ProcessMeter, port: number, take: () => Taken, busy: () => boolean): MeasuredServerBase<Taken> {
  return {
    name: "gateway",
    url: `ws://127.0.0.1:${port}/websocket`,
    memory: () => Promise.resolve(meter.memory()),
    start: () => Promise.resolve(meter.start()),
    stop: () => Promise.resolve(meter.stop()),
    marks: () => Promise.resolve(take()),
    settled: async () => {
      for (let i = 0; i < 200 && busy(); i++) await sleep(10);
    },
  };
}

/** Waits for the relay child to listen; `call` is its request/response RPC. */
export async function relayLink(child: ChildProcess): Promise<{ url: string; call: <T>(what: ServerCall) => Promise<T> }> {
  let nextId = 0;
  const pending = new Map<number, (value: unknown) => void>();
  const url = await new Promise<string>((resolve) => {
    child.on("message", (message: FromRelay) => {
      if (message.type === "listening") resolve(message.url);
      else pending.get(message.id)?.(message.value);
    });
  });
  const call = <T>(what: ServerCall): Promise<T> =>
    new Promise((resolve) => {
      const id = ++nextId;
      pending.set(id, (value) => {
        pending.delete(id);
        resolve(value as T);
      });
      child.send({ type: "call", id, call: what } satisfies ToRelay);
    });
  return { url, call };
}

/** The parts of a relay server that are the same for every bench. */
export function relayServer<Taken>(link: { url: string; call: <T>(what: ServerCall) => Promise<T> }, settleMs: number): MeasuredServerBase<Taken> {
  const { url, call } = link;
  return {
    name: "relay",
    url,
    memory: () => call<MemorySample>("memory"),
    start: () => call<null>("start").then(() => undefined),
    stop: () => call<WindowSample>("stop"),
    marks: () => call<Taken>("marks"),
    settled: () => sleep(settleMs),
  };
}

/** The load child's messages: finals go to the server under test, the rest to whoever waits. */
export class LoadLink {
  readonly #child: ChildProcess;
  #onFinal: ((client: number, turn: number) => void) | undefined;
  #waiters: { type: FromLoad["type"]; resolve: (message: FromLoad) => void }[] = [];

  constructor(child: ChildProcess) {
    this.#child = child;
    child.on("message", (message: FromLoad) => {
      if (message.type === "final") {
        this.#onFinal?.(message.client, message.turn);
        return;
      }
      const waiter = this.#waiters.find((w) => w.type === message.type);
      if (waiter === undefined) return;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    });
  }

  /** Where the load's finals go from now on. */
  target(onFinal: (client: number, turn: number) => void): void {
    this.#onFinal = onFinal;
  }

  send(message: ToLoad): void {
    this.#child.send(message);
  }

  next<K extends FromLoad["type"]>(type: K): Promise<Extract<FromLoad, { type: K }>> {
    return new Promise((resolve) => this.#waiters.push({ type, resolve: resolve as (message: FromLoad) => void }));
  }
}

export interface Driven<Taken> {
  readonly before: MemorySample;
  readonly live: MemorySample;
  readonly window: WindowSample;
  readonly machineMs: number;
  readonly arrivals: readonly Arrival[];
  readonly errors: readonly string[];
  readonly tally: LoadTally | undefined;
  readonly taken: Taken;
}

/** Both servers of a relay comparison, each with its memory before any session. */
export interface Compared<G, R> {
  readonly gateway: G;
  readonly idleGateway: MemorySample;
  readonly relay: R;
  readonly idleRelay: MemorySample;
  /** The load child's link. */
  readonly load: LoadLink;
}

/**
 * The processes of a relay comparison around `body`: the gateway started in this process
 * (`startGateway`, given the process meter), then the children next to the runner (`dir`):
 * relay.ts (started by `startRelay`, 20 s at most) and load.ts. The children are killed and the
 * gateway closed however `body` ends.
 */
export async function compareWithRelay<G, R extends MeasuredServerBase<unknown>>(
  dir: URL,
  startGateway: (meter: ProcessMeter) => Promise<{ readonly server: G; readonly close: () => Promise<void> }>,
  startRelay: (child: ChildProcess) => Promise<R>,
  body: (compared: Compared<G, R>) => Promise<number>,
): Promise<number> {
  const meter = new ProcessMeter();
  const { server: gateway, close } = await startGateway(meter);
  const idleGateway = meter.memory();
  const relayChild = forkBench(new URL("./relay.ts", dir));
  const loadChild = forkBench(new URL("./load.ts", dir));
  try {
    const relay = await within(startRelay(relayChild), 20_000, "starting the relay");
    const idleRelay = await relay.memory();
    return await body({ gateway, idleGateway, relay, idleRelay, load: new LoadLink(loadChild) });
  } finally {
    relayChild.kill();
    loadChild.kill();
    await close();
  }
}

/** The load both benches put on a server in a phase: 10 speech frames a turn, 100 ms pauses, callers spread over 1 s. */
export function phasePlan(url: string, sessions: number, turns: number): LoadPlan {
  return { url, sessions, turns, speechFrames: 10, pauseMs: 100, startSpreadMs: 1000 };
}

/** What every phase of a relay comparison reports besides its latencies. */
export interface PhaseFigures {
  readonly server: "gateway" | "relay";
  readonly sessions: number;
  readonly expected: number;
  readonly cpuMsPerSessionSecond: number;
  readonly rssPerSessionKiB: number;
  readonly heapPerSessionKiB: number;
  readonly window: WindowSample;
  /** Cores' worth of CPU the rest of the machine used during the turns (not the server, not the callers). */
  readonly otherCores: number;
  readonly tally: LoadTally | undefined;
  readonly errors: readonly string[];
}

/** A driven phase's figures: the server's CPU (ms) per session-second, its memory (KiB) per session, the rest of the machine's load. */
export function phaseFigures(server: "gateway" | "relay", plan: LoadPlan, driven: Omit<Driven<unknown>, "arrivals" | "taken">): PhaseFigures {
  const { before, live, window, machineMs, tally, errors } = driven;
  const sessionSeconds = (plan.sessions * window.wallMs) / 1000;
  return {
    server,
    sessions: plan.sessions,
    expected: plan.sessions * plan.turns,
    cpuMsPerSessionSecond: window.cpuMs / sessionSeconds,
    rssPerSessionKiB: (live.rss - before.rss) / plan.sessions / 1024,
    heapPerSessionKiB: (live.heapUsed - before.heapUsed) / plan.sessions / 1024,
    window,
    otherCores: (machineMs - window.cpuMs - (tally?.window.cpuMs ?? 0)) / window.wallMs,
    tally,
    errors,
  };
}

/**
 * What went wrong in a run's phases, each labelled with its server and sessions: what `check`
 * finds in the phase (its own figures), then its first five errors.
 */
export function phaseProblems<P extends PhaseFigures>(results: readonly P[], check: (phase: P) => readonly string[]): string[] {
  return results.flatMap((r) => [...check(r), ...r.errors.slice(0, 5)].map((problem) => `${r.server}, ${r.sessions} session(s): ${problem}`));
}

/**
 * The end of a run: prints its problems (`label`-prefixed) and writes the docs (`write`, to
 * `path`) only when `docs` is on and nothing went wrong. Returns the exit code.
 */
export function finishRun(label: string, found: readonly string[], docs: boolean, write: () => void, path: string): number {
  for (const problem of found) console.error(`${label}: ${problem}`);
  if (docs && found.length === 0) {
    write();
    console.log(`${label}: wrote ${path}`);
  } else if (docs) {
    console.error(`${label}: docs not written: the run was incomplete`);
  }
  return found.length === 0 ? 0 : 1;
}

/**
 * One phase's sequence: connect and greet every caller, measure the server over the turns,
 * close the callers, wait for the server to settle, and take its marks.
 */
export async function driveLoad<Taken>(load: LoadLink, server: MeasuredServerBase<Taken>, plan: LoadPlan): Promise<Driven<Taken>> {
  const before = await server.memory();
  const greeted = load.next("greeted");
  load.send({ type: "run", plan });
  await greeted;
  const live = await server.memory();
  const machineBefore = machineBusyMs();
  await server.start();
  const finished = load.next("finished");
  load.send({ type: "go" });
  const { arrivals, errors, tally } = await finished;
  const window = await server.stop();
  const machineAfter = machineBusyMs();
  const machineMs = machineBefore === undefined || machineAfter === undefined ? Number.NaN : machineAfter - machineBefore;
  const closed = load.next("closed");
  load.send({ type: "close" });
  await closed;
  await server.settled();
  const taken = await server.marks();
  return { before, live, window, machineMs, arrivals, errors, tally, taken };
}

// ── report ──────────────────────────────────────────────────────────────────────────────

export const ms = (v: number): string => (Number.isNaN(v) ? "–" : v < 1 ? v.toFixed(3) : v.toFixed(2));
/** a ÷ b, or "–" where a ratio means nothing (a zero or negative figure, e.g. RSS noise). */
export const ratio = (a: number, b: number): string => (a > 0 && b > 0 && Number.isFinite(a / b) ? `${(a / b).toFixed(a / b < 10 ? 2 : 0)}×` : "–");

/**
 * Where a bench writes its results: the section of docs/`doc` between `<!-- name:start -->` and
 * `<!-- name:end -->` (`writeSection` replaces it; the body carries the markers).
 */
export function docSection(name: string, doc = "benchmarks.md"): { readonly path: string; readonly start: string; readonly end: string } {
  return { path: fileURLToPath(new URL(`../../docs/${doc}`, import.meta.url)), start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` };
}

/** Print a bench's report and, unless `--no-docs` was given, write it as `section` of its doc. */
export function publishSection(label: string, section: ReturnType<typeof docSection>, body: string, argv: readonly string[] = process.argv): void {
  console.log(`\n${body}\n`);
  if (argv.includes("--no-docs")) return;
  writeSection(section.path, section.start, section.end, `${section.start}\n${body}\n${section.end}`);
  console.log(`${label}: wrote ${section.path}`);
}

/** Replaces the section between `start` and `end` in `path` (appends it if they are missing). */
export function writeSection(path: string, start: string, end: string, body: string, initial?: string): void {
  const current = initial !== undefined && !existsSync(path) ? initial : readFileSync(path, "utf8");
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next = from === -1 || to === -1 || to < from ? `${current.trimEnd()}\n\n${body}\n` : `${current.slice(0, from)}${body}${current.slice(to + end.length)}`;
  writeFileSync(path, next);
}

// ── main ────────────────────────────────────────────────────────────────────────────────

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Forks a bench child with an IPC channel; `file` is a URL, e.g. `new URL("./relay.ts", import.meta.url)` next to the caller. */
export function forkBench(file: URL): ChildProcess {
  return fork(fileURLToPath(file), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
}

/** Runs `main` under a hard time limit and sets the exit code from it. */
export function runBench(label: string, limitMs: number, main: () => Promise<number>): void {
  const deadline = setTimeout(() => {
    console.error(`${label}: over the ${limitMs / 1000} s limit, giving up`);
    process.exit(1);
  }, limitMs);
  deadline.unref();
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(`${label} failed:`, error);
      process.exitCode = 1;
    },
  );
}

// ── the load child ──────────────────────────────────────────────────────────────────────

/** A load child's caller, as the shared run/close loop drives it. */
export interface LoadCaller {
  readonly greeted: Promise<void>;
  readonly closed: Promise<void>;
  converse(plan: LoadPlan): Promise<void>;
  close(): void;
}

/** Frames and bytes the callers received while counting is on (during the turns). */
const received = { counting: false, textFrames: 0, textBytes: 0, binaryFrames: 0, binaryBytes: 0 };

/** Counts one received frame, while counting is on. */
export function countReceived(data: Buffer, isBinary: boolean): void {
  if (!received.counting) return;
  if (isBinary) received.binaryFrames += 1;
  else received.textFrames += 1;
  if (isBinary) received.binaryBytes += data.byteLength;
  else received.textBytes += data.byteLength;
}

/**
 * The load child's message loop. `connect` creates the plan's callers, pushing each into
 * `callers` as it is created, and resolves once they may be waited on for their greetings.
 */
export function serveLoad(connect: (plan: LoadPlan, arrivals: Arrival[], errors: string[], callers: LoadCaller[]) => Promise<void>): void {
  const meter = new ProcessMeter();
  let callers: LoadCaller[] = [];
  let go: (() => void) | undefined;

  const run = async (plan: LoadPlan): Promise<void> => {
    const arrivals: Arrival[] = [];
    const errors: string[] = [];
    const started = new Promise<void>((resolve) => {
      go = resolve;
    });
    callers = [];
    await connect(plan, arrivals, errors, callers);
    await Promise.all(callers.map((caller) => caller.greeted));
    send<FromLoad>({ type: "greeted" });
    await started;
    Object.assign(received, { counting: true, textFrames: 0, textBytes: 0, binaryFrames: 0, binaryBytes: 0 });
    meter.start();
    await Promise.all(callers.map((caller) => caller.converse(plan)));
    const window = meter.stop();
    received.counting = false;
    const { textFrames, textBytes, binaryFrames, binaryBytes } = received;
    send<FromLoad>({ type: "finished", arrivals, errors, tally: { textFrames, textBytes, binaryFrames, binaryBytes, window } });
  };

  const closeAll = async (): Promise<void> => {
    for (const caller of callers) caller.close();
    await Promise.race([Promise.all(callers.map((caller) => caller.closed)), sleepFor(2000)]);
    callers = [];
    send<FromLoad>({ type: "closed" });
  };

  process.on("message", (message: ToLoad) => {
    if (message.type === "run") {
      run(message.plan).catch((error: unknown) => send<FromLoad>({ type: "finished", arrivals: [], errors: [`load: ${String(error)}`] }));
    } else if (message.type === "go") {
      go?.();
    } else {
      void closeAll();
    }
  });
  process.on("disconnect", () => process.exit(0));
}
