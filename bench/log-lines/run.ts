/**
 * `npm run bench:log-lines`: what a log line costs with its secrets censored. Three loggers write
 * the same lines into a sink that drops them: pino with no redaction (the floor), pino's own
 * redaction of the gateway's paths (`redact: REDACT_PATHS`, @pinojs/redact in pino 10), and the
 * gateway's (`createLogger`: src/log-redaction.ts). The lines are a session's: a child logger with
 * the session's bindings, lines of one to three fields (an error, a list, a nested object), one in
 * five with a secret to censor.
 *
 * Per logger: µs of process CPU a line (`process.cpuUsage`, the median of REPS runs of LINES lines,
 * the loggers interleaved after a warm-up), and bytes allocated a line (V8's sampling heap
 * profiler over one run: bench/shared/allocation.ts). A few seconds. Options: --no-docs. Results go
 * to stdout and to docs/benchmarks.md between the bench:log-lines markers.
 */
import { cpus } from "node:os";
import { pino } from "pino";
import { createLogger, REDACT_PATHS, REDACTED } from "../../src/log.js";
import { sampleAllocations } from "../shared/allocation.js";
import { docSection, publishSection, runBench } from "../shared/common.js";

const RUN_LIMIT_MS = 120_000;
const SECTION = docSection("bench:log-lines");
/** Lines a timed run writes, and timed runs per logger. */
const LINES = 20_000;
const REPS = 7;

const SINK = { write: (): void => {} };

type Logger = pino.Logger;

/** The loggers compared, each as a session's child. */
function loggers(): { readonly name: string; readonly log: Logger }[] {
  const bindings = { sessionId: "s_8d2f0c4e", agent: "support", mode: "s2s" };
  return [
    { name: "pino, no redaction (the floor)", log: pino({ level: "info" }, SINK).child(bindings) },
    { name: "pino's redaction of the same paths", log: pino({ level: "info", redact: { paths: [...REDACT_PATHS], censor: REDACTED } }, SINK).child(bindings) },
    { name: "the gateway's (`createLogger`)", log: createLogger({ level: "info", destination: SINK }).child(bindings) },
  ];
}

const ERROR = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
const TOOLS = ["lookup_order", "transfer_call", "end_call", "send_sms", "schedule_callback"];

/** `count` lines of a session's kinds, one in five with a secret. */
function write(log: Logger, count: number): void {
  for (let i = 0; i < count; i += 5) {
    log.info({ format: "g711_ulaw" }, "g711 passthrough");
    log.warn({ err: ERROR, attempt: 2 }, "s2s provider error");
    log.info({ tools: TOOLS, toolsHash: "4f1c2a9be07d3c15" }, "tool table frozen");
    log.info({ code: 1000, reason: "" }, "client closed");
    log.warn({ req: { method: "GET", url: "/websocket", headers: { authorization: "Bearer sk-live-123", host: "gw" } } }, "upgrade refused");
  }
}

function cpuMicros(log: Logger): number {
  const before = process.cpuUsage();
  write(log, LINES);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / LINES;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<number> {
  const began = Date.now();
  const all = loggers();
  for (const { log } of all) write(log, LINES);
  const times = all.map((): number[] => []);
  for (let rep = 0; rep < REPS; rep++) all.forEach(({ log }, i) => times[i]?.push(cpuMicros(log)));
  const bytes: number[] = [];
  for (const { log } of all) bytes.push((await sampleAllocations(() => Promise.resolve(write(log, LINES)))).bytes / LINES);
  const floor = { us: median(times[0] ?? []), bytes: bytes[0] ?? Number.NaN };
  const rows = all.map(({ name }, i) => {
    const us = median(times[i] ?? []);
    const b = bytes[i] ?? Number.NaN;
    return `| ${name} | ${us.toFixed(2)} | ${(us / floor.us).toFixed(2)}× | ${b.toFixed(0)} | ${(b / floor.bytes).toFixed(2)}× |`;
  });
  const body = [
    `Run on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; ${LINES} lines a run (a session's kinds, one in five with a secret), the median of ${REPS} runs a logger, interleaved; ${((Date.now() - began) / 1000).toFixed(0)} s.`,
    "",
    "| logger | CPU a line (µs) | ÷ floor | bytes allocated a line | ÷ floor |",
    "|---|--:|--:|--:|--:|",
    ...rows,
  ].join("\n");
  publishSection("bench:log-lines", SECTION, body);
  return 0;
}

runBench("bench:log-lines", RUN_LIMIT_MS, main);
