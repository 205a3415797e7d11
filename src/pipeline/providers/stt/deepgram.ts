/**
 * Deepgram streaming STT (`/v1/listen` over WebSocket), as docs/vendors.md (Deepgram) describes
 * it. Vendor sources: Deepgram's docs (the listen-streaming reference, "Keep Alive", "Finalize",
 * "Close Stream", "Utterance End", "Speech Started", "Configure Endpointing and Interim Results")
 * and `@deepgram/sdk` 5.13 (`DeepgramEnvironment.Production.production` = wss://api.deepgram.com,
 * the listen client's path "/v1/listen", `HeaderAuthProvider`'s "Token " prefix,
 * `ListenV1Results`/`ListenV1UtteranceEnd` types).
 *
 * Wire summary:
 * - Connect to `wss://api.deepgram.com/v1/listen?…` with `Authorization: Token <key>`.
 * - Audio: binary frames of raw PCM16 LE (`encoding=linear16`) at the declared `sample_rate`,
 *   nothing wrapping them.
 * - Control (text frames): `KeepAlive` every 3–5 s while no audio flows (after 10 s of neither the
 *   server closes with NET-0001), `Finalize` (flush buffered audio now; results carry
 *   `from_finalize:true`), `CloseStream` (finish, send the last `Results` and `Metadata`, close).
 * - Server: `Results` (`is_final` false = interim, true = a finished segment; `speech_final` = the
 *   endpointer saw a pause), `UtteranceEnd` (a word gap of `utterance_end_ms`), `SpeechStarted`
 *   (needs `vad_events=true`), `Metadata` (end of stream).
 *
 * Mapping onto the port's transcript contract (stt-port.ts). Deepgram finalizes an utterance in
 * segments: an interim (`is_final:false`) is its hypothesis for the audio after the last
 * `is_final` result, and an `is_final` result is the text of `[start, start+duration)`, never
 * sent again; "concatenate finalized transcripts to build complete utterances … When
 * speech_final: true arrives, the buffer contains the complete utterance" (Deepgram docs,
 * "Configure Endpointing and Interim Results"). So the vendor's split is the port's, as is:
 * - an interim → `partial(interim)` (an empty one only when it withdraws a non-empty one);
 * - each `is_final` segment → `final(segment, {endOfTurn: speech_final || from_finalize})`;
 * - `UtteranceEnd` with a turn still open → `final(<unfinalized interim or "">, {endOfTurn:true})`.
 * The adapter never joins segments: the voice loop assembles the utterance.
 *
 * Errors while opening reject `open()` (a GatewayError, `fatal` when a retry cannot help) and
 * are not reported through the events; after `open()` resolved, failures go to
 * `events.error` + `events.closed({expected:false})`.
 */
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import type { Clock, Timer } from "../../../clock.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { SttEvents, SttOpenOptions, SttProvider, SttSession } from "../../stt-port.js";
import type { Env } from "../keys.js";
import { optionsOf, providerKey, type ParamValue } from "../provider-options.js";
import { LogThrottle } from "../../../log.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { keytermsOf } from "../stt-keyterms.js";
import { dialStt, sttFailure, SttSocket, sttRuntime, throwIfAborted, type SttFailure, type SttRuntime, type SttSocketOptions } from "../stt-socket.js";
import { isRecord, jsonSample } from "../../../providers/ws-frames.js";

/** The live transcription endpoint, API version v1 (`@deepgram/sdk` 5.13: environment wss://api.deepgram.com + "/v1/listen"). */
export const DEEPGRAM_LISTEN_URL = "wss://api.deepgram.com/v1/listen";
export const DEEPGRAM_KEY_VARIABLES = ["DEEPGRAM_API_KEY"] as const;
export const DEEPGRAM_DEFAULT_MODEL = "nova-3";

/**
 * `utterance_end_ms` bounds. The minimum (1000 ms) is Deepgram's: interim results come about once
 * a second, and a smaller value is refused at upgrade (HTTP 400). The maximum is this gateway's
 * choice (a user waiting longer than 5 s for a reply is a stall), not a documented vendor limit.
 */
