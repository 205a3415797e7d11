/**
 * OpenAI Realtime (GA, `gpt-realtime`) as an S2sProvider: docs/vendors.md (OpenAI Realtime).
 *
 * One WebSocket per session, PCM16 24 kHz both ways. Per socket: ← `session.created`, then exactly
 * one → `session.update`, ← `session.updated`, then the conversation so far is replayed
 * (`conversation.item.create`) and `open()` resolves. A transient drop (1001/1006/1011/1012/1013, a
 * network error) reconnects with backoff on the injected clock and replays the conversation, plus
 * any tool results whose follow-up response never started, so each call is answered exactly once.
 *
 * One in-band response at a time, by state (`InBandSlot`: idle | requested | running), never by the
 * wording of an error: see `#next`, `#inBandStarted` and `#expectedError`. `response.cancel` goes out
 * only while the response it names runs.
 *
 * Errors while opening reject `open()` (a GatewayError; `fatal` when a retry cannot help, e.g. a
 * refused key) and are not reported through the events. After `open()`, in-band `error` events are
 * non-fatal, except those the adapter expects (a refusal of a request that crossed a response, a
 * cancel that crossed a response's end), which are not reported; a link gone for good reports one
 * fatal error, then `closed({expected:false})`.
 */
import type { IncomingMessage } from "node:http";
import { WebSocket, type ClientOptions, type RawData } from "ws";
import { systemClock, type Clock, type Timer } from "../../clock.js";
import { GatewayError, MissingKeyError, messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { ProviderDescriptor } from "../../manifest/index.js";
import type { S2sAudioFormat, S2sEvents, S2sHistoryItem, S2sOpenOptions, S2sProvider, S2sSession, S2sSetup } from "../s2s-port.js";
import { shieldEvents } from "../shield-events.js";

const KIND = "openai-realtime";
const VENDOR = "OpenAI Realtime";
/** docs/vendors.md (OpenAI Realtime), "URL": the SDK's base URL + `/realtime`; `?model=` is appended. */
const DEFAULT_URL = "wss://api.openai.com/v1/realtime";
const DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY";
/** docs/vendors.md (OpenAI Realtime), `session.update`: `audio/pcm` takes 24000 Hz only; `audio/pcmu` and `audio/pcma` are G.711 at 8 kHz. */
const SAMPLE_RATE = 24_000;
const G711_RATE = 8000;
const AUDIO_FORMATS: readonly S2sAudioFormat[] = ["pcm16", "pcmu", "pcma"];
/** The wire format object, the rate, and bytes per millisecond (PCM16 at 24 kHz: 48; G.711: 8). */
function wireFormat(format: S2sAudioFormat): { readonly json: object; readonly rate: number; readonly bytesPerMs: number } {
  if (format === "pcm16") return { json: { type: "audio/pcm", rate: SAMPLE_RATE }, rate: SAMPLE_RATE, bytesPerMs: (SAMPLE_RATE * 2) / 1000 };
  return { json: { type: `audio/${format}` }, rate: G711_RATE, bytesPerMs: G711_RATE / 1000 };
}
/** A socket backlog past which mic audio is dropped (and counted), as the pipeline's links do. */
export const MAX_REALTIME_BACKLOG_BYTES = 1024 * 1024;
const DEFAULT_RECONNECT_DELAYS_MS: readonly number[] = [250, 1000, 2000];
const DEFAULT_OPEN_TIMEOUT_MS = 10_000;
/** How long a clean close may take before the socket is dropped. */
const CLOSE_TIMEOUT_MS = 1000;
/** Close codes a reconnect may cure: going away, abnormal (no close frame), server error, restart, try again later. */
const TRANSIENT_CLOSE_CODES: ReadonlySet<number> = new Set([1001, 1006, 1011, 1012, 1013]);
/** Tags our out-of-band responses (docs/vendors.md (OpenAI Realtime), "Out of band": `metadata`, up to 16 string pairs). */
const OOB_METADATA = { switchboard: "oob" } as const;
/**
 * Our in-band `response.create`s carry `metadata: {switchboard_request: <its event_id>}`; the service
 * echoes a response's `metadata` in `response.created` (`RealtimeResponse.metadata`, the `openai` SDK
 * 7.59.0 `src/resources/realtime/realtime.ts`; "The `metadata` field is a good way to disambiguate
 * multiple simultaneous Responses"), so a response that does not carry it was not started by that
 * request. Keys up to 64 characters, values up to 512.
 */
const REQUEST_METADATA_KEY = "switchboard_request";
/**
 * The `event_id`s we give our `response.create` / `response.cancel` ("Optional client-generated ID
 * used to identify this event"); an `error` names the client event that caused it in
 * `error.event_id` ("if applicable"), so these prefixes say which request of ours it answers.
 */
const CREATE_EVENT_PREFIX = "sb_create_";
const CANCEL_EVENT_PREFIX = "sb_cancel_";
const TURN_DETECTION_TYPES: ReadonlySet<unknown> = new Set(["server_vad", "semantic_vad"]);

/** The part of a pino logger the adapter uses (pino's `Logger` fits). */
export interface S2sLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const NO_LOG: S2sLog = { debug: () => undefined, warn: () => undefined };

/** Builds the socket (tests inject one, e.g. with a large `bufferedAmount`). */
export type RealtimeSocketFactory = (url: string, options: ClientOptions) => WebSocket;

/** Runtime knobs (not user config). */
export interface OpenAiRealtimeOptions {
  /** Default: silent. */
  readonly log?: Logger | S2sLog;
  /** Timers: the open timeout and the reconnect backoff. Default: the system clock. */
  readonly clock?: Clock;
  /** Wait before each reconnect attempt; the list's length is the budget. Default [250, 1000, 2000]. */
  readonly reconnectDelaysMs?: readonly number[];
  /** `open()` (and each reconnect) fails without `session.updated` within this long. Default 10000. */
  readonly openTimeoutMs?: number;
  /** Build the socket. Default: `new WebSocket(url, options)`. */
  readonly connect?: RealtimeSocketFactory;
}

/** The session, plus what it dropped. */
export interface OpenAiRealtimeSession extends S2sSession {
  /** Mic audio dropped: over the backlog limit, or while reconnecting. */
  readonly droppedAudioBytes: number;
}

export interface OpenAiRealtimeProvider extends S2sProvider {
  open(options: S2sOpenOptions, events: S2sEvents): Promise<OpenAiRealtimeSession>;
}

/** `descriptor.options`, read and validated at construction. */
interface RealtimeConfig {
  readonly url: string;
  readonly apiKey: string;
  readonly keyVariable: string;
  readonly model: string;
  readonly voice: string | Readonly<Record<string, unknown>>;
  /** The transcription model, or false for none. */
  readonly transcription: string | false;
  /** `audio.input.turn_detection` without `create_response`/`interrupt_response` (set per session). */
  readonly turnDetection: Readonly<Record<string, unknown>>;
}

interface Runtime {
  readonly log: S2sLog;
  readonly clock: Clock;
  readonly reconnectDelaysMs: readonly number[];
  readonly openTimeoutMs: number;
  readonly connect: RealtimeSocketFactory;
}

/**
 * The OpenAI Realtime provider. Options (`s2s.options.*`): `model` ("gpt-realtime"), `voice`
 * ("marin"), `transcription` (a model, "gpt-4o-mini-transcribe"; `false` for none), `turnDetection`
 * ("server_vad" | "semantic_vad" | an object passed through), `url`, `apiKeyEnv` ("OPENAI_API_KEY").
 * A missing key throws MissingKeyError here, not on the first call.
 */
export function openAiRealtime(descriptor: ProviderDescriptor, env: Readonly<Record<string, string | undefined>>, options: OpenAiRealtimeOptions = {}): OpenAiRealtimeProvider {
  const config = readConfig(descriptor, env);
  const runtime: Runtime = {
    log: options.log ?? NO_LOG,
    clock: options.clock ?? systemClock,
    reconnectDelaysMs: options.reconnectDelaysMs ?? DEFAULT_RECONNECT_DELAYS_MS,
    openTimeoutMs: options.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS,
    // Audio is base64: permessage-deflate would cost CPU and a zlib context per socket for little gain.
    connect: options.connect ?? ((url, socketOptions) => new WebSocket(url, { perMessageDeflate: false, ...socketOptions })),
  };
  return {
    kind: KIND,
    audioFormats: AUDIO_FORMATS,
    async open(openOptions, events) {
      const { signal } = openOptions;
      if (signal?.aborted === true) throw abortReason(signal);
      const session = new RealtimeSession(config, runtime, openOptions, events);
      await session.start(signal);
      return session;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Options

function readConfig(descriptor: ProviderDescriptor, env: Readonly<Record<string, string | undefined>>): RealtimeConfig {
  const options = descriptor.options;
  const fail = (message: string): never => {
    throw new GatewayError("internal", `s2s.options.${message}`, { fatal: true });
  };
  const string = (name: string): string | undefined => {
    const value = options[name];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.trim() === "") return fail(`${name} must be a non-empty string.`);
    return value;
  };

  const keyVariable = string("apiKeyEnv") ?? DEFAULT_KEY_VARIABLE;
  const apiKey = env[keyVariable];
  if (apiKey === undefined || apiKey === "") throw new MissingKeyError(descriptor.kind, keyVariable);

  const model = string("model") ?? "gpt-realtime";
  const base = string("url") ?? DEFAULT_URL;
  if (!/^wss?:\/\//.test(base)) fail(`url must be a ws:// or wss:// URL, got "${base}".`);
  const url = new URL(base);
  url.searchParams.set("model", model); // docs/vendors.md (OpenAI Realtime): exactly one of model / intent / call_id

  // docs/vendors.md (OpenAI Realtime): a voice name, or {"id":"voice_…"} for a custom voice.
  const rawVoice = options.voice;
  let voice: RealtimeConfig["voice"] = "marin";
  if (isRecord(rawVoice) && typeof rawVoice.id === "string") voice = rawVoice;
  else if (rawVoice !== undefined) voice = string("voice") ?? voice;

  const rawTranscription = options.transcription;
  const transcription = rawTranscription === false ? false : rawTranscription === true ? "gpt-4o-mini-transcribe" : (string("transcription") ?? "gpt-4o-mini-transcribe");

  const rawTurn = options.turnDetection ?? "server_vad";
  let turnDetection: Record<string, unknown>;
  if (typeof rawTurn === "string" && TURN_DETECTION_TYPES.has(rawTurn)) turnDetection = { type: rawTurn };
  else if (isRecord(rawTurn) && TURN_DETECTION_TYPES.has(rawTurn.type)) turnDetection = { ...rawTurn };
  else return fail('turnDetection must be "server_vad", "semantic_vad" or an object with one of those as its type.');

  return { url: url.toString(), apiKey, keyVariable, model, voice, transcription, turnDetection };
}

/** The one `session.update` of a socket (docs/vendors.md (OpenAI Realtime), `session.update`). */
function sessionUpdate(config: RealtimeConfig, setup: S2sSetup, format: S2sAudioFormat): object {
  const wire = wireFormat(format).json;
  const transcription =
    config.transcription === false
      ? undefined
      : { model: config.transcription, ...(setup.transcriptionPrompt === undefined ? {} : { prompt: setup.transcriptionPrompt }) };
  return {
    type: "session.update",
    session: {
      type: "realtime",
      model: config.model,
      instructions: setup.instructions,
      output_modalities: ["audio"],
      audio: {
        input: {
          format: wire,
          ...(transcription === undefined ? {} : { transcription }),
          // The port has no commit: the service's VAD ends turns and starts responses.
          turn_detection: { ...config.turnDetection, create_response: true, interrupt_response: setup.interruptResponse },
        },
        output: { format: wire, voice: config.voice },
      },
      // Function tools are flat objects (GA), not `{type, function:{…}}`.
      tools: setup.tools.map((tool) => ({ type: "function", name: tool.name, description: tool.description, parameters: tool.parameters })),
      tool_choice: typeof setup.toolChoice === "string" ? setup.toolChoice : { type: "function", name: setup.toolChoice.toolName },
    },
  };
}

/** A committed line as a conversation item: user `input_text`, assistant `output_text` (docs/vendors.md (OpenAI Realtime), "Conversation items"). */
function historyItem(item: S2sHistoryItem): object {
  const part = item.role === "user" ? { type: "input_text", text: item.text } : { type: "output_text", text: item.text };
  return { type: "conversation.item.create", item: { type: "message", role: item.role, content: [part] } };
}

// ---------------------------------------------------------------------------------------------
// The session

/** One socket of the session. */
interface Link {
  readonly ws: WebSocket;
  /** Which socket of the session (1, 2, …): a tool call made on an earlier one is not in this conversation. */
  readonly generation: number;
  /** `session.update` sent: exactly once per socket. */
  updateSent: boolean;
  /** `session.updated` seen and the conversation replayed. */
  ready: boolean;
  socketError: Error | undefined;
  /** Settles the wait for `session.updated`; undefined once settled. */
  handshake: { resolve(): void; reject(error: Error): void } | undefined;
}

/** An in-band response asked for: its `response` parameters (e.g. `instructions`), none for a plain one. */
interface InBandRequest {
  readonly response: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The default conversation's response, on the current socket. "Only one Response can write to the
 * default Conversation at a time" (the `openai` SDK's `ResponseCreateEvent`), and a `response.create`
 * meanwhile is refused, so:
 * - idle: none runs and none of ours is on its way: the next held request may go out;
 * - requested: our `response.create` (`eventId`) is on its way; no in-band `response.created` yet;
 * - running: an in-band response runs — ours, or one the service started on its own (server VAD) —
 *   from its `response.created` until its `response.done`.
 * Requests wait in `#held` while the slot is not idle or no socket is ready.
 */
type InBandSlot =
  | { readonly state: "idle" }
  | { readonly state: "requested"; readonly request: InBandRequest; readonly eventId: string }
  | { readonly state: "running"; readonly responseId: string };

const IDLE: InBandSlot = { state: "idle" };

interface ToolCallRecord {
  readonly name: string;
  readonly arguments: string;
  readonly generation: number;
}

class RealtimeSession implements OpenAiRealtimeSession {
  readonly audioFormat: S2sAudioFormat;
  readonly inputSampleRate: number;
  readonly outputSampleRate: number;
  readonly #bytesPerMs: number;
  readonly #events: S2sEvents;
  #link: Link | undefined;
  #generations = 0;
  /** close() was called, or the link is gone for good. */
  #ended = false;
  #closing: Promise<void> | undefined;
  #reconnectTimer: Timer | undefined;
  /** Reconnect attempts since the link last proved healthy; the budget is `reconnectDelaysMs.length`. */
  #attempts = 0;
  #lastFailure = "";
  #dropped = 0;
  #dropping = false;
  /** Responses started and not done: outOfBand per id. */
  readonly #responses = new Map<string, boolean>();
  /** Audio bytes received per assistant item, for clamping `truncate`. */
  readonly #itemAudio = new Map<string, number>();
  /** Interim user transcript per input item. */
  readonly #userText = new Map<string, string>();
  /** `function_call` items by item id (their name, should `.done` omit it). */
  readonly #callItems = new Map<string, string>();
  /** Tool calls made, by call_id (re-declared before their result on a newer socket). */
  readonly #calls = new Map<string, ToolCallRecord>();
  /** Results sent whose follow-up response has not started yet, by call_id. */
  readonly #pendingResults = new Map<string, string>();
  #pendingRespond = false;
  /** Out-of-band `response.create`s asked for while reconnecting (they never wait for the slot). */
  #queuedOutOfBand: object[] = [];
  /** The default conversation's response on the current socket. */
  #slot: InBandSlot = IDLE;
  /** In-band requests waiting for the slot (or for a socket), oldest first. */
  #held: InBandRequest[] = [];
  /** Our `response.create`s (event ids) that crossed a response the service started: their refusal is due. */
  #refusalsDue: string[] = [];
  /** Numbers the `event_id`s we mint. */
  #eventSeq = 0;

  constructor(
    private readonly config: RealtimeConfig,
    private readonly runtime: Runtime,
    private readonly openOptions: S2sOpenOptions,
    events: S2sEvents,
  ) {
    this.#events = shieldEvents(events, (event, error) => runtime.log.warn({ err: messageOf(error), event }, "an s2s event handler threw; ignored"));
    this.audioFormat = openOptions.audioFormat ?? "pcm16";
    const wire = wireFormat(this.audioFormat);
    this.inputSampleRate = wire.rate;
    this.outputSampleRate = wire.rate;
    this.#bytesPerMs = wire.bytesPerMs;
  }

  get droppedAudioBytes(): number {
    return this.#dropped;
  }

  /** The first socket: resolves after `session.updated`. */
  async start(signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.#connect(signal);
    } catch (error) {
      this.#ended = true;
      throw error;
    }
  }

  sendAudio(pcm: Uint8Array): void {
    const link = this.#readyLink();
    if (link === undefined || link.ws.bufferedAmount > MAX_REALTIME_BACKLOG_BYTES) {
      this.#dropped += pcm.byteLength;
      if (!this.#dropping) this.runtime.log.warn({ bytes: pcm.byteLength, reconnecting: link === undefined }, `${VENDOR}: dropping mic audio (backlog or reconnect)`);
      this.#dropping = true;
      return;
    }
    this.#dropping = false;
    const audio = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString("base64");
    this.#send(link, { type: "input_audio_buffer.append", audio });
  }

  createResponse(options: { readonly instructions?: string; readonly outOfBand?: boolean } = {}): void {
    const response: Record<string, unknown> = {};
    if (options.instructions !== undefined) response.instructions = options.instructions;
    if (options.outOfBand === true) {
      // docs/vendors.md (OpenAI Realtime), "Out of band": not written to the conversation, an
      // empty context, and no tools (tool_choice "none" too, so a session-wide forced tool cannot clash).
      Object.assign(response, { conversation: "none", tools: [], tool_choice: "none", input: [], metadata: OOB_METADATA });
    }
    if (options.outOfBand !== true) {
      this.#ask({ response: Object.keys(response).length === 0 ? undefined : response });
      return;
    }
    // Out of band: not in the default conversation, so it never waits for the slot.
    const message = { type: "response.create", response };
    const link = this.#readyLink();
    if (link !== undefined) this.#send(link, message);
    else if (!this.#ended) this.#queuedOutOfBand.push(message);
  }

  /** An in-band response is wanted: it waits behind those held before it, then for the slot. */
  #ask(request: InBandRequest): void {
    if (this.#ended) return;
    this.#hold(request, "last");
    this.#next();
  }

  /** Hold a request. A plain one next to a plain one adds nothing: one response answers the conversation as it stands. */
  #hold(request: InBandRequest, where: "first" | "last"): void {
    const neighbour = where === "first" ? this.#held[0] : this.#held.at(-1);
    if (request.response === undefined && neighbour !== undefined && neighbour.response === undefined) return;
    if (where === "first") this.#held.unshift(request);
    else this.#held.push(request);
  }

  /** idle → requested: the oldest held request goes out, tagged so its `response.created` and any refusal name it. */
  #next(): void {
    const link = this.#readyLink();
    if (link === undefined || this.#slot.state !== "idle") return;
    const request = this.#held.shift();
    if (request === undefined) return;
    const eventId = `${CREATE_EVENT_PREFIX}${++this.#eventSeq}`;
    this.#slot = { state: "requested", request, eventId };
    this.#send(link, { type: "response.create", event_id: eventId, response: { ...request.response, metadata: { [REQUEST_METADATA_KEY]: eventId } } });
  }

  /** An in-band `response.created`: the slot runs it. */
  #inBandStarted(responseId: string, response: Record<string, unknown> | undefined): void {
    const slot = this.#slot;
    if (slot.state === "requested" && str(rec(response, "metadata"), REQUEST_METADATA_KEY) !== slot.eventId) {
      // The service started a response of its own (its VAD) before our request reached it: ours is
      // refused, in whatever words. It goes out again, first in line, after this one's response.done.
      this.runtime.log.debug({ responseId, eventId: slot.eventId }, `${VENDOR}: a response started before ours; asking again after it`);
      this.#refusalsDue.push(slot.eventId);
      this.#hold(slot.request, "first");
    }
    this.#slot = { state: "running", responseId };
  }

  /** An in-band `response.done`: running → idle, and the next held request goes out. */
  #inBandDone(responseId: string): void {
    if (this.#slot.state !== "running" || this.#slot.responseId !== responseId) return;
    this.#slot = IDLE;
    // A refusal is sent when the request arrives, while this response ran: one not seen by now is not coming.
    this.#refusalsDue = [];
    this.#next();
  }

  /**
   * An `error` the adapter expects, whatever its code and message; true when it is one (not reported).
   * `cause` is the `error.event_id` (the client event it answers), when the service names one.
   */
  #expectedError(cause: string | undefined): boolean {
    if (cause?.startsWith(CANCEL_EVENT_PREFIX) === true) {
      // Sent while the response ran, by our count; its response.done crossed it. "It's safe to call
      // `response.cancel` even if no response is in progress" (the SDK's `ResponseCancelEvent`).
      this.runtime.log.debug({ cause }, `${VENDOR}: a cancel crossed the end of its response`);
      return true;
    }
    // A refusal of a request that crossed a response the service started (already held again). One
    // that names no event is taken as the oldest due: a refusal arrives before that response's done.
    const due = cause === undefined ? (this.#refusalsDue.length > 0 ? 0 : -1) : this.#refusalsDue.indexOf(cause);
    if (due >= 0) {
      this.#refusalsDue.splice(due, 1);
      this.runtime.log.debug({ cause }, `${VENDOR}: our response.create was refused while another response ran; asked again after it`);
      return true;
    }
    const slot = this.#slot;
    if (slot.state === "requested" && cause === slot.eventId) {
      // Refused while no response runs: a retry would be refused the same way. Reported (below); the
      // slot is free for the next request.
      this.#slot = IDLE;
      this.#next();
    }
    return false;
  }

  /** A typed user turn: a user message item, then a response (docs/vendors.md (OpenAI Realtime), "Conversation items"). */
  sendText(text: string): void {
    const link = this.#readyLink();
    // While reconnecting the runner has already committed the line, so the history replay carries it.
    if (link !== undefined) this.#send(link, historyItem({ role: "user", text }));
    this.createResponse();
  }

  cancelResponse(responseId?: string): void {
    // Only while the response runs on this socket (the named one; unnamed, the default conversation's):
    // from its response.created to its response.done. While reconnecting it died with the socket.
    const link = this.#readyLink();
    const runs = responseId === undefined ? this.#slot.state === "running" : this.#responses.has(responseId);
    if (link === undefined || !runs) {
      this.runtime.log.debug({ responseId }, `${VENDOR}: no such response running; nothing to cancel`);
      return;
    }
    const eventId = `${CANCEL_EVENT_PREFIX}${++this.#eventSeq}`;
    this.#send(link, { type: "response.cancel", event_id: eventId, ...(responseId === undefined ? {} : { response_id: responseId }) });
  }

  truncate(itemId: string, audioEndMs: number): void {
    const link = this.#readyLink();
    const bytes = this.#itemAudio.get(itemId);
    if (link === undefined || bytes === undefined) {
      this.runtime.log.debug({ itemId }, `${VENDOR}: truncate of an item not on this socket; skipped`);
      return;
    }
    // docs/vendors.md (OpenAI Realtime): an `audio_end_ms` past the item's audio is an error, so clamp to what arrived.
    const receivedMs = Math.floor(bytes / this.#bytesPerMs);
    const end = Math.max(0, Math.min(Math.floor(audioEndMs), receivedMs));
    this.#send(link, { type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: end });
  }

  sendToolResults(results: readonly { readonly callId: string; readonly output: string }[], respond: boolean): void {
    // Kept until a response starts after them: a drop before that re-sends them on the next socket.
    for (const { callId, output } of results) this.#pendingResults.set(callId, output);
    if (respond && results.length > 0) this.#pendingRespond = true;
    const link = this.#readyLink();
    if (link === undefined) return;
    for (const { callId, output } of results) this.#sendToolResult(link, callId, output);
    // docs/vendors.md (OpenAI Realtime), "Conversation items": the model does not continue on its own.
    if (respond) this.#ask({ response: undefined });
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const wasEnded = this.#ended;
    this.#ended = true;
    this.#reconnectTimer?.cancel();
    const link = this.#link;
    this.#link = undefined;
    if (link?.handshake !== undefined) this.#failHandshake(link, new GatewayError("s2s", `${VENDOR}: the session was closed while reconnecting.`));
    else if (link !== undefined) await closeGracefully(link.ws, this.runtime.clock);
    if (!wasEnded) this.#events.closed({ expected: true });
  }

  // --- Connecting ------------------------------------------------------------------------------

  /** Dial, send the one `session.update` after `session.created`, replay; resolves on `session.updated`. */
  #connect(signal: AbortSignal | undefined): Promise<void> {
    const { runtime, config } = this;
    const generation = ++this.#generations;
    runtime.log.debug({ url: config.url, generation }, `${VENDOR} connecting`);
    let ws: WebSocket;
    try {
      // docs/vendors.md (OpenAI Realtime), "URL": Bearer key; GA sends no OpenAI-Beta header.
      ws = runtime.connect(config.url, { headers: { Authorization: `Bearer ${config.apiKey}` } });
    } catch (error) {
      return Promise.reject(new GatewayError("s2s", `${VENDOR} connection failed: ${messageOf(error)}`, { fatal: true, cause: error }));
    }
    const link: Link = { ws, generation, updateSent: false, ready: false, socketError: undefined, handshake: undefined };
    this.#link = link;
    ws.on("error", (error: Error) => {
      link.socketError ??= error;
      runtime.log.debug({ err: error.message }, `${VENDOR} socket error`);
    });
    ws.on("unexpected-response", (_request, response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      response.resume();
      this.#failHandshake(link, upgradeRefusal(status, config.keyVariable));
      ws.terminate();
    });
    ws.on("message", (data: RawData, isBinary: boolean) => this.#onFrame(link, data, isBinary));
    ws.on("close", (code: number, reason: Buffer) => this.#onClose(link, code, reason.toString()));

    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => this.#failHandshake(link, abortReason(signal));
      const timer = runtime.clock.setTimeout(
        () => this.#failHandshake(link, new GatewayError("s2s", `${VENDOR} did not confirm the session within ${runtime.openTimeoutMs} ms.`)),
        runtime.openTimeoutMs,
      );
      const settled = (): void => {
        timer.cancel();
        signal?.removeEventListener("abort", onAbort);
      };
      link.handshake = {
        resolve: () => {
          settled();
          resolve();
        },
        reject: (error) => {
          settled();
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted === true) onAbort();
    });
  }

  /** The handshake failed (refusal, timeout, abort, close, setup error): drop the socket — never a half-open one. */
  #failHandshake(link: Link, error: Error): void {
    const handshake = link.handshake;
    if (handshake === undefined) return;
    link.handshake = undefined;
    if (this.#link === link) this.#link = undefined;
    link.ws.terminate();
    handshake.reject(error);
  }

  /** `session.updated`: replay the conversation, then the socket is usable. */
  #onReady(link: Link): void {
    link.ready = true;
    this.#replay(link);
    const handshake = link.handshake;
    link.handshake = undefined;
    handshake?.resolve();
  }

  /**
   * What a new socket needs (docs/vendors.md (OpenAI Realtime), "Conversation items"): the
   * committed lines in order, then each tool result not yet followed by a response (its call
   * re-declared first, since this conversation never saw it), then the follow-up response and any
   * asked for while reconnecting.
   */
  #replay(link: Link): void {
    let history: readonly S2sHistoryItem[] = [];
    try {
      history = this.openOptions.history();
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error) }, `${VENDOR}: history() threw; the conversation is not replayed`);
    }
    for (const item of history) this.#send(link, historyItem(item));
    for (const [callId, output] of this.#pendingResults) this.#sendToolResult(link, callId, output);
    for (const message of this.#queuedOutOfBand.splice(0)) this.#send(link, message);
    // Everything is in the conversation now: a plain response answers it all (held ones coalesce with it).
    if (this.#pendingRespond && this.#pendingResults.size > 0) this.#hold({ response: undefined }, "first");
    this.#next();
  }

  #sendToolResult(link: Link, callId: string, output: string): void {
    const call = this.#calls.get(callId);
    if (call !== undefined && call.generation !== link.generation) {
      // [INF] a function_call_output needs its function_call in the conversation.
      this.#send(link, { type: "conversation.item.create", item: { type: "function_call", call_id: callId, name: call.name, arguments: call.arguments } });
    }
    this.#send(link, { type: "conversation.item.create", item: { type: "function_call_output", call_id: callId, output } });
  }

  #onClose(link: Link, code: number, reason: string): void {
    if (link.handshake !== undefined) {
      this.#failHandshake(link, handshakeClose(code, reason, link.socketError));
      return;
    }
    if (link !== this.#link) return; // abandoned, or closed by close()
    this.#link = undefined;
    if (this.#ended) return;
    this.#lost();
    const detail = `${link.socketError?.message ?? "socket closed"} (${code}${reason === "" ? "" : ` ${reason}`})`;
    if (TRANSIENT_CLOSE_CODES.has(code)) {
      this.runtime.log.warn({ code, reason }, `${VENDOR} connection dropped; reconnecting`);
      this.#lastFailure = detail;
      this.#scheduleReconnect();
      return;
    }
    // 1000 we did not ask for, 1008 policy, 4xxx: a retry would be refused the same way.
    const hint = code >= 4000 ? `; check ${this.config.keyVariable}` : "";
    this.#giveUp(new GatewayError("s2s", `${VENDOR} closed the connection: ${detail}${hint}`, { fatal: true }));
  }

  /** The socket is gone: what lived on it (responses in flight, partial transcripts, item audio) ends with it. */
  #lost(): void {
    for (const [responseId, outOfBand] of this.#responses) this.#events.responseDone({ responseId, outOfBand, status: "failed" });
    this.#responses.clear();
    // A response asked for and not started is asked for again on the next socket, first in line.
    if (this.#slot.state === "requested") this.#hold(this.#slot.request, "first");
    this.#slot = IDLE;
    this.#refusalsDue = [];
    this.#itemAudio.clear();
    this.#userText.clear();
    this.#callItems.clear();
  }

  #scheduleReconnect(): void {
    const delay = this.runtime.reconnectDelaysMs[this.#attempts];
    if (delay === undefined) {
      const attempts = this.#attempts;
      this.#giveUp(new GatewayError("connection", `${VENDOR}: the connection was lost and ${attempts} reconnect attempts failed (${this.#lastFailure}).`, { fatal: true }));
      return;
    }
    this.#attempts++;
    this.#reconnectTimer = this.runtime.clock.setTimeout(() => {
      this.#reconnectTimer = undefined;
      void this.#reconnect();
    }, delay);
  }

  async #reconnect(): Promise<void> {
    if (this.#ended) return;
    try {
      await this.#connect(undefined);
      this.runtime.log.debug({ attempt: this.#attempts }, `${VENDOR} reconnected`);
      this.#events.reconnected?.();
    } catch (error) {
      if (this.#ended) return;
      this.#lastFailure = messageOf(error);
      this.runtime.log.warn({ err: this.#lastFailure, attempt: this.#attempts }, `${VENDOR} reconnect failed`);
      // A refused key (or a rejected setup) will not get better by retrying.
      if (error instanceof GatewayError && error.fatal) this.#giveUp(error);
      else this.#scheduleReconnect();
    }
  }

  /** Gone for good: one fatal error, then `closed({expected:false})`; no socket left behind. */
  #giveUp(error: GatewayError): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reconnectTimer?.cancel();
    const link = this.#link;
    this.#link = undefined;
    link?.ws.terminate();
    this.#events.error(error, { fatal: true });
    this.#events.closed({ expected: false });
  }

  // --- Frames ----------------------------------------------------------------------------------

  #readyLink(): Link | undefined {
    const link = this.#link;
    return link?.ready === true && link.ws.readyState === WebSocket.OPEN ? link : undefined;
  }

  #send(link: Link, message: object): void {
    if (link.ws.readyState !== WebSocket.OPEN) return;
    try {
      link.ws.send(JSON.stringify(message));
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error) }, `${VENDOR}: message not sent`);
    }
  }

  #onFrame(link: Link, data: RawData, isBinary: boolean): void {
    if (link !== this.#link) return;
    const text = rawText(data);
    if (isBinary) {
      this.runtime.log.warn({ bytes: text.length }, `${VENDOR} sent a binary frame; ignored`);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error), sample: text.slice(0, 200) }, `${VENDOR} sent malformed JSON; ignored`);
      return;
    }
    const type = isRecord(message) ? message.type : undefined;
    if (!isRecord(message) || typeof type !== "string") {
      this.runtime.log.warn({ sample: text.slice(0, 200) }, `${VENDOR} sent a message without a type; ignored`);
      return;
    }
    if (link.ready) this.#onEvent(link, type, message);
    else this.#onHandshakeEvent(link, type, message);
  }

  #onHandshakeEvent(link: Link, type: string, message: Record<string, unknown>): void {
    if (type === "session.created" && !link.updateSent) {
      link.updateSent = true;
      this.#send(link, sessionUpdate(this.config, this.openOptions.setup, this.audioFormat));
    } else if (type === "session.updated" && link.updateSent) {
      this.#onReady(link);
    } else if (type === "error") {
      // The setup itself was refused (a bad voice, tool schema, …): retrying sends the same.
      this.#failHandshake(link, new GatewayError("s2s", `${VENDOR} refused the session setup: ${errorText(message)}`, { fatal: true }));
    }
  }

  /** Server events (docs/vendors.md (OpenAI Realtime), "Server events": the GA names and the beta ones still seen). */
  #onEvent(link: Link, type: string, message: Record<string, unknown>): void {
    const events = this.#events;
    switch (type) {
      case "input_audio_buffer.speech_started":
        this.#attempts = 0; // the link works: the reconnect budget starts over
        events.speechStarted();
        return;
      case "input_audio_buffer.speech_stopped":
        events.speechStopped();
        return;
      case "conversation.item.input_audio_transcription.delta": {
        const itemId = str(message, "item_id") ?? "";
        const text = (this.#userText.get(itemId) ?? "") + (str(message, "delta") ?? "");
        this.#userText.set(itemId, text);
        events.userTranscript(text, { final: false });
        return;
      }
      case "conversation.item.input_audio_transcription.completed": {
        const itemId = str(message, "item_id") ?? "";
        this.#userText.delete(itemId);
        events.userTranscript(str(message, "transcript") ?? "", { final: true });
        return;
      }
      case "conversation.item.input_audio_transcription.failed":
        this.#userText.delete(str(message, "item_id") ?? "");
        this.runtime.log.warn({ err: errorText(message) }, `${VENDOR}: input transcription failed`);
        return;
      case "response.created": {
        const response = rec(message, "response");
        const responseId = str(response, "id");
        if (responseId === undefined) return;
        const outOfBand = isOutOfBand(response);
        this.#responses.set(responseId, outOfBand);
        this.#attempts = 0;
        if (!outOfBand) this.#inBandStarted(responseId, response);
        // Tool results sent so far are in the context of this response: delivered.
        if (!outOfBand) this.#toolResultsDelivered();
        events.responseStarted({ responseId, outOfBand });
        return;
      }
      case "response.output_item.added": {
        const item = rec(message, "item");
        const itemId = str(item, "id");
        const name = str(item, "name");
        if (str(item, "type") === "function_call" && itemId !== undefined && name !== undefined) this.#callItems.set(itemId, name);
        return;
      }
      case "response.output_audio.delta":
      case "response.audio.delta": {
        const delta = str(message, "delta");
        if (delta === undefined) return;
        const pcm = Buffer.from(delta, "base64");
        const itemId = str(message, "item_id") ?? "";
        this.#itemAudio.set(itemId, (this.#itemAudio.get(itemId) ?? 0) + pcm.byteLength);
        events.audio(pcm, { responseId: str(message, "response_id") ?? "", itemId });
        return;
      }
      case "response.output_audio_transcript.delta":
      case "response.audio_transcript.delta": {
        const delta = str(message, "delta");
        if (delta !== undefined && delta !== "") events.agentTranscript(delta, { responseId: str(message, "response_id") ?? "", itemId: str(message, "item_id") ?? "" });
        return;
      }
      case "response.function_call_arguments.done": {
        const callId = str(message, "call_id");
        const itemId = str(message, "item_id") ?? "";
        const name = str(message, "name") ?? this.#callItems.get(itemId);
        if (callId === undefined || name === undefined) {
          this.runtime.log.warn({ callId, itemId }, `${VENDOR}: a function call without call_id or name; ignored`);
          return;
        }
        const raw = str(message, "arguments") ?? "";
        this.#calls.set(callId, { name, arguments: raw, generation: link.generation });
        events.toolCall({ callId, name, args: parseArgs(raw), responseId: str(message, "response_id") ?? "" });
        return;
      }
      case "response.done": {
        const response = rec(message, "response");
        const responseId = str(response, "id");
        if (responseId === undefined) return;
        const outOfBand = this.#responses.get(responseId) ?? isOutOfBand(response);
        this.#responses.delete(responseId);
        const usage = readUsage(rec(response, "usage"));
        events.responseDone({ responseId, outOfBand, status: readStatus(response?.status), ...(usage === undefined ? {} : { usage }) });
        if (!outOfBand) this.#inBandDone(responseId);
        return;
      }
      case "error": {
        if (this.#expectedError(str(rec(message, "error"), "event_id"))) return;
        events.error(new GatewayError("s2s", `${VENDOR}: ${errorText(message)}`), { fatal: false });
        return;
      }
      default:
        return;
    }
  }

  #toolResultsDelivered(): void {
    for (const callId of this.#pendingResults.keys()) this.#calls.delete(callId);
    this.#pendingResults.clear();
    this.#pendingRespond = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rec(object: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
  const value = object?.[key];
  return isRecord(value) ? value : undefined;
}

function str(object: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = object?.[key];
  return typeof value === "string" ? value : undefined;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString("utf8");
}

/** Ours carry our metadata; any response with `conversation_id: null` is out of band (docs/vendors.md (OpenAI Realtime)). */
function isOutOfBand(response: Record<string, unknown> | undefined): boolean {
  return response?.conversation_id === null || str(rec(response, "metadata"), "switchboard") === OOB_METADATA.switchboard;
}

function readStatus(status: unknown): "completed" | "cancelled" | "failed" | "incomplete" {
  return status === "completed" || status === "cancelled" || status === "incomplete" ? status : "failed";
}

function readUsage(usage: Record<string, unknown> | undefined): { inputTokens: number; outputTokens: number; totalTokens: number } | undefined {
  if (usage === undefined) return undefined;
  const count = (key: string): number => {
    const value = usage[key];
    return typeof value === "number" ? value : 0;
  };
  const inputTokens = count("input_tokens");
  const outputTokens = count("output_tokens");
  return { inputTokens, outputTokens, totalTokens: typeof usage.total_tokens === "number" ? usage.total_tokens : inputTokens + outputTokens };
}

/** Arguments are a JSON string (docs/vendors.md (OpenAI Realtime)); the raw string when they are not JSON. */
function parseArgs(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** `error {type, code, message}` as one line. */
function errorText(message: Record<string, unknown>): string {
  const error = rec(message, "error");
  const text = str(error, "message") ?? "unknown error";
  const code = str(error, "code") ?? str(error, "type");
  return code === undefined ? text : `${text} (${code})`;
}

function abortReason(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new GatewayError("s2s", `${VENDOR}: opening the session was aborted.`);
}

/** An HTTP answer at upgrade: 401/403 is the key (fatal, naming the variable; the body is left out, it may echo the key). */
function upgradeRefusal(status: number, keyVariable: string): GatewayError {
  if (status === 401 || status === 403) return new GatewayError("s2s", `${VENDOR} refused the API key (HTTP ${status}): check ${keyVariable}.`, { fatal: true });
  const retryable = status >= 500 || status === 408 || status === 429;
  return new GatewayError("s2s", `${VENDOR} refused the connection (HTTP ${status}).`, { fatal: !retryable });
}

/** A close before `session.updated` that was not an HTTP refusal. */
function handshakeClose(code: number, reason: string, socketError: Error | undefined): GatewayError {
  const detail = socketError?.message ?? `closed (${code}${reason === "" ? "" : ` ${reason}`})`;
  return new GatewayError("s2s", `${VENDOR} connection failed: ${detail}`, { fatal: !TRANSIENT_CLOSE_CODES.has(code), ...(socketError === undefined ? {} : { cause: socketError }) });
}

/** Close cleanly, or drop the socket if the close handshake takes too long. */
function closeGracefully(ws: WebSocket, clock: Clock): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) {
      resolve();
      return;
    }
    const timer = clock.setTimeout(() => {
      ws.terminate();
      resolve();
    }, CLOSE_TIMEOUT_MS);
    ws.once("close", () => {
      timer.cancel();
      resolve();
    });
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  });
}

