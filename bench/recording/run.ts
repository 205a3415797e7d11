/**
 * `npm run bench:recording`: what recording a call costs the process (src/session/recording/).
 * In one process, under a virtual clock (time is simulated; CPU and memory are real): MINUTES of
 * a call through a `MemoryLink`, 20 ms of caller audio in and 20 ms of agent audio out every
 * 20 ms, a barge-in cut every 10 s, with events (a committed line per 5 s). Measured per run:
 * CPU ms of the link path per simulated minute, without a recorder (the baseline: the same
 * loop through the bare link) and with one, their ratio; the end's CPU (redaction, the stereo
 * WAV, the JSON, the copy into a temp directory); and the heap growth over the call (bounded
 * means it does not grow with the minutes). Browser formats (16 kHz in, 24 kHz out → 16 kHz
 * record) and a phone line's (8 kHz both ways, G.711 μ-law out).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeMulaw } from "../../src/audio/g711.js";
import { g711, pcm16, type SessionAudio } from "../../src/audio/rates.js";
import { loadResampler, resamplerEngine } from "../../src/audio/resample.js";
import { virtualClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log.js";
import { resolveConfig, toAgentConfig } from "../../src/manifest/index.js";
import { CallRecorder } from "../../src/session/recording/call-recorder.js";
import type { ClientLink } from "../../src/transport/client-connection.js";
import { MemoryLink } from "../../src/testing/memory-link.js";
import { monoMs } from "../shared/stats.js";

const MINUTES = Number(process.argv.find((arg) => arg.startsWith("--minutes="))?.slice(10) ?? 10);
const FRAME_MS = 20;

interface Line {
  readonly name: string;
  readonly audio: SessionAudio;
  readonly playbackRate: number;
}

const LINES: readonly Line[] = [
  { name: "browser (16 kHz in, 24 kHz out)", audio: { input: pcm16(16_000), output: pcm16(24_000) }, playbackRate: 24_000 },
  { name: "phone (8 kHz in, μ-law out)", audio: { input: pcm16(8_000), output: g711("pcmu") }, playbackRate: 8_000 },
];

function frame(format: SessionAudio["input"], phase: number): Uint8Array {
  const samples = new Int16Array((format.sampleRate * FRAME_MS) / 1000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(3000 * Math.sin((2 * Math.PI * 440 * (phase + i)) / format.sampleRate));
  return format.encoding === "pcmu" ? encodeMulaw(samples) : new Uint8Array(samples.buffer);
}

async function run(line: Line, record: boolean): Promise<{ cpuPerMinute: number; endMs: number; heapGrowthMb: number }> {
  const clock = virtualClock();
  const dir = mkdtempSync(join(tmpdir(), "bench-rec-"));
  const bare = new MemoryLink(clock);
  bare.playbackRate = line.playbackRate;
  const config = toAgentConfig({ name: "bench", recording: { destination: { dir }, redact: ["card"] } });
  const recorder = record ? CallRecorder.for(resolveConfig(config).recording, { clock, log: silentLogger, sessionId: "bench", agentName: "bench", mode: "pipeline", transport: "bench", history: () => [] }) : undefined;
  const link: ClientLink = recorder?.tap(bare) ?? bare;
  link.useAudio(line.audio);
  let fromCaller = 0;
  link.attach({ command: () => {}, audio: () => void (fromCaller += 1), playback: () => {}, closed: () => {} });
  const callerFrame = frame(line.audio.input, 0);
  const agentFrame = frame(line.audio.output, 0);
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let cpu = 0;
  const frames = (MINUTES * 60_000) / FRAME_MS;
  for (let i = 0; i < frames; i++) {
    const started = monoMs();
    bare.sendAudio(callerFrame);
    link.audio(agentFrame, FRAME_MS);
    if (i % 250 === 249) link.emit({ type: "user-transcript.committed", text: "my card is 4111 1111 1111 1111" });
    if (i % 500 === 499) link.emit({ type: "reply.cancelled" });
    cpu += monoMs() - started;
    // Time moves in 1 s steps (50 frames), so the event loop (the disk writes) gets its turns.
    if (i % 50 === 49) await clock.advance(1000);
  }
  global.gc?.();
  const heapGrowthMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  const endStarted = monoMs();
  const outcome = await recorder?.finish();
  const endMs = monoMs() - endStarted;
  if (outcome !== undefined && outcome.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
  rmSync(dir, { recursive: true, force: true });
  return { cpuPerMinute: cpu / MINUTES, endMs, heapGrowthMb };
}

// As the gateway does at startup: Speex when it loads, else the polyphase fallback.
await loadResampler();
console.log(`bench:recording — ${MINUTES} simulated minutes per run, resampler ${resamplerEngine()}, node ${process.version}${global.gc === undefined ? " (run with --expose-gc for steadier heap figures)" : ""}`);
console.log("| line | link path, CPU ms per call-minute: bare | recorded | ratio | end (WAV+JSON+copy), ms | heap growth over the call, MB (bare / recorded) |");
console.log("|---|---|---|---|---|---|");
for (const line of LINES) {
  const baseline = await run(line, false);
  const recorded = await run(line, true);
  console.log(
    `| ${line.name} | ${baseline.cpuPerMinute.toFixed(1)} | ${recorded.cpuPerMinute.toFixed(1)} | ${(recorded.cpuPerMinute / baseline.cpuPerMinute).toFixed(1)}× | ${recorded.endMs.toFixed(0)} | ${baseline.heapGrowthMb.toFixed(1)} / ${recorded.heapGrowthMb.toFixed(1)} |`,
  );
}
