/**
 * The telephony bench's figures: one phase's raw measurements → its summary, the barge-in
 * matching, and the report (table, targets, docs section) of bench/telephony/run.ts.
 */
import { cpus } from "node:os";
import { ms, ratio, wsMasking } from "../shared/common.js";
import { gatewayFromText } from "../shared/gateway-modules.js";
import { summarize, type GcSample, type MemorySample, type Summary, type WindowSample } from "../shared/stats.js";
import type { CallersTaken, FakeTaken, Window } from "./protocol.js";

/** The servers a run can measure: `vs` is a second build of the gateway (`--vs DIR`), run in the same rounds. */
export type ServerName = "floor" | "gateway" | "vs" | "sdk";
export const LABEL: Readonly<Record<ServerName, string>> = { floor: "floor (hand-written relay)", gateway: "gateway", vs: "gateway, the `--vs` build", sdk: "Agents SDK Twilio transport" };

/**
 * The targets (issue 23, "at the floor"): CPU per call over the floor's at `cpuAt` calls; each p99
 * at most `p99OverFloorMs` over the floor's at `latencyAt` calls; RSS per call at `cpuAt` calls.
 */
export const TARGETS = { cpuVsFloor: 1.1, cpuAt: [100, 200], p99OverFloorMs: 1, latencyAt: 200, rssPerCallKiB: 120 } as const;
/** A `clear` answers a barge-in when it arrives within this long after it (ms), before the caller's next one. */
const CLEAR_MATCH_MS = 1000;

export interface PhaseResult {
  readonly server: ServerName;
  readonly calls: number;
  /** Calls that heard agent audio before the window. */
  readonly heard: number;
  readonly cpuPercentPerCall: number;
  readonly rssPerCallKiB: number;
  readonly heapPerCallKiB: number;
  readonly up: Summary;
  readonly down: Summary;
  readonly barge: Summary;
  readonly missedClears: number;
  readonly spuriousClears: number;
  readonly upLost: number;
  readonly downLost: number;
  /** Marks the callers received and echoed over the whole phase (the last ones may still be queued at hang-up). */
  readonly marksReceived: number;
  readonly marksEchoed: number;
  readonly loopDelayP99Ms: number;
  /** The server's collections in the window, each figure a second (bench/shared/stats.ts, `GcSample`). */
  readonly gcPerSecond: GcSample | undefined;
  /** Cores used by the callers' and the fake's processes, and by everything else on the machine. */
  readonly callerCores: number;
  readonly fakeCores: number;
  readonly otherCores: number;
  readonly problems: readonly string[];
}

/** A phase that did not run, and why. */
export interface PhaseFailure {
  readonly server: ServerName;
  readonly calls: number;
  readonly reason: string;
}

export type Phase = PhaseResult | PhaseFailure;
export const failed = (p: Phase): p is PhaseFailure => "reason" in p;

/**
 * A phase's CPU per call paced by the rig: the server's CPU per call (% of a core) over the cores
 * the callers' and the fake's processes used in the same window. The rig does the same work
 * whichever server it talks to, so its CPU is a clock of how fast the machine ran in those
 * seconds; a ratio of two paced figures cancels the machine's drift between two phases (on
 * 2026-12-06 the floor's raw CPU per call moved by ±10% from round to round, and by 2× between two
 * runs, while its paced figure stayed within ±3%: docs/benchmarks.md, "Paced by the rig").
 * Units: % of a core per call, per core of the rig.
 */
export const pacedCpu = (p: PhaseResult): number => p.cpuPercentPerCall / (p.callerCores + p.fakeCores);

/** The gateway's CPU per call ÷ the floor's in one round, raw and paced (NaN when either did not run). */
export interface RoundRatio {
  readonly raw: number;
  readonly paced: number;
}

