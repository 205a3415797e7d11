/**
 * AssemblyAI Universal Streaming v3 over WebSocket, as docs/vendors.md (AssemblyAI) describes
 * it. Vendor sources: npm `assemblyai` 4.41.5 (src/services/streaming/service.ts: URL, query
 * parameters, `Authorization`, retry policy; src/types/streaming/index.ts: messages;
 * src/utils/errors/streaming.ts: close codes) and AssemblyAI's docs ("Message Sequence",
 * "Common session errors and closures", the streaming API reference for defaults).
 *
 * Wire summary:
 * - Connect to `wss://streaming.assemblyai.com/v3/ws?…` with `Authorization: <key>` (the raw key,
 *   no scheme word). The server sends `Begin` first; only then is the session usable.
 * - Audio: binary frames of raw PCM16 LE (`encoding=pcm_s16le`), **50–1000 ms per frame** (about
 *   50 ms recommended). Mic frames are usually 20 ms, so they are buffered to ≥ 50 ms here.
 * - Control (text frames): `ForceEndpoint` (end the turn now), `Terminate` (flush, `Termination`,
 *   close 1000). `KeepAlive` only matters with `inactivity_timeout`, which is not set.
 * - Server: `Turn` (same `turn_order` = same turn; `transcript` = finalized words; `end_of_turn`
 *   closes it; with `format_turns=true` a formatted copy with `turn_is_formatted:true` follows),
 *   `SpeechStarted`, `Termination`, `{"type":"Error","error_code","error"}`, and close codes
 *   (the SDK's `StreamingErrorType`: 3005–3009 and 4000–4103).
 *
 * Mapping onto the port's transcript contract (stt-port.ts). A v3 `Turn`'s `transcript` is
 * cumulative: "The running transcript of the current turn. Updated with each Turn message, it
 * accumulates finalized words progressively" (AssemblyAI docs, streaming message sequence), and
 * nothing of a turn is final for the port until `end_of_turn`. So one turn is one port segment:
 * - `end_of_turn:false` → `partial(transcript + trailing non-final words, {eotConfidence})`, the
 *   whole turn so far (none of it was delivered in a `final`; an empty one only when it
 *   withdraws a non-empty one);
 * - `end_of_turn:true` → `final(transcript, {endOfTurn:true, eotConfidence})`, once per
 *   `turn_order`, using the formatted copy when `format_turns` is on (if it does not come within
 *   `formatWaitMs`, or the next turn starts first, the unformatted text is used).
 *
 * Errors while opening reject `open()` (a GatewayError, `fatal` when a retry cannot help) and
 * are not reported through the events; after `open()` resolved, failures go to
 * `events.error` + `events.closed({expected:false})`.
 */
import type { WebSocket } from "ws";
import type { Timer } from "../../../clock.js";
import { concatBytes } from "../../../audio/pcm.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { SttEvents, SttOpenOptions, SttProvider, SttSession } from "../../stt-port.js";
import type { Env } from "../keys.js";
import { optionsOf, providerKey, type ParamValue } from "../provider-options.js";
import { LogThrottle } from "../../../log.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { keytermsOf } from "../stt-keyterms.js";
import { dialStt, keyRefused, sttFailure, SttSocket, sttRuntime, throwIfAborted, type SttFailure, type SttRuntime, type SttSocketOptions } from "../stt-socket.js";
import { isRecord, jsonSample } from "../../../providers/ws-frames.js";
import { spread } from "../../../spread.js";

/** The streaming endpoint, API version v3 (the SDK's `defaultStreamingUrl`, src/services/streaming/service.ts). */
export const ASSEMBLYAI_STREAMING_URL = "wss://streaming.assemblyai.com/v3/ws";
export const ASSEMBLYAI_KEY_VARIABLES = ["ASSEMBLYAI_API_KEY"] as const;

/**
 * Audio frame bounds (ms per binary frame): the server rejects shorter or longer ones with close
 * 3007 "Input duration violation: <time> ms. Expected between 50 and 1000 ms" (AssemblyAI,
 * "Common session errors and closures"; the SDK's MIN_CHUNK_MS/MAX_CHUNK_MS comments say the same).
 */
