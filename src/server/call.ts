/**
 * Terminal clients of an in-process gateway: `switchboard call` (one session from a recording) and
 * `switchboard console` (typed or spoken turns from the terminal). Both start a gateway on
 * 127.0.0.1:0 and talk to it as a protocol client, so they see exactly the events a page does.
 */
import WebSocket from "ws";
import { bytesToSamples, concatSamples, samplesToBytes } from "../audio/pcm.js";
import { MIC_SAMPLE_RATE } from "../audio/rates.js";
import { Resampler } from "../audio/resample.js";
import { GatewayError, messageOf } from "../errors.js";
import { silentLogger, type Logger } from "../log.js";
import type { AgentConfig, ProviderDescriptor } from "../manifest/index.js";
import type { Env } from "../pipeline/providers/llm/index.js";
import { resolveStt } from "../pipeline/providers/stt/index.js";
import { resolveTts } from "../pipeline/providers/tts/index.js";
import { isSttUnavailable, type SttProvider } from "../pipeline/stt-port.js";
import type { Command, ServerEvent } from "../transport/protocol.js";
import { createGateway } from "./index.js";
import type { LoadedAgent } from "./loader.js";
import { chooseProviders, missingKey } from "./offline.js";
import { spread } from "../spread.js";

/** Silence after the caller's audio, so the recognizer hears the end of the turn (ms). */
const TRAILING_SILENCE_MS = 2000;

type FatalEvent = Extract<ServerEvent, { type: "error.reported" }>;

export interface ConnectOptions {
  /** `true` forces the offline stack; `"auto"` (default) uses it when a key is missing. */
  readonly offline?: boolean | "auto";
  readonly env?: Env;
  readonly logger?: Logger;
  /** Each event as it arrives. */
  readonly onEvent?: (event: ServerEvent) => void;
  /** Each chunk of the agent's audio, PCM16 mono at the playback rate (PLAYBACK_SAMPLE_RATE, src/audio/rates.ts). */
  readonly onAudio?: (pcm: Int16Array) => void;
  /**
   * The caller can only speak (`call`, `console --voice`): an STT that is not installed here
   * (pocketsphinx) fails the session at start — a fatal `stt` error with the install command and,
   * when the offline stack replaced the agent's own STT, the key that would bring it back — instead
   * of the typed-turns fallback a page gets.
   */
  readonly requireStt?: boolean;
}

/** A protocol client's connection to a session on its own in-process gateway. */
export interface AgentConnection {
  /** The config the session runs with (after the offline choice). */
  readonly config: AgentConfig;
  /** The session runs on the offline stack; `missing` names the keys that sent it there ("OPENAI_API_KEY → llm openai"). */
  readonly offline: { readonly on: boolean; readonly missing: readonly string[] };
  /** Every event so far, in order. */
  readonly events: readonly ServerEvent[];
  /** The fatal error that ended the session, if one did. */
  readonly fatal: FatalEvent | undefined;
  /** Settles when the socket has closed (whoever closed it). */
  readonly closed: Promise<{ readonly code: number; readonly reason: string }>;
  /** False once the socket has closed. */
  readonly open: boolean;
  send(command: Command): void;
  /** Mic audio: PCM16 mono at MIC_SAMPLE_RATE, in frames of about 20 ms. */
  sendAudio(pcm: Uint8Array): void;
  /** True once an event (this one or an earlier one) passes `test`, or a fatal error arrived; false at the timeout or the close. */
  waitFor(test: (event: ServerEvent) => boolean, timeoutMs: number): Promise<boolean>;
  /** Close the socket (1000) and the gateway. */
  close(): Promise<void>;
}

/**
 * Start a gateway for `agent` on 127.0.0.1:0 and connect to it at the mic rate; resolves once the
 * socket is open (the session's events follow through `onEvent`).
 */