/** One round's CPU ÷ the floor's for the gateway (or the `--vs` build), raw and paced; NaN where either did not run. */
export function roundRatio(round: readonly Phase[], server: "gateway" | "vs" = "gateway"): RoundRatio {
  const gateway = round.find((p) => p.server === server);
  const floor = round.find((p) => p.server === "floor");
  if (gateway === undefined || floor === undefined || failed(gateway) || failed(floor)) return { raw: Number.NaN, paced: Number.NaN };
  return { raw: gateway.cpuPercentPerCall / floor.cpuPercentPerCall, paced: pacedCpu(gateway) / pacedCpu(floor) };
}

/** The gateway's p99 less the floor's in one round, for each tail the targets judge (ms; NaN where either did not run or measured none). */
export interface RoundTails {
  readonly down: number;
  readonly barge: number;
}

export function roundTails(round: readonly Phase[]): RoundTails {
  const gateway = round.find((p) => p.server === "gateway");
  const floor = round.find((p) => p.server === "floor");
  if (gateway === undefined || floor === undefined || failed(gateway) || failed(floor)) return { down: Number.NaN, barge: Number.NaN };
  const over = (pick: (p: PhaseResult) => Summary): number => (pick(gateway).n === 0 || pick(floor).n === 0 ? Number.NaN : pick(gateway).p99 - pick(floor).p99);
  return { down: over((p) => p.down), barge: over((p) => p.barge) };
}

/** The median of the numbers that are not NaN (NaN when none is). */
function medianOf(values: readonly number[]): number {
  const valid = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (valid.length === 0) return Number.NaN;
  const mid = valid.length / 2;
  return Number.isInteger(mid) ? ((valid[mid - 1] ?? 0) + (valid[mid] ?? 0)) / 2 : (valid[Math.floor(mid)] ?? Number.NaN);
}

/**
 * Barge-in latencies: each barge-in (`speech_started` sent at t to caller c) is answered by
 * c's first `clear` in [t, t + CLEAR_MATCH_MS) before c's next barge-in. Only barge-ins sent in
 * the window count; a clear that arrived in the window and answers none is spurious.
 */
export function matchBarges(barges: readonly number[], clears: readonly number[], window: Window): { latencies: number[]; missed: number; spurious: number } {
  const byClient = (pairs: readonly number[]): Map<number, number[]> => {
    const map = new Map<number, number[]>();
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const list = map.get(pairs[i + 1]!) ?? [];
      list.push(pairs[i]!);
      map.set(pairs[i + 1]!, list);
    }
    for (const list of map.values()) list.sort((a, b) => a - b);
    return map;
  };
  const clearsOf = byClient(clears);
  const latencies: number[] = [];
  let missed = 0;
  const used = new Set<number>();
  for (const [client, times] of byClient(barges)) {
    const answers = clearsOf.get(client) ?? [];
    times.forEach((t, i) => {
      const until = Math.min(times[i + 1] ?? Infinity, t + CLEAR_MATCH_MS);
      const answer = answers.find((c) => c >= t && c < until && !used.has(c));
      if (answer !== undefined) used.add(answer);
      if (t < window.from || t > window.to) return;
      if (answer === undefined) missed += 1;
      else latencies.push(answer - t);
    });
  }
  let spurious = 0;
  for (let i = 0; i + 1 < clears.length; i += 2) if (clears[i]! >= window.from && clears[i]! <= window.to && !used.has(clears[i]!)) spurious += 1;
  return { latencies, missed, spurious };
}

export interface PhaseRaw {
  readonly server: ServerName;
  readonly calls: number;
  readonly heard: number;
  readonly window: Window;
  readonly sample: WindowSample;
  readonly before: MemorySample;
  readonly live: MemorySample;
  readonly fake: FakeTaken;
  readonly callers: CallersTaken;
  /** CPU (ms) of the callers' and the fake's processes, and of the whole machine, over the window. */
  readonly callerMs: number;
  readonly fakeMs: number;
  readonly machineMs: number;
  readonly problems: readonly string[];
}