export const ASSEMBLYAI_MIN_CHUNK_MS = 50;
export const ASSEMBLYAI_MAX_CHUNK_MS = 1000;

/** `end_of_turn_confidence_threshold` default (AssemblyAI streaming API reference: 0.4). */
const DEFAULT_EOT_THRESHOLD = 0.4;
const MAX_KEYTERMS = 100;

/**
 * The query parameter for the silence (ms) after which a confident end of turn is taken. The SDK
 * (npm `assemblyai` 4.41.5, src/types/streaming/index.ts) marks the older name "@deprecated Use
 * `min_turn_silence` instead. This parameter will be removed in a future release." on
 * `min_end_of_turn_silence_when_confident`, and its own URL builder
 * (src/services/streaming/service.ts `connectionUrl`) sends only `min_turn_silence`.
 */
export const ASSEMBLYAI_MIN_TURN_SILENCE_PARAM = "min_turn_silence";

/**
 * Close codes a retry cannot fix: the SDK's `NON_RETRYABLE_CLOSE_CODES` (npm `assemblyai` 4.41.5,
 * src/services/streaming/service.ts: "Close/error codes that signal a permanent client-side
 * problem (auth, billing, malformed config). A retry would hit the same failure"): 4000 bad
 * sample rate, 4001 not authorized, 4002 insufficient funds, 4003 free-tier user, 4101 bad
 * schema. Every other code is retried, as the SDK does, among them 4032 "Audio too short" and
 * 4033 "Audio too long" (src/utils/errors/streaming.ts `AudioTooShort`/`AudioTooLong`): they say
 * nothing against the next connection, whose audio is new.
 */
export const ASSEMBLYAI_FATAL_CLOSE_CODES: ReadonlySet<number> = new Set([4000, 4001, 4002, 4003, 4101]);

/**
 * Runtime knobs (not user config), besides the shared ones: `openTimeoutMs` runs until `Begin`;
 * `closeTimeoutMs` from `Terminate` on.
 */
export interface AssemblyAiSttOptions extends SttSocketOptions {
  /** How long to wait for the formatted copy of an ended turn. Default 1000. */
  readonly formatWaitMs?: number;
}

/** Query params the adapter sets itself (`options.params` may not override them). */
const RESERVED_PARAMS = new Set(["sample_rate", "encoding", "token"]);

/** The speech model: explicit option, else English or multilingual by language. */
function defaultSpeechModel(language: string | undefined): string {
  return language === undefined || /^en\b/i.test(language) ? "universal-streaming-english" : "universal-streaming-multilingual";
}

/** The `/v3/ws` URL for a session (query parameters as the SDK's `connectionUrl` builds them). */
export function assemblyAiStreamingUrl(
  base: string,
  settings: { speechModel: string; formatTurns: boolean; eotThreshold: number; params?: Readonly<Record<string, ParamValue>> },
  options: Pick<SttOpenOptions, "sampleRate" | "prompt" | "minSilenceMs" | "maxSilenceMs">,
): string {
  const url = new URL(base);
  const q = url.searchParams;
  const set = (name: string, value: string | number | boolean): void => q.set(name, String(value));
  const minSilence = Math.max(0, Math.round(options.minSilenceMs));
  set("sample_rate", Math.round(options.sampleRate));
  set("encoding", "pcm_s16le");
  set("speech_model", settings.speechModel);
  set("format_turns", settings.formatTurns);
  set("end_of_turn_confidence_threshold", settings.eotThreshold);
  set(ASSEMBLYAI_MIN_TURN_SILENCE_PARAM, minSilence);
  set("max_turn_silence", Math.max(minSilence, Math.round(options.maxSilenceMs)));
  const terms = keytermsOf(options.prompt, MAX_KEYTERMS);
  // keyterms_prompt: the URL value is a JSON array (the SDK's `connectionUrl`: JSON.stringify of the terms).
  if (terms.length > 0) set("keyterms_prompt", JSON.stringify(terms));
  for (const [name, value] of Object.entries(settings.params ?? {})) {
    if (!RESERVED_PARAMS.has(name)) set(name, value);
  }
  return url.toString();
}

