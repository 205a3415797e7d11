/**
 * `npm run soak`: many concurrent sessions of every kind against one gateway process for a long
 * time, with sessions closed and replaced all along, to show leaks and slow-downs (issue 9).
 *
 * Two processes. The gateway child (bench/soak/gateway.ts) runs a text, a pipeline and an s2s
 * gateway (the s2s one also answers Twilio media streams); this runner holds the loopback Realtime
 * fake (bench/soak/fake-realtime.ts) and the callers (bench/soak/sessions.ts), so the child's figures
 * are the gateway's alone. Every few seconds the runner samples the child over IPC: RSS and JS heap
 * after a full GC, active resources (`process.getActiveResourcesInfo()`), event-loop delay and
 * CPU. After the warm-up (the first 20 % of the run) it fits least-squares slopes to RSS, heap and
 * handles, splits the rest into 8 windows of client-side turn latency, and counts unexpected
 * errors: any `error.reported` the callers did not provoke, any close they did not start, any
 * stall, any line the child writes to stdout or stderr (its warnings and errors go there), any
 * protocol mistake the Realtime fake saw. After the run every session closes and the child must
 * hold no session and about as many handles as before the load.
 *
 * Options (env): SOAK_SECONDS (default 600), SOAK_SESSIONS (default 100), SOAK_NO_DOCS=1 (print
 * only), SOAK_QUIET=1 (no progress lines), SOAK_RESULT=<file> (also write the result there as JSON,
 * with `handleSlack` and `kinds`: what test/soak/soak.test.ts runs for 60 s and reads). Writes
 * docs/reliability.md between the soak markers.
 */
import { fork, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { docSection, isOpenCarrierNotice, ms, runBench, sleep, within, writeSection } from "../shared/common.js";
import { KINDS, type FromGateway, type GatewaySample, type Kind, type SoakUrls, type ToGateway } from "./protocol.js";
import { startSoakRealtime } from "./fake-realtime.js";
import { runSession, STALL_MS, Tally, type SessionEnv } from "./sessions.js";
import { percentile, summarize, type Summary } from "../shared/stats.js";

const { path: DOCS, start: START, end: END } = docSection("soak", "reliability.md");
const MiB = 2 ** 20;
/** Share of each kind among the sessions. */
const MIX: Readonly<Record<Kind, number>> = { text: 0.25, pipeline: 0.35, s2s: 0.25, phone: 0.15 };
const WARM_UP_SHARE = 0.2;
const WINDOWS = 8;
/** After the run, the child's handles must come back to within this of the count before the load. */
export const HANDLE_SLACK = 10;
/** How long the child gets to close its sessions and sockets after the callers left (ms). */
const SETTLE_LIMIT_MS = 15_000;

export interface SoakOptions {
  readonly seconds: number;
  readonly sessions: number;
  /** Progress lines on stdout (default true). */
  readonly progress?: boolean;
  /** Aborting stops the run and kills the child at once. */
  readonly signal?: AbortSignal;
}

export interface Sampled extends GatewaySample {
  /** Seconds since the load began. */
  readonly t: number;
}

export interface LatencyWindow {
  readonly fromS: number;
  readonly toS: number;
  readonly turns: Summary;
  readonly lagP99Ms: number;
  readonly rssMiB: number;
  readonly heapMiB: number;
  readonly handles: number;
}

export interface SoakResult {
  readonly seconds: number;
  readonly sessions: number;
  readonly mix: Readonly<Record<Kind, number>>;
  readonly warmUpS: number;
  readonly sampleMs: number;
  readonly lifetimeS: number;
  readonly resumeGraceS: number;
  readonly elapsedMs: number;
  readonly turns: Readonly<Record<Kind, number>>;
  readonly totalTurns: number;
  readonly opened: number;
  readonly churned: number;
  readonly endings: { readonly close: number; readonly cut: number; readonly drop: number };
  /** Turns of each session, fewest first. */
  readonly turnsPerSession: readonly number[];
  readonly stalls: number;
  readonly bargeIns: number;
  readonly bargeMissed: number;
  readonly cancels: number;
  readonly toolCalls: number;
  readonly provoked: number;
  readonly errors: readonly { readonly key: string; readonly count: number; readonly example: string; readonly atS: number }[];
  readonly errorCount: number;
  readonly baseline: GatewaySample;
  readonly samples: readonly Sampled[];
  /** After every session closed (or `SETTLE_LIMIT_MS`). */
  readonly after: GatewaySample;
  readonly peakHandles: number;
  readonly slopes: { readonly rssMiBPerMin: number; readonly heapMiBPerMin: number; readonly handlesPerMin: number };
  readonly windows: readonly LatencyWindow[];
  readonly byKind: Readonly<Record<Kind, Summary>>;
  readonly fake: { readonly connections: number; readonly turns: number; readonly toolCalls: number; readonly interrupted: number };
}

// ── figures ─────────────────────────────────────────────────────────────────────────────

/** Least-squares slope of y over x; NaN with fewer than 3 points. */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 3) return Number.NaN;
  let sx = 0;
  let sy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** Sessions of each kind: `sessions` split by `MIX`, largest remainders first, each kind at least 1. */
