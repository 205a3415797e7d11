/**
 * `npm run bench:scale`: how many Twilio calls the gateway holds per process and per core before
 * the p99 of the end-to-end added latency passes 5 ms (issue 8), with `serve --workers 1` and
 * `--workers 2`, and the floor relay as the in-run baseline. Loopback only, one run.
 *
 * The gateways run as users deploy them, each its own process group (bench/scale/gateway.ts): the
 * package built first (`npm run build`), then `node dist/cli.js serve <agent> --workers N --port 0
 * --host 127.0.0.1`. The rest is
 * the telephony bench's: the callers (bench/telephony/callers.ts), the fake OpenAI Realtime
 * service (bench/telephony/fake-realtime.ts) and the floor (bench/telephony/relay.ts), each in its own
 * process, and its phase summary (bench/telephony/report.ts).
 *
 * The ramp goes up the ladder one step at a time, each server in turn at each step (floor,
 * 1 worker, 2 workers), with a fresh set of calls per step; a server leaves the ramp at its first
 * step over the bar, and the ramp stops when no server is left, the ladder ends, or the time
 * limit comes near. Every phase and every call to a child is bounded, the whole run too; the
 * gateways' process groups are SIGKILLed whatever ends the run.
 *
 * Options: --steps 50,100,… (env BENCH_SCALE_STEPS), --window S (BENCH_WINDOW_S, default 8),
 * --no-docs (print only). Results go to stdout and to docs/benchmarks.md between the bench:scale
 * markers.
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { countOption, docSection, flagValue, forkBench, ms, runBench, sleep, within, writeSection } from "../shared/common.js";
import { startGroup, usageOf, writeAgent, type GatewayGroup } from "./gateway.js";
import { BAR_MS, held, scaleBody, type ScaleReport, type Step, type TargetInfo, type TargetKey } from "./report.js";
import { machineBusyMs, monoMs, type WindowSample } from "../shared/stats.js";
import { boundedChild, DRAIN_MS, dialPlan, WARM_UP, type Call, type CallersTaken, type FakeTaken } from "../telephony/protocol.js";
import { failed, summarizePhase } from "../telephony/report.js";

const RUN_LIMIT_MS = 400_000;
/** No step starts unless it should end this long before the run limit (stopping the gateways, the report). */
const RESERVE_MS = 45_000;
const STEP_LIMIT_MS = 60_000;
/** After every call heard the greeting: the turns get going before the window (ms). */
const SETTLE_MS = 2000;
const MiB = 2 ** 20;
const { path: DOCS, start: START, end: END } = docSection("bench:scale");

const LADDER = [50, 100, 150, 200, 250, 300, 400, 500, 600, 800];

/** --steps / BENCH_SCALE_STEPS (the ladder), --window / BENCH_WINDOW_S (seconds), --no-docs. */
function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): { ladder: number[]; windowMs: number; docs: boolean } {
  const steps = flagValue(argv, "steps") ?? env.BENCH_SCALE_STEPS;
  const ladder = steps === undefined ? LADDER : steps.split(",").map((n) => countOption(n.trim(), LADDER[0]!, "steps"));
  const windowS = countOption(flagValue(argv, "window") ?? env.BENCH_WINDOW_S, 8, "window");
  return { ladder, windowMs: windowS * 1000, docs: !argv.includes("--no-docs") };
}

/** A server on the ramp, seen from outside its process(es). */
interface Target {
  readonly info: TargetInfo;
  readonly url: string;
  /** RSS of its process(es) now (bytes). */
  rss(): number;
  start(): Promise<void>;
  stop(): Promise<WindowSample>;
  /** Calls open, per serving process. */
  open(): Promise<number[]>;
  /** Problems since the last call. */
  problems(): Promise<string[]>;
}

async function floorTarget(child: ChildProcess, providerUrl: string): Promise<Target> {
  const call = await boundedChild(child, "the floor");
  const url = await call<string>("listen", { providerUrl });
  const rss = (): number => usageOf([child.pid ?? 0]).rss;
  return {
    info: { key: "floor", label: "floor (hand-written relay)", workers: 1, idleRssMiB: rss() / MiB },
    url,
    rss,
    async start() {
      await call("start");
    },
    stop: async () => await call<WindowSample>("stop"),
    open: async () => [await call<number>("open")],
    problems: async () => await call<string[]>("problems"),
  };
}

