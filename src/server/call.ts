import WebSocket from "ws";
import { bytesToSamples, samplesToBytes } from "../audio/pcm.js";
import { Resampler } from "../audio/resample.js";
import { silentLogger, type Logger } from "../log.js";
import type { Env } from "../pipeline/providers/llm/index.js";
import type { ServerEvent } from "../transport/protocol.js";
import { createGateway } from "./index.js";
import type { LoadedAgent } from "./loader.js";

/** Mic rate the call streams at, and the playback rate the agent's audio comes back at (Hz). */
const CALL_MIC_RATE = 16000;
export const CALL_PLAYBACK_RATE = 24000;
/** Silence after the caller's audio, so the recognizer hears the end of the turn (ms). */
const TRAILING_SILENCE_MS = 2000;

export interface CallOptions {
  /** `true` forces the offline stack; `"auto"` (default) uses it when a key is missing. */
  readonly offline?: boolean | "auto";
  readonly env?: Env;
  readonly logger?: Logger;
  /** Each event as it arrives. */
  readonly onEvent?: (event: ServerEvent) => void;
  /** Give up waiting for the reply after this long (ms, default 60 s). */
  readonly timeoutMs?: number;
  /** Stream the caller's audio this many times faster than real time (default 1). */
  readonly speed?: number;
}

export interface CallResult {
  readonly events: readonly ServerEvent[];
  /** The agent's audio, PCM16 mono at CALL_PLAYBACK_RATE. */
  readonly audio: Int16Array;
  /** The fatal error that ended the session, if one did. */
  readonly fatal?: Extract<ServerEvent, { type: "error.reported" }>;
  /** False when no user turn was recognized before the timeout. */
  readonly answered: boolean;
}

/**
 * One session from a recording: the agent greets, the recording is streamed as the caller's
 * microphone (resampled to 16 kHz, 20 ms frames, in real time), then silence; the call ends
 * when the reply to the caller's turn has finished, or at the timeout.
 */
export async function callAgent(agent: LoadedAgent, recording: { readonly sampleRate: number; readonly samples: Int16Array }, options: CallOptions = {}): Promise<CallResult> {
  const gateway = createGateway({
    agent: agent.def,
    script: agent.script,
    offline: options.offline ?? "auto",
    env: options.env ?? process.env,
    logger: options.logger ?? silentLogger,
    processMetrics: false,
  });
  const { port } = await gateway.listen(0);
  const ws = new WebSocket(`ws://127.0.0.1:${port}/websocket?sampleRate=${CALL_MIC_RATE}`);
  const events: ServerEvent[] = [];
  const audio: Int16Array[] = [];
  let fatal: Extract<ServerEvent, { type: "error.reported" }> | undefined;
  const waiters: { test: (event: ServerEvent) => boolean; resolve: () => void }[] = [];
  const waitFor = (test: (event: ServerEvent) => boolean, timeoutMs: number): Promise<boolean> =>
    new Promise((resolve) => {
      if (events.some(test)) return resolve(true);
      const timer = setTimeout(() => resolve(false), timeoutMs);
      waiters.push({ test, resolve: () => (clearTimeout(timer), resolve(true)) });
    });
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  ws.on("message", (data, isBinary) => {
    const bytes = data as Buffer;
    if (isBinary) {
      audio.push(bytesToSamples(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)).slice());
      return;
    }
    const event = JSON.parse(bytes.toString("utf8")) as ServerEvent;
    events.push(event);
    if (event.type === "error.reported" && event.fatal) fatal = event;
    options.onEvent?.(event);
    for (const waiter of [...waiters]) {
      if (waiter.test(event) || fatal !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  let answered = false;
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const greeted = await waitFor((e) => e.type === "reply.completed" || e.type === "error.reported", 30_000);
    if (greeted && fatal === undefined) {
      await stream(ws, recording, options.speed ?? 1);
      answered = await waitFor((e) => e.type === "user-transcript.committed", timeoutMs);
      if (answered) {
        const after = events.findLastIndex((e) => e.type === "user-transcript.committed");
        await waitFor((e) => events.indexOf(e) > after && (e.type === "metrics.turn" || e.type === "reply.cancelled"), timeoutMs);
      }
    }
  } finally {
    if (ws.readyState === ws.OPEN) ws.close(1000, "call finished");
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
    await gateway.close();
  }
  const total = audio.reduce((n, chunk) => n + chunk.length, 0);
  const joined = new Int16Array(total);
  let offset = 0;
  for (const chunk of audio) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  return { events, audio: joined, answered, ...(fatal === undefined ? {} : { fatal }) };
}

/** Stream a recording as a microphone: 16 kHz, 20 ms frames, paced, then trailing silence. */
async function stream(ws: WebSocket, recording: { readonly sampleRate: number; readonly samples: Int16Array }, speed: number): Promise<void> {
  const resampler = recording.sampleRate === CALL_MIC_RATE ? undefined : new Resampler(recording.sampleRate, CALL_MIC_RATE);
  const pcm = resampler === undefined ? recording.samples : concat(resampler.process(recording.samples), resampler.flush());
  const frame = (CALL_MIC_RATE * 20) / 1000;
  const silence = new Int16Array((CALL_MIC_RATE * TRAILING_SILENCE_MS) / 1000);
  const all = concat(pcm, silence);
  const started = Date.now();
  for (let at = 0, n = 0; at < all.length; at += frame, n++) {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(samplesToBytes(all.slice(at, at + frame)));
    const due = started + ((n + 1) * 20) / speed;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

function concat(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