export function mixOf(sessions: number): Record<Kind, number> {
  const counts = Object.fromEntries(KINDS.map((k) => [k, Math.max(1, Math.floor(sessions * MIX[k]))])) as Record<Kind, number>;
  const byRemainder = [...KINDS].sort((a, b) => ((sessions * MIX[b]) % 1) - ((sessions * MIX[a]) % 1));
  for (let i = 0; KINDS.reduce((n, k) => n + counts[k], 0) < sessions; i++) counts[byRemainder[i % KINDS.length]!] += 1;
  return counts;
}

// ── the gateway child ───────────────────────────────────────────────────────────────────

interface Child {
  readonly urls: SoakUrls;
  /** The process has exited (stopped, killed or crashed). */
  readonly gone: boolean;
  sample(): Promise<GatewaySample>;
  final(client: number, turn: number): void;
  stop(): Promise<void>;
  kill(): void;
}

/**
 * The gateway warns once per malformed command (`client sent malformed command`): for the ones the
 * callers sent on purpose that line is expected, and goes to `provokedLog` instead of `problem`.
 */
async function startChild(realtimeUrl: string, resumeGraceMs: number, problem: (key: string, example: string) => void, provokedLog: () => void): Promise<Child> {
  const file = fileURLToPath(new URL("./gateway.ts", import.meta.url));
  const child: ChildProcess = fork(file, [realtimeUrl, String(resumeGraceMs)], { execArgv: ["--import", "tsx"], stdio: ["ignore", "pipe", "pipe", "ipc"] });
  let stopping = false;
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.once("exit", kill);
  // The child writes nothing on its own: every line it prints is a warning, an error or a crash.
  const tail: string[] = [];
  const read = (stream: NodeJS.ReadableStream | null, name: string): void => {
    if (stream === null) return;
    createInterface({ input: stream }).on("line", (line) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      let key = `${name}: ${line.replace(/\d+/g, "N").slice(0, 160)}`;
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string }; type?: string; problem?: string };
        if (entry.level === 40 && entry.msg === "client sent malformed command" && entry.type === "user_text" && entry.problem?.startsWith("user_text: text: ") === true) return provokedLog();
        if (entry.level === 40 && isOpenCarrierNotice(entry.msg)) return;
        key = `log level ${String(entry.level)}: "${entry.msg ?? ""}"${entry.err?.message === undefined ? "" : ` (${entry.err.message.replace(/\d+/g, "N").slice(0, 120)})`}`;
      } catch {
        // not a log line
      }
      problem(`gateway ${key}`, line.slice(0, 400));
    });
  };
  read(child.stdout, "stdout");
  read(child.stderr, "stderr");

  let nextId = 0;
  const pending = new Map<number, { resolve: (sample: GatewaySample) => void; reject: (error: Error) => void }>();
  let stopped: (() => void) | undefined;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const urls = await within(
    new Promise<SoakUrls>((resolve, reject) => {
      child.on("message", (message: FromGateway) => {
        if (message.type === "listening") resolve(message.urls);
        else if (message.type === "sample") pending.get(message.id)?.resolve(message.sample);
        else stopped?.();
      });
      child.once("exit", (code, signal) => {
        const error = new Error(`the gateway process exited (${signal ?? `code ${String(code)}`})${stopping ? "" : `; its last lines:\n${tail.join("\n")}`}`);
        if (!stopping) problem("the gateway process exited during the run", error.message);
        for (const p of pending.values()) p.reject(error);
        pending.clear();
        reject(error);
      });
    }),
    30_000,
    "the gateway process listening",
  );
  const send = (message: ToGateway): void => {
    if (child.connected) child.send(message);
  };
  return {
    urls,
    get gone() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    sample: () =>
      within(
        new Promise<GatewaySample>((resolve, reject) => {
          const id = ++nextId;
          pending.set(id, {
            resolve: (sample) => {
              pending.delete(id);
              resolve(sample);
            },
            reject,
          });
          send({ type: "sample", id });
        }),
        10_000,
        "a sample of the gateway process",
      ),
    final: (client, turn) => send({ type: "final", client, turn }),
    stop: async () => {
      stopping = true;
      const done = new Promise<void>((resolve) => (stopped = resolve));
      send({ type: "stop" });
      await within(Promise.race([done.then(() => exited), exited]), 10_000, "the gateway process stopping").catch(() => undefined);
      kill();
      process.off("exit", kill);
    },
    kill,
  };
}