/** The gateway group: CPU from /proc over the window, event-loop delay from `/metrics` (worst worker). */
function gatewayTarget(group: GatewayGroup, key: TargetKey): Target {
  let from = { cpuMs: 0, at: 0 };
  const worst = (values: ReadonlyMap<string, number>): number => (values.size === 0 ? Number.NaN : Math.max(...values.values()));
  return {
    info: { key, label: `gateway, \`--workers ${group.workers}\``, workers: group.workers, idleRssMiB: group.usage().rss / MiB },
    url: group.url,
    rss: () => group.usage().rss,
    start: async () => {
      await group.scrape(); // resets each worker's event-loop histogram
      from = { cpuMs: group.usage().cpuMs, at: monoMs() };
    },
    stop: async () => {
      const cpuMs = group.usage().cpuMs - from.cpuMs;
      const wallMs = monoMs() - from.at;
      const scrape = await group.scrape();
      return { wallMs, cpuMs, loopDelayP99Ms: worst(scrape.lagP99Ms), loopDelayMaxMs: worst(scrape.lagMaxMs) };
    },
    open: async () => {
      const scrape = await group.scrape();
      // Every worker reports its event-loop delay, calls or not: that gives the list of workers.
      return [...scrape.lagP99Ms.keys()].sort((a, b) => Number(a) - Number(b)).map((worker) => scrape.open.get(worker) ?? 0);
    },
    problems: () => Promise.resolve(group.problems()),
  };
}

interface Rig {
  readonly fake: Call;
  readonly callers: Call;
}

/** CPU so far of the load generators, and of the whole machine (ms). */
async function loadCpu(rig: Rig): Promise<{ callers: number; fake: number; machine: number | undefined }> {
  const [callers, fake] = await Promise.all([rig.callers<number>("cpu"), rig.fake<number>("cpu")]);
  return { callers, fake, machine: machineBusyMs() };
}

/** Waits (5 s at most) until neither the server nor the fake holds a call; returns the server's count. */
async function waitEmpty(rig: Rig, target: Target): Promise<number> {
  const count = async (): Promise<number> => (await target.open()).reduce((a, b) => a + b, 0) + (await rig.fake<number>("open"));
  let left = await count();
  for (let i = 0; i < 50 && left > 0; i++) {
    await sleep(100);
    left = await count();
  }
  return left;
}

/** One step: fresh calls, settle, the window, hang up; the telephony bench's summary of it. */
async function runStep(rig: Rig, target: Target, calls: number, windowMs: number): Promise<Step> {
  const before = target.rss();
  const dialled = await rig.callers<{ heard: number }>("dial", dialPlan(target.url, calls));
  await sleep(SETTLE_MS);
  const perWorker = await target.open();
  const live = target.rss();
  const load0 = await loadCpu(rig);
  await target.start();
  const from = monoMs();
  await sleep(windowMs);
  const window = { from, to: monoMs() };
  const sample = await target.stop();
  const load1 = await loadCpu(rig);
  await sleep(DRAIN_MS);
  const { open } = await rig.callers<{ open: number }>("hangUp");
  const left = await waitEmpty(rig, target);
  const fake = await rig.fake<FakeTaken>("collect", window);
  const callers = await rig.callers<CallersTaken>("collect", window);
  const problems = await target.problems();
  if (open > 0) problems.push(`${open} caller sockets still open 5 s after hanging up`);
  if (left > 0) problems.push(`${left} calls still open (server + fake) 5 s after the callers hung up`);
  const machineMs = load0.machine === undefined || load1.machine === undefined ? Number.NaN : load1.machine - load0.machine;
  const phase = summarizePhase({
    server: target.info.key === "floor" ? "floor" : "gateway",
    calls,
    heard: dialled.heard,
    window,
    sample,
    before: { rss: before, heapUsed: Number.NaN },
    live: { rss: live, heapUsed: Number.NaN },
    fake,
    callers,
    callerMs: load1.callers - load0.callers,
    fakeMs: load1.fake - load0.fake,
    machineMs,
    problems,
  });
  return { key: target.info.key, calls, phase, perWorker, rssMiB: live / MiB };
}

/** After a failed step: hang up whatever it left, and drop what the children measured meanwhile. */
async function resetRig(rig: Rig): Promise<void> {
  const ignore = (): undefined => undefined;
  await rig.callers("hangUp").catch(ignore);
  await sleep(1000);
  const nothing = { from: 0, to: 0 };
  await Promise.all([rig.fake("collect", nothing).catch(ignore), rig.callers("collect", nothing).catch(ignore)]);
}

/** A step that cannot throw: a failure becomes the step's reason, and its calls are hung up. */
async function guardedStep(rig: Rig, target: Target, calls: number, windowMs: number): Promise<Step> {
  try {
    return await within(runStep(rig, target, calls, windowMs), STEP_LIMIT_MS, `${target.info.label} with ${calls} calls`);
  } catch (error) {
    const reason = String(error instanceof Error ? error.message : error);
    console.error(`bench:scale: ${calls} calls on ${target.info.label}: ${reason}`);
    await resetRig(rig);
    return { key: target.info.key, calls, phase: { server: target.info.key === "floor" ? "floor" : "gateway", calls, reason }, perWorker: [], rssMiB: Number.NaN };
  }
}