// ---- server messages (the SDK's TurnEvent, BeginEvent, SpeechStartedEvent, TerminationEvent) ----

interface TurnMessage {
  readonly type: "Turn";
  readonly turn_order?: number;
  readonly turn_is_formatted?: boolean;
  readonly end_of_turn?: boolean;
  readonly transcript?: string;
  readonly end_of_turn_confidence?: number;
  /** Word times are ms of the stream (AssemblyAI "Message Sequence": e.g. `"start": 1920, "end": 2000`). */
  readonly words?: readonly { readonly text?: string; readonly word_is_final?: boolean; readonly end?: number }[];
}

/** Where the turn's last word ends in the stream (ms), when the words say. */
function wordsEndMs(message: TurnMessage): number | undefined {
  let end: number | undefined;
  for (const word of Array.isArray(message.words) ? message.words : []) {
    if (isRecord(word) && typeof word.end === "number" && Number.isFinite(word.end)) end = Math.max(end ?? 0, word.end);
  }
  return end;
}

function textOf(message: TurnMessage): string {
  return typeof message.transcript === "string" ? message.transcript.trim() : "";
}

/** The interim text: finalized words plus the trailing word(s) not final yet. */
function partialTextOf(message: TurnMessage): string {
  const trailing: string[] = [];
  if (Array.isArray(message.words)) {
    for (const word of message.words) {
      if (isRecord(word) && word.word_is_final === false && typeof word.text === "string" && word.text !== "") trailing.push(word.text);
    }
  }
  return [textOf(message), ...trailing].filter((p) => p !== "").join(" ");
}

function confidenceOf(message: TurnMessage): { eotConfidence?: number } {
  return typeof message.end_of_turn_confidence === "number" ? { eotConfidence: message.end_of_turn_confidence } : {};
}

/** A close (code, and the server's `{"error"}` text if any) → failure; 4001 is a refused key. */
function closeFailure(code: number, reason: string, serverError: string, cause: Error | undefined, keyVariable: string): SttFailure {
  const why = [reason, serverError].filter((s) => s !== "").join("; ") || cause?.message || "no reason given";
  if (code === 4001) return keyRefused("assemblyai", "close 4001", keyVariable, why);
  return sttFailure(`assemblyai connection closed (code ${code}): ${why}`, !ASSEMBLYAI_FATAL_CLOSE_CODES.has(code), cause);
}

interface PendingTurn {
  readonly order: number;
  readonly text: string;
  readonly info: { eotConfidence?: number };
  readonly timer: Timer;
}

class AssemblyAiSession implements SttSession {
  readonly endpointing = true;
  readonly #socket: SttSocket;
  readonly #events: SttEvents;
  readonly #log: ProviderLog;
  /** Messages the vendor should not send (not an object): at most a line every 10 s. */
  readonly #warnings: LogThrottle;
  /** Audio not sent yet because it is under the 50 ms frame minimum. */
  #buffer: Uint8Array = new Uint8Array(0);
  /** The highest turn_order already handed over as a final. */
  #lastFinalOrder = -1;
  /** The partial last handed over for the open turn ("" after its final). */
  #partial = "";
  /** An ended turn waiting for its formatted copy. */
  #pending: PendingTurn | undefined;
  #serverError = "";
  /** Where the audio finalized so far ends (ms of this connection's stream). */
  #finalizedMs: number | undefined;