// ── the run ─────────────────────────────────────────────────────────────────────────────

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const began = Date.now();
  const durationMs = options.seconds * 1000;
  const warmUpMs = durationMs * WARM_UP_SHARE;
  // 30 samples a minute-long run, one per 5 s for longer ones: each costs the gateway two full GCs.
  const sampleMs = Math.min(5000, Math.max(2000, Math.round(durationMs / 30)));
  // Sessions live 10–30 s on average, so every slot is replaced many times.
  const lifetimeMs = Math.min(30_000, Math.max(10_000, durationMs / 20));
  // Resume records outlive their sessions this long: the deployed 120 s at most, so their number is steady after the warm-up.
  const resumeGraceMs = Math.min(120_000, warmUpMs);
  const say = (text: string): void => {
    if (options.progress !== false) console.log(`soak: ${text}`);
  };
  const tally = new Tally();
  const fake = await startSoakRealtime();
  let child: Child | undefined;
  const abort = (): void => child?.kill();
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    let provokedLogs = 0;
    child = await startChild(
      fake.url,
      resumeGraceMs,
      (key, example) => tally.error(key, example),
      () => void (provokedLogs += 1),
    );
    const gateway = child;
    await sleep(1000);
    const baseline = await gateway.sample();
    say(`gateway up: ${(baseline.rss / MiB).toFixed(0)} MiB RSS, ${baseline.handles} handles; ${options.sessions} sessions for ${options.seconds} s`);

    const mix = mixOf(options.sessions);
    const slots = KINDS.flatMap((kind) => Array.from({ length: mix[kind] }, () => kind));
    let stopping = false;
    let nextClient = 0;
    const env: SessionEnv = { urls: gateway.urls, tally, final: (client, turn) => gateway.final(client, turn), stopping: () => stopping || gateway.gone || options.signal?.aborted === true };
    const loadBegan = tally.now();
    // Slots start spread over 5 s (or a tenth of the warm-up), each replacing its session as soon as it ends.
    const spreadMs = Math.min(5000, warmUpMs / 10);
    const runs = slots.map(async (kind, i) => {
      await sleep((spreadMs * i) / slots.length);
      do {
        await runSession(kind, ++nextClient, env, lifetimeMs * (0.5 + Math.random()));
      } while (!env.stopping());
    });

    const samples: Sampled[] = [];
    const sampler = (async () => {
      let next = loadBegan + sampleMs;
      let said = loadBegan;
      while (!env.stopping()) {
        await sleep(Math.max(0, next - tally.now()));
        next += sampleMs;
        if (stopping) break;
        const sample = await gateway.sample().catch(() => undefined);
        if (sample === undefined) continue;
        const t = (tally.now() - loadBegan) / 1000;
        samples.push({ ...sample, t });
        if (tally.now() - said >= 30_000) {
          said = tally.now();
          const turns = KINDS.reduce((n, k) => n + tally.turns[k], 0);
          say(`${t.toFixed(0)} s: ${turns} turns, ${tally.turnsPerSession.length} sessions ended, RSS ${(sample.rss / MiB).toFixed(0)} MiB, heap ${(sample.heapUsed / MiB).toFixed(0)} MiB, ${sample.handles} handles, lag p99 ${ms(sample.lagP99Ms)} ms, ${tally.errorCount} unexpected errors`);
        }
      }
    })();

    // The run's length, cut short by an abort or by the gateway process dying.
    const ended = new Promise<void>((resolve) => options.signal?.addEventListener("abort", () => resolve(), { once: true }));
    const endAt = loadBegan + durationMs;
    while (tally.now() < endAt && !env.stopping()) await Promise.race([sleep(Math.min(1000, endAt - tally.now())), ended]);
    stopping = true;
    const runEnded = (tally.now() - loadBegan) / 1000;
    // Each session finishes its turn (bounded by the stall limit) and closes.
    await within(Promise.all(runs), 3 * STALL_MS + 10_000, "the sessions closing").catch((error: unknown) => tally.error("sessions did not close at the end", String(error)));
    await sampler;
    say(`load stopped after ${runEnded.toFixed(0)} s; waiting for the gateway to settle`);

    // Every session closed: the child should hold none and come back to its handle count before the load.
    let after = await gateway.sample();
    const settleBegan = Date.now();
    const open = (s: GatewaySample): number => s.sessions.text + s.sessions.pipeline + s.sessions.s2s;
    while ((open(after) > 0 || after.handles > baseline.handles + HANDLE_SLACK || fake.open() > 0) && Date.now() - settleBegan < SETTLE_LIMIT_MS) {
      await sleep(500);
      after = await gateway.sample();
    }
    if (open(after) > 0) tally.error("sessions still live in the gateway after every caller left", `${JSON.stringify(after.sessions)} after ${SETTLE_LIMIT_MS / 1000} s`);
    if (fake.open() > 0) tally.error("Realtime sockets still open after every session ended", `${fake.open()} open`);
    if (provokedLogs > tally.provokedSent) tally.error("gateway warned of more malformed commands than the callers sent", `${provokedLogs} warnings, ${tally.provokedSent} sent`);
    for (const violation of fake.violations) tally.error(`Realtime fake: ${violation.replace(/\d+/g, "N")}`, violation);
    await gateway.stop();

    const post = samples.filter((s) => s.t * 1000 >= warmUpMs);
    const perMin = (pick: (s: Sampled) => number): number => slope(post.map((s) => [s.t / 60, pick(s)] as const));
    const windowS = (runEnded - warmUpMs / 1000) / WINDOWS;
    const windows: LatencyWindow[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      const fromS = warmUpMs / 1000 + w * windowS;
      const toS = fromS + windowS;
      const values: number[] = [];
      for (let i = 0; i + 2 < tally.latencies.length; i += 3) {
        const at = (tally.latencies[i]! - loadBegan) / 1000;
        if (at >= fromS && at < toS) values.push(tally.latencies[i + 2]!);
      }
      const inWindow = samples.filter((s) => s.t > fromS && s.t <= toS + 1e-6);
      const last = inWindow.at(-1);
      windows.push({
        fromS,
        toS,
        turns: summarize(values),
        lagP99Ms: inWindow.length === 0 ? Number.NaN : Math.max(...inWindow.map((s) => s.lagP99Ms)),
        rssMiB: last === undefined ? Number.NaN : last.rss / MiB,
        heapMiB: last === undefined ? Number.NaN : last.heapUsed / MiB,
        handles: last?.handles ?? Number.NaN,
      });
    }
    const byKind = Object.fromEntries(
      KINDS.map((kind, k) => {
        const values: number[] = [];
        for (let i = 0; i + 2 < tally.latencies.length; i += 3) {
          if (tally.latencies[i + 1] === k && tally.latencies[i]! - loadBegan >= warmUpMs) values.push(tally.latencies[i + 2]!);
        }
        return [kind, summarize(values)];
      }),
    ) as Record<Kind, Summary>;
    const errors = [...tally.errors].map(([key, e]) => ({ key, ...e })).sort((a, b) => b.count - a.count);
    return {
      seconds: options.seconds,
      sessions: options.sessions,
      mix,
      warmUpS: warmUpMs / 1000,
      sampleMs,
      lifetimeS: lifetimeMs / 1000,
      resumeGraceS: resumeGraceMs / 1000,
      elapsedMs: Date.now() - began,
      turns: { ...tally.turns },
      totalTurns: KINDS.reduce((n, k) => n + tally.turns[k], 0),
      opened: KINDS.reduce((n, k) => n + tally.opened[k], 0),
      churned: tally.churned,
      endings: { ...tally.endings },
      turnsPerSession: [...tally.turnsPerSession].sort((a, b) => a - b),
      stalls: tally.stalls,
      bargeIns: tally.bargeIns,
      bargeMissed: tally.bargeMissed,
      cancels: tally.cancels,
      toolCalls: tally.toolCalls,
      provoked: tally.provoked,
      errors,
      errorCount: tally.errorCount,
      baseline,
      samples,
      after,
      peakHandles: Math.max(baseline.handles, ...samples.map((s) => s.handles)),
      slopes: { rssMiBPerMin: perMin((s) => s.rss / MiB), heapMiBPerMin: perMin((s) => s.heapUsed / MiB), handlesPerMin: perMin((s) => s.handles) },
      windows,
      byKind,
      fake: { ...fake.stats },
    };
  } finally {
    options.signal?.removeEventListener("abort", abort);
    child?.kill();
    await fake.close();
  }
}