export async function connectAgent(agent: LoadedAgent, options: ConnectOptions = {}): Promise<AgentConnection> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? silentLogger;
  const offline = options.offline ?? "auto";
  const choice = chooseProviders(agent.config, env, offline);
  const alternative = hostedSttHint(agent.config, choice.config, env, offline === true);
  const gateway = createGateway({
    agent: agent.def,
    script: agent.script,
    waitingAudio: agent.waitingAudio,
    offline,
    env,
    logger,
    processMetrics: false,
    ...(options.requireStt === true
      ? { voice: { stt: (descriptor: ProviderDescriptor) => requireRecognizer(resolveStt(descriptor, env, logger), alternative), tts: (descriptor: ProviderDescriptor) => resolveTts(descriptor, env, logger) } }
      : {}),
  });
  let port: number;
  try {
    ({ port } = await gateway.listen(0, "127.0.0.1"));
  } catch (error) {
    await gateway.close();
    throw error;
  }
  const ws = new WebSocket(`ws://127.0.0.1:${port}/websocket?sampleRate=${MIC_SAMPLE_RATE}`);
  const events: ServerEvent[] = [];
  let fatal: FatalEvent | undefined;
  let isClosed = false;
  const waiters: { test: (event: ServerEvent) => boolean; resolve: (matched: boolean) => void }[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once("close", (code, reason) => {
      isClosed = true;
      for (const waiter of waiters.splice(0)) waiter.resolve(fatal !== undefined);
      resolve({ code, reason: reason.toString("utf8") });
    }),
  );
  ws.on("message", (data, isBinary) => {
    const bytes = data as Buffer;
    if (isBinary) {
      options.onAudio?.(bytesToSamples(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)).slice());
      return;
    }
    const event = JSON.parse(bytes.toString("utf8")) as ServerEvent;
    events.push(event);
    if (event.type === "error.reported" && event.fatal) fatal = event;
    options.onEvent?.(event);
    for (const waiter of [...waiters]) {
      if (waiter.test(event) || fatal !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(true);
      }
    }
  });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
  } catch (error) {
    await gateway.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    config: gateway.config,
    offline: { on: choice.offline, missing: choice.missing },
    events,
    get fatal() {
      return fatal;
    },
    closed,
    send: (command) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(command));
    },
    sendAudio: (pcm) => {
      if (ws.readyState === ws.OPEN) ws.send(pcm);
    },
    get open() {
      return !isClosed;
    },
    waitFor: (test, timeoutMs) =>
      new Promise((resolve) => {
        if (events.some(test) || fatal !== undefined) return resolve(true);
        if (isClosed) return resolve(false);
        const waiter = {
          test,
          resolve: (matched: boolean) => {
            clearTimeout(timer);
            resolve(matched);
          },
        };
        const timer = setTimeout(() => {
          const at = waiters.indexOf(waiter);
          if (at >= 0) waiters.splice(at, 1);
          resolve(false);
        }, timeoutMs);
        waiters.push(waiter);
      }),
    close: () =>
      (closing ??= (async () => {
        if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000, "client finished");
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
        await gateway.close();
      })()),
  };
}

/**
 * " (or set DEEPGRAM_API_KEY to use deepgram)": how the agent's own speech recognition comes back
 * when the offline stack replaced it ("" when it did not, or the agent's STT is the local one).
 */
export function hostedSttHint(own: AgentConfig, running: AgentConfig, env: Env, forcedOffline: boolean): string {
  const hearing = own.stt ?? own.s2s;
  if (hearing === undefined || hearing.kind === "local" || running.stt?.kind !== "local") return "";
  const variable = missingKey(hearing, {});
  const keySet = missingKey(hearing, env) === undefined;
  if (forcedOffline) return keySet || variable === undefined ? ` (or run without --offline to use ${hearing.kind})` : ` (or set ${variable} and run without --offline to use ${hearing.kind})`;
  return variable === undefined ? "" : ` (or set ${variable} to use ${hearing.kind})`;
}