export function summarizePhase(raw: PhaseRaw): PhaseResult {
  const { sample, fake, callers } = raw;
  const barge = matchBarges(fake.barges, callers.clears, raw.window);
  const cores = (cpu: number): number => cpu / sample.wallMs;
  const problems = [...raw.problems, ...fake.violations.map((v) => `fake service: ${v}`), ...callers.errors.map((e) => `callers: ${e}`)];
  if (raw.heard < raw.calls) problems.unshift(`${raw.calls - raw.heard} of ${raw.calls} calls heard no agent audio before the window`);
  if (fake.unattributed > 0) problems.push(`${fake.unattributed} barge-ins on sockets with no caller audio yet (not measured)`);
  return {
    server: raw.server,
    calls: raw.calls,
    heard: raw.heard,
    cpuPercentPerCall: (100 * cores(sample.cpuMs)) / raw.calls,
    rssPerCallKiB: (raw.live.rss - raw.before.rss) / raw.calls / 1024,
    heapPerCallKiB: (raw.live.heapUsed - raw.before.heapUsed) / raw.calls / 1024,
    up: summarize(fake.up),
    down: summarize(callers.down),
    barge: summarize(barge.latencies),
    missedClears: barge.missed,
    spuriousClears: barge.spurious,
    upLost: callers.sent - fake.up.length,
    downLost: fake.deltasSent - callers.down.length,
    marksReceived: callers.marksReceived,
    marksEchoed: callers.marksEchoed,
    loopDelayP99Ms: sample.loopDelayP99Ms,
    gcPerSecond: sample.gc === undefined ? undefined : perSecond(sample.gc, sample.wallMs),
    callerCores: cores(raw.callerMs),
    fakeCores: cores(raw.fakeMs),
    otherCores: cores(raw.machineMs - sample.cpuMs - raw.callerMs - raw.fakeMs),
    problems,
  };
}

// ── report ──────────────────────────────────────────────────────────────────────────────

/** The gateway's CPU per call ÷ the floor's in each round at one count (NaN: a round where either did not run). */
export interface RoundRatios {
  readonly calls: number;
  readonly ratios: readonly RoundRatio[];
  /** The gateway's tails over the floor's, round by round. */
  readonly tails: readonly RoundTails[];
  /** The `--vs` build's, round by round (empty without `--vs`). */
  readonly vs: readonly RoundRatio[];
}

export interface Report {
  /** At each count, the phases of the median round (by the gateway's paced CPU ÷ the floor's). */
  readonly phases: readonly Phase[];
  /** Every phase of every round, in the order run (problems are read from all of them). */
  readonly ran: readonly Phase[];
  readonly rounds: readonly RoundRatios[];
  readonly counts: readonly number[];
  readonly windowMs: number;
  readonly idleRss: Readonly<Partial<Record<ServerName, number>>>;
  readonly elapsedMs: number;
  /** Where the gateway was loaded from: its TypeScript sources through tsx, or the built `dist/`. */
  readonly gatewayFrom: "src" | "dist";
}

const SERVERS: readonly ServerName[] = ["floor", "gateway", "vs", "sdk"];

function find(report: Report, server: ServerName, calls: number): Phase | undefined {
  return report.phases.find((p) => p.server === server && p.calls === calls);
}

const pair = (s: Summary): string => `${ms(s.p50)} / ${ms(s.p99)}`;