// ── report ──────────────────────────────────────────────────────────────────────────────

const mib = (bytes: number): string => (bytes / MiB).toFixed(1);
const signed = (v: number, digits = 2): string => (Number.isNaN(v) ? "–" : `${v >= 0 ? "+" : ""}${v.toFixed(digits)}`);

/** The tables and the verdict (markdown). */
export function soakBody(r: SoakResult, command: string): string {
  const cpu = cpus();
  const post = r.samples.filter((s) => s.t >= r.warmUpS);
  const first = r.windows[0];
  const last = r.windows.at(-1);
  const cores = post.length === 0 ? Number.NaN : post.reduce((n, s) => n + s.cpuMs, 0) / post.reduce((n, s) => n + s.wallMs, 0);
  const lagP99 = post.map((s) => s.lagP99Ms).sort((a, b) => a - b);
  const rows = [
    "| figure | value |",
    "|---|--:|",
    `| turns completed (text / pipeline / s2s / phone) | ${r.totalTurns} (${KINDS.map((k) => r.turns[k]).join(" / ")}) |`,
    `| sessions opened / churned (closed and replaced during the run) | ${r.opened} / ${r.churned} |`,
    `| … of the churned: closed normally / closed mid-reply / dropped without a close frame | ${r.endings.close} / ${r.endings.cut} / ${r.endings.drop} |`,
    `| turns per session: fewest / median | ${r.turnsPerSession[0] ?? "–"} / ${percentile(r.turnsPerSession, 50)} |`,
    `| barge-ins (reply cancelled) / attempts the reply outran | ${r.bargeIns} / ${r.bargeMissed} |`,
    `| text \`cancel\`s, tool calls settled, malformed commands answered (provoked) | ${r.cancels}, ${r.toolCalls}, ${r.provoked} |`,
    `| **unexpected errors** (stalls among them) | **${r.errorCount}** (${r.stalls}) |`,
    `| **RSS slope after the warm-up (MiB/min)** | **${signed(r.slopes.rssMiBPerMin)}** |`,
    `| **JS heap slope after the warm-up (MiB/min)** | **${signed(r.slopes.heapMiBPerMin)}** |`,
    `| **active handles slope after the warm-up (per min)** | **${signed(r.slopes.handlesPerMin)}** |`,
    `| RSS, MiB: before the load / end of warm-up / end | ${mib(r.baseline.rss)} / ${post[0] === undefined ? "–" : mib(post[0].rss)} / ${post.at(-1) === undefined ? "–" : mib(post.at(-1)!.rss)} |`,
    `| JS heap, MiB: before the load / end of warm-up / end | ${mib(r.baseline.heapUsed)} / ${post[0] === undefined ? "–" : mib(post[0].heapUsed)} / ${post.at(-1) === undefined ? "–" : mib(post.at(-1)!.heapUsed)} |`,
    `| active handles: before the load / peak / after every session closed | ${r.baseline.handles} / ${r.peakHandles} / ${r.after.handles} |`,
    `| **turn latency p50 / p99, first post-warm-up window (ms)** | **${ms(first?.turns.p50 ?? Number.NaN)} / ${ms(first?.turns.p99 ?? Number.NaN)}** |`,
    `| **turn latency p50 / p99, last window (ms)** | **${ms(last?.turns.p50 ?? Number.NaN)} / ${ms(last?.turns.p99 ?? Number.NaN)}** |`,
    `| event-loop delay p99 per sample: median / worst (ms) | ${ms(percentile(lagP99, 50))} / ${ms(lagP99.at(-1) ?? Number.NaN)} |`,
    `| gateway CPU after the warm-up (cores) | ${cores.toFixed(2)} |`,
  ];
  const windows = [
    "| window (s) | turns | latency p50 (ms) | latency p99 (ms) | event-loop delay p99, worst sample (ms) | RSS (MiB) | heap (MiB) | handles |",
    "|---|--:|--:|--:|--:|--:|--:|--:|",
    ...r.windows.map((w) => `| ${w.fromS.toFixed(0)}–${w.toS.toFixed(0)} | ${w.turns.n} | ${ms(w.turns.p50)} | ${ms(w.turns.p99)} | ${ms(w.lagP99Ms)} | ${w.rssMiB.toFixed(1)} | ${w.heapMiB.toFixed(1)} | ${w.handles} |`),
  ];
  const kinds = [
    "| kind | turn latency, what it spans | turns after the warm-up | p50 (ms) | p99 (ms) |",
    "|---|---|--:|--:|--:|",
    `| text | \`user_text\` sent → first \`agent-transcript.updated\` | ${r.byKind.text.n} | ${ms(r.byKind.text.p50)} | ${ms(r.byKind.text.p99)} |`,
    `| pipeline | STT final asked for (IPC) → first audio frame | ${r.byKind.pipeline.n} | ${ms(r.byKind.pipeline.p50)} | ${ms(r.byKind.pipeline.p99)} |`,
    `| s2s | end of the caller's speech → first audio frame (the fake waits 120 ms of quiet) | ${r.byKind.s2s.n} | ${ms(r.byKind.s2s.p50)} | ${ms(r.byKind.s2s.p99)} |`,
    `| phone | end of the caller's speech → first \`media\` frame (the same 120 ms) | ${r.byKind.phone.n} | ${ms(r.byKind.phone.p50)} | ${ms(r.byKind.phone.p99)} |`,
  ];
  const errors = r.errors.length === 0 ? [] : ["", "Unexpected errors:", "", ...r.errors.map((e) => `- ${e.key} (×${e.count}, first at ${e.atS.toFixed(0)} s): \`${e.example.replace(/`/g, "'")}\``)];
  const types = Object.entries(r.after.handleTypes)
    .map(([type, n]) => `${type} ${n}`)
    .join(", ");
  return [
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpu[0]?.model.trim() ?? "unknown CPU"} (${cpu.length} cores), Node ${process.version}: \`${command}\`. ` +
      `${r.sessions} concurrent sessions (${KINDS.map((k) => `${r.mix[k]} ${k}`).join(", ")}) against one gateway process for ${r.seconds} s; warm-up ${r.warmUpS.toFixed(0)} s; ` +
      `a sample every ${r.sampleMs / 1000} s; sessions live ${(r.lifetimeS / 2).toFixed(0)}–${(r.lifetimeS * 1.5).toFixed(0)} s; resume records kept ${r.resumeGraceS.toFixed(0)} s; ${(r.elapsedMs / 1000).toFixed(0)} s in all.`,
    "",
    ...rows,
    "",
    ...windows,
    "",
    ...kinds,
    "",
    `Handles after every session closed: ${types || "none"}. The Realtime fake saw ${r.fake.connections} connections, ${r.fake.turns} spoken turns, ${r.fake.toolCalls} tool calls and ${r.fake.interrupted} responses cut by the caller's voice.`,
    ...errors,
  ].join("\n");
}