/** The provider, with "not installed here" made a plain fatal error (no typed-turns fallback), `alternative` appended. */
function requireRecognizer(provider: SttProvider, alternative: string): SttProvider {
  return {
    kind: provider.kind,
    open: (options, events) =>
      provider.open(options, events).catch((error: unknown) => {
        if (!isSttUnavailable(error)) throw error;
        throw new GatewayError("stt", `${messageOf(error)}${alternative}`, { fatal: true, cause: error });
      }),
  };
}

export interface CallOptions extends Omit<ConnectOptions, "onAudio" | "requireStt"> {
  /** Give up waiting for the reply after this long (ms, default 60 s). */
  readonly timeoutMs?: number;
  /** Stream the caller's audio this many times faster than real time (default 1). */
  readonly speed?: number;
}

export interface CallResult {
  readonly events: readonly ServerEvent[];
  /** The agent's audio, PCM16 mono at the playback rate (PLAYBACK_SAMPLE_RATE, src/audio/rates.ts). */
  readonly audio: Int16Array;
  /** The fatal error that ended the session, if one did. */
  readonly fatal?: FatalEvent;
  /** False when no user turn was recognized before the timeout. */
  readonly answered: boolean;
}

/**
 * One session from a recording: the agent greets, the recording is streamed as the caller's
 * microphone (resampled to 16 kHz, 20 ms frames, in real time), then silence; the call ends
 * when the reply to the caller's turn has finished, or at the timeout. The recording is all the
 * caller has to say, so an STT that is not installed fails the session at start.
 */
export async function callAgent(agent: LoadedAgent, recording: { readonly sampleRate: number; readonly samples: Int16Array }, options: CallOptions = {}): Promise<CallResult> {
  const audio: Int16Array[] = [];
  const connection = await connectAgent(agent, spread(options, { requireStt: true, onAudio: (pcm: Int16Array) => audio.push(pcm) }));
  const { events } = connection;
  const timeoutMs = options.timeoutMs ?? 60_000;
  let answered = false;
  try {
    const greeted = await connection.waitFor((e) => e.type === "reply.completed" || e.type === "error.reported", 30_000);
    if (greeted && connection.fatal === undefined) {
      await stream(connection, recording, options.speed ?? 1);
      answered = await connection.waitFor((e) => e.type === "user-transcript.committed", timeoutMs);
      if (answered) {
        const after = events.findLastIndex((e) => e.type === "user-transcript.committed");
        await connection.waitFor((e) => events.indexOf(e) > after && (e.type === "metrics.turn" || e.type === "reply.cancelled"), timeoutMs);
      }
    }
  } finally {
    await connection.close();
  }
  const fatal = connection.fatal;
  return { events, audio: concatSamples(audio), answered: answered && fatal === undefined, ...(fatal === undefined ? {} : { fatal }) };
}

/** Stream a recording as a microphone: 16 kHz, 20 ms frames, paced, then trailing silence. */
async function stream(connection: AgentConnection, recording: { readonly sampleRate: number; readonly samples: Int16Array }, speed: number): Promise<void> {
  const resampler = recording.sampleRate === MIC_SAMPLE_RATE ? undefined : new Resampler(recording.sampleRate, MIC_SAMPLE_RATE);
  const pcm = resampler === undefined ? recording.samples : concatSamples([resampler.process(recording.samples), resampler.flush()]);
  const frame = (MIC_SAMPLE_RATE * 20) / 1000;
  const silence = new Int16Array((MIC_SAMPLE_RATE * TRAILING_SILENCE_MS) / 1000);
  const all = concatSamples([pcm, silence]);
  const started = Date.now();
  for (let at = 0, n = 0; at < all.length; at += frame, n++) {
    if (!connection.open || connection.fatal !== undefined) return;
    connection.sendAudio(samplesToBytes(all.slice(at, at + frame)));
    const due = started + ((n + 1) * 20) / speed;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