export function table(report: Report): string {
  const rows = [
    "| calls | server | CPU per call (% of one core) | RSS per call (KiB) | JS heap per call (KiB) | caller frame → provider append, p50 / p99 (ms) | provider delta → caller frame, p50 / p99 (ms) | barge-in: `speech_started` → caller `clear`, p50 / p99 (ms) | barge-ins measured (missed) | CPU ÷ floor, paced (raw) | CPU ÷ SDK, paced (raw) |",
    "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const calls of report.counts) {
    const floor = find(report, "floor", calls);
    const sdk = find(report, "sdk", calls);
    for (const server of SERVERS) {
      const p = find(report, server, calls);
      if (p === undefined) continue;
      if (failed(p)) {
        rows.push(`| ${calls} | ${LABEL[server]} | did not run: ${p.reason.replaceAll("|", "\\|")} | | | | | | | | |`);
        continue;
      }
      const vs = (other: Phase | undefined): string =>
        other === undefined || failed(other) || other === p ? "" : `${ratio(pacedCpu(p), pacedCpu(other))} (${ratio(p.cpuPercentPerCall, other.cpuPercentPerCall)})`;
      rows.push(
        `| ${calls} | ${LABEL[server]} | ${p.cpuPercentPerCall.toFixed(3)} | ${p.rssPerCallKiB.toFixed(0)} | ${p.heapPerCallKiB.toFixed(0)} | ${pair(p.up)} | ${pair(p.down)} | ${pair(p.barge)} | ${p.barge.n} (${p.missedClears}) | ${vs(floor)} | ${vs(sdk)} |`,
      );
    }
  }
  return rows.join("\n");
}

/** Each of a window's collection figures, a second. */
function perSecond(gc: GcSample, wallMs: number): GcSample {
  const rate = (value: number): number => (value * 1000) / wallMs;
  return { scavenges: rate(gc.scavenges), scavengeMs: rate(gc.scavengeMs), promotedBytes: rate(gc.promotedBytes), fullGcs: rate(gc.fullGcs), fullGcMs: rate(gc.fullGcMs) };
}

/** Scavenges a second: how many, their pause (ms) and what they promoted (KiB). */
function scavenges(gc: GcSample | undefined): string {
  return gc === undefined ? "–" : `${gc.scavenges.toFixed(1)} / ${gc.scavengeMs.toFixed(1)} / ${(gc.promotedBytes / 1024).toFixed(0)}`;
}

/** Full collections a second, with their pause (ms) a second. */
function fullGcs(gc: GcSample | undefined): string {
  return gc === undefined ? "–" : `${gc.fullGcs.toFixed(2)} (${gc.fullGcMs.toFixed(1)})`;
}

/** What else the machine did, per phase: the context the figures above need. */
export function contextTable(report: Report): string {
  const rows = [
    "| calls | server | event-loop delay p99 (ms) | scavenges a second: count / pause (ms) / promoted (KiB) | full GCs a second (pause, ms) | frames measured up / down | frames lost up / down | marks received / echoed by the callers | spurious clears | callers' process (cores) | fake service (cores) | other load on the machine (cores, ≈) |",
    "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const calls of report.counts) {
    for (const server of SERVERS) {
      const p = find(report, server, calls);
      if (p === undefined || failed(p)) continue;
      const other = Number.isNaN(p.otherCores) ? "–" : Math.max(0, p.otherCores).toFixed(2);
      rows.push(
        `| ${calls} | ${LABEL[server]} | ${ms(p.loopDelayP99Ms)} | ${scavenges(p.gcPerSecond)} | ${fullGcs(p.gcPerSecond)} | ${p.up.n} / ${p.down.n} | ${p.upLost} / ${p.downLost} | ${p.marksReceived} / ${p.marksEchoed} | ${p.spuriousClears} | ${p.callerCores.toFixed(2)} | ${p.fakeCores.toFixed(2)} | ${other} |`,
      );
    }
  }
  const idle = SERVERS.filter((s) => report.idleRss[s] !== undefined).map((s) => `${LABEL[s]} ${((report.idleRss[s] ?? 0) / 2 ** 20).toFixed(1)} MiB`);
  return `${rows.join("\n")}\n\nIdle process RSS before any call: ${idle.join(", ")}.`;
}