function describeStep(step: Step): string {
  const p = step.phase;
  if (failed(p)) return `failed (${p.reason})`;
  return `down p50 ${ms(p.down.p50)} / p99 ${ms(p.down.p99)} ms, up p99 ${ms(p.up.p99)} ms, ${p.heard}/${p.calls} heard, per worker ${step.perWorker.join("+")}: ${held(step) ? "held" : `over the ${BAR_MS} ms bar`}`;
}

/** The ramp: each step's servers in turn, each leaving at its first step over the bar; stops near the time limit. */
async function ramp(rig: Rig, targets: readonly Target[], options: ReturnType<typeof parseOptions>, deadline: number): Promise<{ steps: Step[]; cutShort: string | undefined }> {
  const steps: Step[] = [];
  const took = new Map<TargetKey, number>();
  let active = [...targets];
  for (const calls of options.ladder) {
    for (const target of active) {
      // The server's last step took this long; a bigger one dials a little longer.
      const expected = 1000 + (took.get(target.info.key) ?? options.windowMs + 8000);
      if (Date.now() + expected > deadline) return { steps, cutShort: `no time left for ${calls} calls on ${target.info.label} within the ${RUN_LIMIT_MS / 1000} s limit` };
      const began = Date.now();
      const step = await guardedStep(rig, target, calls, options.windowMs);
      took.set(target.info.key, Date.now() - began);
      steps.push(step);
      console.log(`bench:scale: ${target.info.label}, ${calls} calls: ${describeStep(step)}`);
    }
    active = active.filter((target) => steps.some((s) => s.key === target.info.key && s.calls === calls && held(s)));
    if (active.length === 0) break;
  }
  return { steps, cutShort: undefined };
}

async function main(): Promise<number> {
  const began = Date.now();
  const options = parseOptions(process.argv.slice(2), process.env);
  console.log("bench:scale: building the package (npm run build)");
  execFileSync("npm", ["run", "build", "--silent"], { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: "inherit" });
  // A signal to the runner ends it through `exit`, whose handlers kill the gateways' groups.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));
  const fakeChild = forkBench(new URL("../telephony/fake-realtime.ts", import.meta.url));
  const callersChild = forkBench(new URL("../telephony/callers.ts", import.meta.url));
  const floorChild = forkBench(new URL("../telephony/relay.ts", import.meta.url));
  const groups: GatewayGroup[] = [];
  let agent: ReturnType<typeof writeAgent> | undefined;
  /** Problems outside the measured steps: start-up, warm-up, the stop. */
  const aside: string[] = [];
  try {
    const rig: Rig = { fake: await boundedChild(fakeChild, "the fake service"), callers: await boundedChild(callersChild, "the callers") };
    const providerUrl = await rig.fake<string>("url");
    agent = writeAgent(providerUrl);
    const targets: Target[] = [await floorTarget(floorChild, providerUrl)];
    for (const workers of [1, 2]) {
      console.log(`bench:scale: starting \`serve --workers ${workers}\``);
      const group = await startGroup(agent.path, workers);
      groups.push(group);
      targets.push(gatewayTarget(group, workers === 1 ? "w1" : "w2"));
      aside.push(...group.problems().map((text) => `${targets.at(-1)!.info.label}, at start-up: ${text}`));
    }
    console.log(`bench:scale: warming up (${WARM_UP.calls} calls per server)`);
    for (const target of targets) {
      const { phase } = await guardedStep(rig, target, WARM_UP.calls, WARM_UP.windowMs);
      aside.push(...(failed(phase) ? [phase.reason] : phase.problems).map((text) => `${target.info.label}, warm-up: ${text}`));
    }
    const { steps, cutShort } = await ramp(rig, targets, options, began + RUN_LIMIT_MS - RESERVE_MS);

    let unclean = false;
    for (const [i, group] of groups.entries()) {
      const { info } = targets[i + 1]!;
      const result = await group.stop();
      info.stop = result.text;
      unclean ||= !result.clean;
      if (!result.clean) aside.push(`${info.label}, stopping: ${result.text}`);
      aside.push(...group.problems().map((text) => `${info.label}, stopping: ${text}`));
    }
    const report: ScaleReport = { targets: targets.map((t) => t.info), steps, ladder: options.ladder, windowMs: options.windowMs, cores: availableParallelism(), cutShort, elapsedMs: Date.now() - began };
    const body = scaleBody(report, aside);
    console.log(`\n${body}\n`);
    if (options.docs) writeSection(DOCS, START, END, [START, body, END].join("\n"));
    if (options.docs) console.log(`bench:scale: ${DOCS} updated`);
    return unclean || steps.some((s) => s.key !== "floor" && failed(s.phase)) ? 1 : 0;
  } finally {
    for (const group of groups) group.kill();
    for (const child of [fakeChild, callersChild, floorChild]) child.kill();
    agent?.remove();
  }
}

runBench("bench:scale", RUN_LIMIT_MS, main);