export const DEEPGRAM_UTTERANCE_END_MIN_MS = 1000;
export const DEEPGRAM_UTTERANCE_END_MAX_MS = 5000;

/** Keyterm prompting: at most 100 terms (Deepgram docs, "Keyterm Prompting"). */
const MAX_KEYTERMS = 100;

/**
 * Runtime knobs (not user config), besides the shared ones: `openTimeoutMs` runs until the socket
 * is open; `closeTimeoutMs` from `CloseStream` on.
 */
export interface DeepgramSttOptions extends SttSocketOptions {
  /** Send `KeepAlive` after this long without audio (Deepgram "Keep Alive": every 3–5 s; the server closes after 10 s of neither audio nor KeepAlive). Default 5000. */
  readonly keepAliveMs?: number;
}

/** Listen params the adapter sets itself (`options.params` may not override them). */
const RESERVED_PARAMS = new Set(["encoding", "sample_rate", "channels", "interim_results", "multichannel"]);

/** The prompt's keyterms, at most 100 (see `keytermsOf`). */
export function splitKeyterms(prompt: string | undefined): string[] {
  return keytermsOf(prompt, MAX_KEYTERMS);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** The `/v1/listen` URL for a session (query parameters: Deepgram's listen-streaming reference). */
export function deepgramListenUrl(
  base: string,
  settings: { model: string; language?: string | undefined; params?: Readonly<Record<string, ParamValue | readonly ParamValue[]>> },
  options: Pick<SttOpenOptions, "sampleRate" | "prompt" | "minSilenceMs" | "maxSilenceMs">,
): string {
  const url = new URL(base);
  const q = url.searchParams;
  const set = (name: string, value: string | number | boolean): void => q.set(name, String(value));
  set("model", settings.model);
  set("encoding", "linear16");
  set("sample_rate", Math.round(options.sampleRate));
  set("channels", 1);
  set("interim_results", true);
  // endpointing: ms of silence before `speech_final` (vendor default 10 ms).
  set("endpointing", Math.max(10, Math.round(options.minSilenceMs)));
  // utterance_end_ms needs interim_results=true; 1000 ms is the vendor's floor.
  set("utterance_end_ms", clamp(Math.round(options.maxSilenceMs), DEEPGRAM_UTTERANCE_END_MIN_MS, DEEPGRAM_UTTERANCE_END_MAX_MS));
  set("vad_events", true);
  set("smart_format", true);
  if (settings.language !== undefined) set("language", settings.language);
  // Vocabulary biasing: `keyterm` (repeated) on nova-3; older models take `keywords` (single words).
  const terms = splitKeyterms(options.prompt);
  if (settings.model.startsWith("nova-3")) {
    for (const term of terms) q.append("keyterm", term);
  } else {
    for (const term of terms) if (!/\s/.test(term)) q.append("keywords", term);
  }
  for (const [name, value] of Object.entries(settings.params ?? {})) {
    if (RESERVED_PARAMS.has(name)) continue;
    q.delete(name);
    for (const v of Array.isArray(value) ? (value as readonly ParamValue[]) : [value as ParamValue]) q.append(name, String(v));
  }
  return url.toString();
}

// ---- server messages (`@deepgram/sdk` ListenV1Results, ListenV1UtteranceEnd, ListenV1SpeechStarted, ListenV1Metadata) ----

interface ResultsMessage {
  readonly type: "Results";
  readonly is_final?: boolean;
  readonly speech_final?: boolean;
  readonly from_finalize?: boolean;
  /** Where the result's audio starts in the stream, and how long it is (seconds). */
  readonly start?: number;
  readonly duration?: number;
  readonly channel?: { readonly alternatives?: readonly { readonly transcript?: string }[] };
}

function transcriptOf(message: ResultsMessage): string {
  const text = message.channel?.alternatives?.[0]?.transcript;
  return typeof text === "string" ? text.trim() : "";
}

/**
 * A close the session did not ask for → failure. Before the socket opened it is a failed
 * connection (worth retrying). After: Deepgram closes with 1008 for audio it cannot decode
 * (retrying the same audio will not help) and 1011 for its own errors and timeouts such as NET-0001.
 */
function closeFailure(code: number, reason: string, cause: Error | undefined, opening: boolean): SttFailure {
  if (opening) return sttFailure(`deepgram connection failed: ${cause?.message ?? `closed with code ${code}`}`, true, cause);
  const why = reason !== "" ? reason : cause !== undefined ? cause.message : "no reason given";
  return sttFailure(`deepgram connection closed unexpectedly (code ${code}): ${why}`, code !== 1008, cause);
}

class DeepgramSession implements SttSession {
  readonly endpointing = true;
  readonly #socket: SttSocket;
  readonly #events: SttEvents;
  readonly #log: ProviderLog;
  readonly #clock: Clock;
  /** Messages the vendor should not send (no type): at most a line every 10 s. */
  readonly #warnings: LogThrottle;
  /** The latest interim: the hypothesis for the audio after the last `is_final` result. */
  #interim = "";
  /** Something was heard since the last end of turn. */
  #turnOpen = false;
  #lastActivity: number;
  #keepAliveTimer: Timer | undefined;
  #finalizedMs: number | undefined;

  constructor(
    ws: WebSocket,
    events: SttEvents,
    runtime: SttRuntime,
    keyVariable: string,
    private readonly keepAliveMs: number,
  ) {
    this.#log = runtime.log;
    this.#clock = runtime.clock;
    this.#warnings = new LogThrottle(() => runtime.clock.now());
    this.#lastActivity = runtime.clock.now();
    // A refusal at upgrade gives its reason in the `dg-error` header (the body is the fallback).
    this.#socket = new SttSocket(ws, { vendor: "deepgram", keyVariable, readyPhrase: "open", refusalHeader: "dg-error" }, runtime, events, {
      message: (message) => this.#onMessage(message),
      closeFailure,
      ended: () => this.#stopKeepAlive(),
    });
    this.#events = this.#socket.events;
    ws.on("upgrade", (res: IncomingMessage) => this.#log.debug({ requestId: res.headers["dg-request-id"] }, "deepgram connected"));
    ws.on("open", () => this.#onOpen());
  }

  get droppedBytes(): number {
    return this.#socket.droppedBytes;
  }

  get finalizedAudioMs(): number | undefined {
    return this.#finalizedMs;
  }

  /** Resolves when the socket is open; rejects on failure, abort or timeout. */
  waitOpen(signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
    return this.#socket.waitOpen(signal, timeoutMs);
  }

  sendAudio(pcm: Uint8Array): void {
    if (this.#socket.closeRequested || this.#socket.phase === "closed" || pcm.byteLength === 0) return;
    if (this.#socket.sendAudio(pcm) === 0) this.#lastActivity = this.#clock.now();
  }

  finalize(): void {
    this.#socket.control({ type: "Finalize" });
  }

  close(): Promise<void> {
    this.#stopKeepAlive();
    // CloseStream: the server flushes, sends the last Results and Metadata, then closes (Deepgram "Close Stream").
    return this.#socket.close(() => this.#socket.control({ type: "CloseStream" }));
  }

  // ---- socket events ----

  #onOpen(): void {
    if (!this.#socket.markOpen()) return; // abandoned (aborted or timed out)
    this.#lastActivity = this.#clock.now();
    this.#armKeepAlive(this.keepAliveMs);
  }

  #onMessage(message: unknown): void {
    if (!isRecord(message) || typeof message.type !== "string") {
      this.#warnings.warn(this.#log, { sample: jsonSample(message) }, "deepgram sent a message without a type; ignored");
      return;
    }
    switch (message.type) {
      case "Results":
        this.#onResults(message as unknown as ResultsMessage);
        break;
      case "UtteranceEnd":
        this.#onUtteranceEnd();
        break;
      case "SpeechStarted":
        this.#events.speechStarted();
        break;
      case "Metadata":
        this.#log.debug({ requestId: message.request_id, duration: message.duration }, "deepgram metadata");
        break;
      case "Error":
        this.#log.warn({ message }, "deepgram reported an error");
        break;
      default:
        this.#log.debug({ type: message.type }, "deepgram message ignored");
    }
  }

  #onResults(message: ResultsMessage): void {
    const text = transcriptOf(message);
    if (message.is_final !== true) {
      const withdrawn = text === "" && this.#interim !== "";
      this.#interim = text;
      if (text !== "") this.#turnOpen = true;
      // The unfinalized tail only (stt-port.ts): never the segments already delivered as finals.
      if (text !== "" || withdrawn) this.#events.partial(text, {});
      return;
    }
    // A finished segment. `speech_final` is the endpointer's pause; a result produced by our
    // Finalize (`from_finalize`) also ends the turn, since the loop asked for it.
    const coversInterim = this.#interim !== "";
    this.#interim = "";
    // Where the finalized audio ends: audio sent after it is not safe at Deepgram yet (a replay needs it).
    const { start, duration } = message;
    if (typeof start === "number" && typeof duration === "number" && Number.isFinite(start + duration)) {
      this.#finalizedMs = Math.max(this.#finalizedMs ?? 0, (start + duration) * 1000);
    }
    const endOfTurn = message.speech_final === true || message.from_finalize === true;
    if (text !== "") this.#turnOpen = true;
    // Silence: Deepgram sends empty finals. One that covers an interim still goes out (it withdraws it).
    if (text === "" && !coversInterim && !(endOfTurn && this.#turnOpen)) return;
    if (endOfTurn) this.#endTurn();
    this.#events.final(text, { endOfTurn });
  }

  #onUtteranceEnd(): void {
    // After a speech_final the turn is already closed: Deepgram says to ignore this one.
    if (!this.#turnOpen) return;
    const text = this.#interim;
    this.#endTurn();
    this.#events.final(text, { endOfTurn: true });
  }

  #endTurn(): void {
    this.#interim = "";
    this.#turnOpen = false;
  }

  // ---- keepalive (Deepgram "Keep Alive": every 3–5 s while no audio flows) ----

  #armKeepAlive(delay: number): void {
    this.#keepAliveTimer = this.#clock.setTimeout(() => this.#onKeepAliveTimer(), Math.max(1, delay));
  }

  #onKeepAliveTimer(): void {
    if (this.#socket.phase !== "open" || this.#socket.closeRequested) return;
    const idle = this.#clock.now() - this.#lastActivity;
    if (idle >= this.keepAliveMs) {
      this.#socket.control({ type: "KeepAlive" });
      this.#lastActivity = this.#clock.now();
      this.#armKeepAlive(this.keepAliveMs);
    } else {
      this.#armKeepAlive(this.keepAliveMs - idle);
    }
  }

  #stopKeepAlive(): void {
    this.#keepAliveTimer?.cancel();
    this.#keepAliveTimer = undefined;
  }
}

/**
 * A Deepgram STT provider. Options: `model` (default "nova-3"), `language`, `url` (instead of
 * `wss://api.deepgram.com/v1/listen`), `apiKeyEnv`, `params` (more listen query params, e.g.
 * `{numerals:true}`; the audio-format ones are the adapter's). Throws `MissingKeyError` naming
 * the variable when there is no key.
 */
export function deepgramStt(descriptor: ProviderDescriptor, env: Env, runtime: DeepgramSttOptions = {}): SttProvider {
  const { apiKey, keyVariable } = providerKey(descriptor, env, DEEPGRAM_KEY_VARIABLES);
  const read = optionsOf(descriptor, "stt");
  const model = read.string("model") ?? DEEPGRAM_DEFAULT_MODEL;
  const language = read.string("language");
  const base = read.wsUrl(DEEPGRAM_LISTEN_URL);
  const params = read.repeatedParams();
  const link = sttRuntime(runtime);

  return {
    kind: "deepgram",
    async open(options: SttOpenOptions, events: SttEvents): Promise<SttSession> {
      throwIfAborted(options.signal, "deepgram");
      const url = deepgramListenUrl(base, { model, language: language ?? options.language, params }, options);
      const ws = dialStt("deepgram", link, url, { Authorization: `Token ${apiKey}` });
      const session = new DeepgramSession(ws, events, link, keyVariable, runtime.keepAliveMs ?? 5000);
      await session.waitOpen(options.signal, link.openTimeoutMs);
      return session;
    },
  };
}