/** One line per target: the figure at each N, and met / not met. */
export function targets(report: Report): string {
  const rows = ["| target | " + report.counts.map((n) => `${n} calls`).join(" | ") + " | verdict |", "|---|" + report.counts.map(() => "--:|").join("") + "---|"];
  const peer = (server: ServerName, n: number): PhaseResult | undefined => {
    const p = find(report, server, n);
    return p === undefined || failed(p) ? undefined : p;
  };
  /** One bar: each N's cell, the value judged (undefined: not measured), and the N it is judged at. */
  const row = (what: string, judgedAt: readonly number[], cell: (n: number) => { readonly text: string; readonly value: number | undefined }, bar: number): void => {
    const cells = report.counts.map(cell);
    const judged = report.counts.flatMap((n, i) => (judgedAt.includes(n) ? [{ n, value: cells[i]?.value }] : []));
    const measured = judged.filter((j): j is { n: number; value: number } => j.value !== undefined);
    const over = measured.filter((j) => j.value > bar).map((j) => j.n);
    const at = judgedAt.filter((n) => report.counts.includes(n));
    const verdict =
      at.length === 0
        ? `not judged (run at ${judgedAt.join(" and ")} calls)`
        : measured.length < at.length
          ? `not measured at ${at.filter((n) => !measured.some((j) => j.n === n)).join(", ")} calls`
          : over.length === 0
            ? "**met**"
            : `**not met** at ${over.join(", ")} calls`;
    rows.push(`| ${what} | ${cells.map((c) => c.text).join(" | ")} | ${verdict} |`);
  };
  const missing = { text: "–", value: undefined };
  row(`gateway CPU per call ≤ ${TARGETS.cpuVsFloor} × the floor's, at ${TARGETS.cpuAt.join(" and ")} calls (paced by the rig; raw in brackets)`, TARGETS.cpuAt, (n) => {
    const g = peer("gateway", n);
    const f = peer("floor", n);
    if (g === undefined || f === undefined || !(pacedCpu(f) > 0)) return missing;
    const { raw, paced } = roundRatio([g, f]);
    return { text: `${paced.toFixed(2)}× (${raw.toFixed(2)}×)`, value: paced };
  }, TARGETS.cpuVsFloor);
  /**
   * A p99 within `TARGETS.p99OverFloorMs` of the floor's in the same round: the gateway's share of
   * the tail, judged by the median over the rounds of that difference (a tail is the most a round's
   * noise moves: one busy round does not decide it, as the median round decides the CPU bar).
   */
  const p99Row = (tail: keyof RoundTails, what: string): void =>
    row(`${what}: gateway p99 − floor p99 ≤ ${TARGETS.p99OverFloorMs} ms at ${TARGETS.latencyAt} calls (ms: the median of the rounds' differences, each round's in brackets)`, [TARGETS.latencyAt], (n) => {
      const each = report.rounds.find((r) => r.calls === n)?.tails.map((t) => t[tail]) ?? [];
      const value = medianOf(each);
      if (Number.isNaN(value)) return missing;
      return { text: `${ms(value)} (${each.map((v) => (Number.isNaN(v) ? "–" : ms(v))).join(", ")})`, value };
    }, TARGETS.p99OverFloorMs);
  p99Row("down", "provider audio → caller frame");
  p99Row("barge", "barge-in (`speech_started` → `clear`)");
  row(`gateway RSS per call ≤ ${TARGETS.rssPerCallKiB} KiB, at ${TARGETS.cpuAt.join(" and ")} calls`, TARGETS.cpuAt, (n) => {
    const g = peer("gateway", n);
    return g === undefined ? missing : { text: g.rssPerCallKiB.toFixed(0), value: g.rssPerCallKiB };
  }, TARGETS.rssPerCallKiB);
  return rows.join("\n");
}

/** Problems seen, one line each (at most `limit` per phase). */
export function problems(report: Report, limit = 6): string[] {
  const lines: string[] = [];
  for (const p of report.ran) {
    if (failed(p)) continue;
    const list = p.problems;
    for (const text of list.slice(0, limit)) lines.push(`${LABEL[p.server]}, ${p.calls} calls: ${text}`);
    if (list.length > limit) lines.push(`${LABEL[p.server]}, ${p.calls} calls: … and ${list.length - limit} more`);
  }
  return lines;
}