  constructor(
    ws: WebSocket,
    events: SttEvents,
    private readonly runtime: SttRuntime,
    keyVariable: string,
    private readonly formatTurns: boolean,
    /** Bytes in 50 ms and in 1000 ms of PCM16 mono at the session's rate. */
    private readonly minChunk: number,
    private readonly maxChunk: number,
    private readonly formatWaitMs: number,
  ) {
    this.#log = runtime.log;
    this.#warnings = new LogThrottle(() => runtime.clock.now());
    // The session is usable once the server sends `Begin` (the SDK's `connect()` resolves on it), not when the socket opens.
    this.#socket = new SttSocket(ws, { vendor: "assemblyai", keyVariable, readyPhrase: "begin a session" }, runtime, events, {
      message: (message) => this.#onMessage(message),
      closeFailure: (code, reason, cause, opening) =>
        opening && cause !== undefined && code === 1006
          ? sttFailure(`assemblyai connection failed: ${cause.message}`, true, cause)
          : closeFailure(code, reason, this.#serverError, cause, keyVariable),
      ended: () => this.#flushPendingTurn(),
    });
    this.#events = this.#socket.events;
  }

  get droppedBytes(): number {
    return this.#socket.droppedBytes;
  }

  get finalizedAudioMs(): number | undefined {
    return this.#finalizedMs;
  }

  /** Resolves on `Begin`; rejects on failure, abort or timeout. */
  waitOpen(signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
    return this.#socket.waitOpen(signal, timeoutMs);
  }

  sendAudio(pcm: Uint8Array): void {
    if (this.#socket.closeRequested || this.#socket.phase !== "open" || pcm.byteLength === 0) return;
    // Frames must be 50–1000 ms (ASSEMBLYAI_MIN/MAX_CHUNK_MS): buffer up to 50 ms, split anything over 1000 ms.
    let data = this.#buffer.byteLength === 0 ? pcm : concatBytes([this.#buffer, pcm]);
    while (data.byteLength >= this.minChunk) {
      const n = Math.min(data.byteLength, this.maxChunk);
      this.#socket.sendAudio(data.subarray(0, n));
      data = data.subarray(n);
    }
    this.#buffer = new Uint8Array(data); // a copy: the caller may reuse its buffer
  }

  finalize(): void {
    if (this.#socket.closeRequested || this.#socket.phase !== "open") return;
    this.#flushAudio();
    this.#socket.control({ type: "ForceEndpoint" });
  }

  close(): Promise<void> {
    return this.#socket.close(() => {
      this.#flushAudio();
      // Terminate: turns in flight arrive, then Termination, then close 1000 (AssemblyAI "Message Sequence").
      this.#socket.control({ type: "Terminate" });
    });
  }

  /** Send what is buffered, padded with silence to the 50 ms minimum. */
  #flushAudio(): void {
    if (this.#buffer.byteLength === 0) return;
    const padded = new Uint8Array(this.minChunk);
    padded.set(this.#buffer);
    this.#buffer = new Uint8Array(0);
    this.#socket.sendAudio(padded);
  }

  // ---- server messages ----

  #onMessage(message: unknown): void {
    if (!isRecord(message)) {
      this.#warnings.warn(this.#log, { sample: jsonSample(message) }, "assemblyai sent a non-object message; ignored");
      return;
    }
    if (typeof message.error === "string") {
      // Errors come as {"type":"Error","error_code","error"} before the close with that code ("Common
      // session errors and closures"); the close reports it.
      this.#serverError = message.error;
      this.#log.warn({ error: message.error }, "assemblyai reported an error");
      return;
    }
    switch (message.type) {
      case "Begin":
        this.#log.debug({ id: message.id, expiresAt: message.expires_at }, "assemblyai session began");
        this.#socket.markOpen();
        break;
      case "Turn":
        if (this.#socket.phase === "open") this.#onTurn(message as unknown as TurnMessage);
        break;
      case "SpeechStarted":
        if (this.#socket.phase === "open") this.#events.speechStarted();
        break;
      case "Termination":
        this.#log.debug({ audioSeconds: message.audio_duration_seconds }, "assemblyai session terminated");
        this.#flushPendingTurn();
        break;
      default:
        this.#log.debug({ type: message.type }, "assemblyai message ignored");
    }
  }

  #onTurn(message: TurnMessage): void {
    const order = typeof message.turn_order === "number" ? message.turn_order : Math.max(this.#lastFinalOrder + 1, this.#pending?.order ?? 0);
    if (order <= this.#lastFinalOrder) return; // a late copy of a turn already handed over
    if (this.#pending !== undefined && order > this.#pending.order) this.#flushPendingTurn();
    const info = confidenceOf(message);
    if (message.end_of_turn !== true) {
      // The whole turn so far: none of it went out in a final (stt-port.ts).
      const text = partialTextOf(message);
      const withdrawn = text === "" && this.#partial !== "";
      this.#partial = text;
      if (text !== "" || withdrawn) this.#events.partial(text, info);
      return;
    }
    // The turn's audio is final at AssemblyAI up to its last word: a replay after a drop starts there.
    const end = wordsEndMs(message);
    if (end !== undefined) this.#finalizedMs = Math.max(this.#finalizedMs ?? 0, end);
    if (this.formatTurns && message.turn_is_formatted !== true) {
      // format_turns: a formatted copy follows; wait for it, but not forever.
      if (this.#pending === undefined) {
        const timer = this.runtime.clock.setTimeout(() => this.#flushPendingTurn(), this.formatWaitMs);
        this.#pending = { order, text: textOf(message), info, timer };
      }
      return;
    }
    const fallback = this.#pending;
    this.#pending = undefined;
    fallback?.timer.cancel();
    const text = textOf(message);
    this.#finalTurn(order, text, spread(fallback?.info, info));
  }

  #flushPendingTurn(): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    pending.timer.cancel();
    this.#log.debug({ turnOrder: pending.order }, "assemblyai formatted turn did not come; using the unformatted one");
    this.#finalTurn(pending.order, pending.text, pending.info);
  }

  #finalTurn(order: number, text: string, info: { eotConfidence?: number }): void {
    this.#lastFinalOrder = Math.max(this.#lastFinalOrder, order);
    this.#partial = "";
    this.#events.final(text, { endOfTurn: true, ...info });
  }
}

/** PCM16 mono bytes in `ms` at `sampleRate` (2 bytes a sample: 16 kHz → 640 bytes per 20 ms). */
function pcmBytes(sampleRate: number, ms: number): number {
  return Math.ceil((sampleRate * ms) / 1000) * 2;
}

/**
 * An AssemblyAI Universal Streaming v3 provider. Options: `speechModel` (alias `model`; default
 * universal-streaming-english, or -multilingual for a non-English `language`), `language`,
 * `formatTurns` (default true), `endOfTurnConfidenceThreshold` (default 0.4), `url` (instead of
 * `wss://streaming.assemblyai.com/v3/ws`), `apiKeyEnv`, `params` (more query params). Throws
 * `MissingKeyError` naming the variable when there is no key.
 */
export function assemblyAiStt(descriptor: ProviderDescriptor, env: Env, runtime: AssemblyAiSttOptions = {}): SttProvider {
  const { apiKey, keyVariable } = providerKey(descriptor, env, ASSEMBLYAI_KEY_VARIABLES);
  const read = optionsOf(descriptor, "stt");
  const speechModel = read.string("speechModel") ?? read.string("model");
  const language = read.string("language");
  const formatTurns = read.boolean("formatTurns") ?? true;
  const eotThreshold = read.number("endOfTurnConfidenceThreshold", 0, 1) ?? DEFAULT_EOT_THRESHOLD;
  const base = read.wsUrl(ASSEMBLYAI_STREAMING_URL);
  const params = read.params();
  const link = sttRuntime(runtime);

  return {
    kind: "assemblyai",
    async open(options: SttOpenOptions, events: SttEvents): Promise<SttSession> {
      throwIfAborted(options.signal, "assemblyai");
      const model = speechModel ?? defaultSpeechModel(language ?? options.language);
      const url = assemblyAiStreamingUrl(base, { speechModel: model, formatTurns, eotThreshold, params }, options);
      // The raw key, no scheme word (the SDK: `headers: { Authorization: this.apiKey }`).
      const ws = dialStt("assemblyai", link, url, { Authorization: apiKey });
      const session = new AssemblyAiSession(
        ws,
        events,
        link,
        keyVariable,
        formatTurns,
        pcmBytes(options.sampleRate, ASSEMBLYAI_MIN_CHUNK_MS),
        pcmBytes(options.sampleRate, ASSEMBLYAI_MAX_CHUNK_MS),
        runtime.formatWaitMs ?? 1000,
      );
      await session.waitOpen(options.signal, link.openTimeoutMs);
      return session;
    },
  };
}