async function main(): Promise<number> {
  const seconds = Number(process.env.SOAK_SECONDS ?? 600);
  const sessions = Number(process.env.SOAK_SESSIONS ?? 100);
  if (!Number.isInteger(seconds) || seconds < 10) throw new Error(`SOAK_SECONDS must be a whole number ≥ 10, got ${process.env.SOAK_SECONDS}`);
  if (!Number.isInteger(sessions) || sessions < 4) throw new Error(`SOAK_SESSIONS must be a whole number ≥ 4, got ${process.env.SOAK_SESSIONS}`);
  const ac = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => ac.abort());
  const result = await runSoak({ seconds, sessions, progress: process.env.SOAK_QUIET !== "1", signal: ac.signal });
  const resultFile = process.env.SOAK_RESULT;
  if (resultFile !== undefined && resultFile !== "") writeFileSync(resultFile, JSON.stringify({ ...result, handleSlack: HANDLE_SLACK, kinds: KINDS }));
  const command = seconds === 600 && sessions === 100 ? "npm run soak" : `SOAK_SECONDS=${seconds} SOAK_SESSIONS=${sessions} npm run soak`;
  const body = soakBody(result, command);
  console.log(`\n${body}\n`);
  if (process.env.SOAK_NO_DOCS !== "1" && !ac.signal.aborted) {
    writeSection(DOCS, START, END, [START, body, END].join("\n"));
    console.log(`soak: ${DOCS} updated`);
  }
  return result.errorCount === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  // The run, the settling and the report, with room to spare.
  runBench("soak", Number(process.env.SOAK_SECONDS ?? 600) * 1000 + 180_000, main);
}