export function runLine(report: Report): string {
  const cpu = cpus();
  const rounds = report.rounds[0]?.ratios.length ?? 1;
  return (
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpu[0]?.model.trim() ?? "unknown CPU"} (${cpu.length} cores), Node ${process.version}, ` +
    `${process.platform}/${process.arch}, ws masking frames ${wsMasking()}; ${report.counts.join(", ")} calls per server, a ${(report.windowMs / 1000).toFixed(0)} s window each, in ${rounds} round${rounds === 1 ? "" : "s"} alternating the servers' order (the tables show each count's median round by the gateway's paced CPU ÷ the floor's), after a 10-call warm-up per server; the gateway ${gatewayFromText(report.gatewayFrom)}; ${(report.elapsedMs / 1000).toFixed(0)} s in all.`
  );
}

/** Each round's CPU ratios at each count: how far one round's reading can be trusted on this machine. */
export function roundsLine(report: Report): string {
  const list = (values: readonly number[]): string => values.map((r) => (Number.isNaN(r) ? "–" : `${r.toFixed(2)}×`)).join(", ");
  const cells = report.rounds.map(({ calls, ratios }) => `${calls} calls ${list(ratios.map((r) => r.paced))} (raw ${list(ratios.map((r) => r.raw))})`);
  return `The gateway's CPU per call ÷ the floor's in each round, paced by the rig (raw in brackets): ${cells.join("; ")}.`;
}

/**
 * With `--vs`: both builds' paced CPU ÷ the floor's in the same rounds, their means, and this build
 * against the other (a per-frame change's before/after, the machine's drift falling on both);
 * undefined without it.
 */
export function vsLine(report: Report): string | undefined {
  if (report.rounds.every((r) => r.vs.length === 0)) return undefined;
  const mean = (ratios: readonly RoundRatio[]): number => {
    const valid = ratios.map((r) => r.paced).filter((r) => !Number.isNaN(r));
    return valid.length === 0 ? Number.NaN : valid.reduce((a, b) => a + b, 0) / valid.length;
  };
  const list = (ratios: readonly RoundRatio[]): string => ratios.map((r) => (Number.isNaN(r.paced) ? "–" : `${r.paced.toFixed(2)}×`)).join(", ");
  const cells = report.rounds.map(({ calls, ratios, vs }) => {
    const [mine, theirs] = [mean(ratios), mean(vs)];
    const change = (mine / theirs - 1) * 100;
    const against = Number.isNaN(change) ? "–" : `${change > 0 ? "+" : change < 0 ? "−" : ""}${Math.abs(change).toFixed(1)}%`;
    return `${calls} calls: this build ${list(ratios)} (mean ${mine.toFixed(3)}×), the \`--vs\` build ${list(vs)} (mean ${theirs.toFixed(3)}×), this build ${against} against it`;
  });
  return `Each gateway's CPU per call ÷ the floor's in the same rounds, paced by the rig: ${cells.join("; ")}.`;
}

/** The generated part of the docs section, between the markers. */
export function section(report: Report, markers: { readonly start: string; readonly end: string }): string {
  const seen = problems(report);
  return [
    markers.start,
    runLine(report),
    "",
    table(report),
    "",
    "Against the targets (issue 23: at the floor; every ratio and difference is between the gateway and the floor measured in the same run, latencies end to end):",
    "",
    targets(report),
    "",
    roundsLine(report),
    "",
    contextTable(report),
    "",
    seen.length === 0 ? "Problems seen: none (no gateway warnings, no protocol violations at the fake, no caller errors)." : ["Problems seen:", "", ...seen.map((line) => `- ${line}`)].join("\n"),
    markers.end,
  ].join("\n");
}
