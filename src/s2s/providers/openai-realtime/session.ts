/**
 * OpenAI Realtime: the conversation on the session's sockets (the socket itself: `connection.ts`).
 * Server events become port events; each new socket gets the conversation so far, plus any tool
 * results whose follow-up response never started, so each call is answered exactly once. One
 * in-band response at a time: `in-band.ts`.
 */
import { GatewayError, messageOf } from "../../../errors.js";
import { sendAudioOrDrop } from "../../../providers/ws-backlog.js";
import { ServiceAudio } from "../../../audio/service-audio.js";
import { SmallMap } from "../../../small-map.js";
import { base64TextOf, type AudioPayload } from "../../../audio/audio-payload.js";
import { Base64Frame } from "../../../audio/base64-frame.js";
import { recordAt, stringAt } from "../../../providers/ws-frames.js";
import type { S2sAudioFormat, S2sEvents, S2sHistoryItem, S2sOpenOptions, S2sSegment, S2sSession, S2sSetup } from "../../s2s-port.js";
import { ShieldedEvents } from "../../shield-events.js";
import { VENDOR, wireFormat, type RealtimeConfig } from "./config.js";
import { RealtimeConnection, type ConnectionHooks, type Link, type Runtime } from "./connection.js";
import { InBandResponses, type InBandRequest } from "./in-band.js";
import { ItemAudio } from "./item-audio.js";
import { errorText, historyItem, isOutOfBand, noteItem, OOB_METADATA, parseArgs, readStatus, readUsage, segmentUpdate, sessionUpdate } from "./wire.js";
import { spread } from "../../../spread.js";

/** `input_audio_buffer.append`, every 20 ms of a call: written around a template (audio/base64-frame.ts). */
const APPEND = new Base64Frame((audio) => ({ type: "input_audio_buffer.append", audio }));

/** The session, plus what it dropped. */
export interface OpenAiRealtimeSession extends S2sSession {
  /** Mic audio dropped: over the backlog limit, or while reconnecting. */
  readonly droppedAudioBytes: number;
  /** `conversation.item.delete`: the service removes items a client names. */
  deleteItem(itemId: string): void;
  /** `conversation.item.create`: a line added without a response. */
  remember(item: S2sHistoryItem): void;
  /** A `system` message item, then an in-band response. */
  note(text: string): boolean;
}

interface ToolCallRecord {
  readonly name: string;
  readonly arguments: string;
  readonly generation: number;
}

export class RealtimeSession implements OpenAiRealtimeSession {
  readonly audioFormat: S2sAudioFormat;
  readonly inputSampleRate: number;
  readonly outputSampleRate: number;
  readonly #bytesPerMs: number;
  readonly #events: S2sEvents;
  readonly #config: RealtimeConfig;
  readonly #conn: RealtimeConnection<RealtimeSession>;
  readonly #inBand: InBandResponses;
  /** The model's audio deltas, decoded strictly. */
  readonly #audio: ServiceAudio;
  #closing: Promise<void> | undefined;
  #dropped = 0;
  #dropping = false;
  /** Responses started and not done: outOfBand per id. */
  readonly #responses = new SmallMap<string, boolean>();
  /** Audio bytes received per assistant item, for clamping `truncate`. */
  readonly #itemAudio = new ItemAudio();
  /** Interim user transcript per input item. */
  readonly #userText = new SmallMap<string, string>();
  /** Caller items transcribed on this socket: the ones `deleteItem` may name. */
  readonly #userItems = new Set<string>();
  /** `function_call` items by item id (their name, should `.done` omit it). */
  readonly #callItems = new Map<string, string>();
  /** Tool calls made, by call_id (re-declared before their result on a newer socket). */
  readonly #calls = new Map<string, ToolCallRecord>();
  /** Results sent whose follow-up response has not started yet, by call_id (none on most turns). */
  readonly #pendingResults = new SmallMap<string, string>();
  #pendingRespond = false;
  /** Notes sent and not yet followed by a response: a drop before that re-sends them on the next socket (the replay carries only committed lines). */
  readonly #pendingNotes: string[] = [];
  /** Out-of-band `response.create`s asked for while reconnecting (they never wait for the slot). */
  #queuedOutOfBand: object[] = [];
  /** What each new socket is set up with: the opening setup, with the latest hand-off's agent in it. */
  #setup: S2sSetup;
  /** A hand-off came while no socket was ready: the next one to become ready is told it (its setup may predate it). */
  #segmentPending = false;

  constructor(
    config: RealtimeConfig,
    private readonly runtime: Runtime,
    private readonly openOptions: S2sOpenOptions,
    events: S2sEvents,
  ) {
    this.#events = new ShieldedEvents(events, (event, error) => runtime.log.warn({ err: messageOf(error), event }, "an s2s event handler threw; ignored"));
    this.audioFormat = openOptions.audioFormat ?? "pcm16";
    const wire = wireFormat(this.audioFormat);
    this.inputSampleRate = wire.rate;
    this.outputSampleRate = wire.rate;
    this.#bytesPerMs = wire.bytesPerMs;
    this.#setup = openOptions.setup;
    this.#config = config;
    this.#conn = new RealtimeConnection(config, runtime, RealtimeSession.#HOOKS, this);
    this.#audio = new ServiceAudio(VENDOR, runtime.log, () => runtime.clock.now());
    this.#inBand = new InBandResponses(
      {
        ready: () => this.#conn.readyLink() !== undefined,
        send: (message) => {
          const link = this.#conn.readyLink();
          if (link !== undefined) this.#conn.send(link, message);
        },
      },
      runtime.log,
    );
  }

  /** What every session's connection calls back into, with the session it belongs to (connection.ts `ConnectionHooks`). */
  static readonly #HOOKS: ConnectionHooks<RealtimeSession> = {
    sessionUpdate: (s) => sessionUpdate(s.#config, s.#setup, s.audioFormat),
    ready: (s, link) => s.#replay(link),
    event: (s, link, type, message) => s.#onEvent(link, type, message),
    lost: (s) => s.#lost(),
    reconnected: (s) => s.#events.reconnected?.(),
    gaveUp: (s, error) => {
      s.#events.error(error, { fatal: true });
      s.#events.closed({ expected: false });
    },
  };

  get droppedAudioBytes(): number {
    return this.#dropped;
  }

  /** The first socket: resolves after `session.updated`. */
  start(signal: AbortSignal | undefined): Promise<void> {
    return this.#conn.start(signal);
  }

  sendAudio(audio: AudioPayload): void {
    const link = this.#conn.readyLink();
    if (link === undefined || sendAudioOrDrop(link.ws, APPEND.write(base64TextOf(audio)), audio.byteLength) > 0) {
      this.#dropped += audio.byteLength;
      if (!this.#dropping) this.runtime.log.warn({ bytes: audio.byteLength, reconnecting: link === undefined }, `${VENDOR}: dropping mic audio (backlog or reconnect)`);
      this.#dropping = true;
      return;
    }
    this.#dropping = false;
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
    const link = this.#conn.readyLink();
    if (link !== undefined) this.#conn.send(link, message);
    else if (!this.#conn.ended) this.#queuedOutOfBand.push(message);
  }

  #ask(request: InBandRequest): void {
    if (!this.#conn.ended) this.#inBand.ask(request);
  }

  /** A typed user turn: a user message item, then a response (docs/vendors.md (OpenAI Realtime), "Conversation items"). */
  sendText(text: string): void {
    const link = this.#conn.readyLink();
    // While reconnecting the runner has already committed the line, so the history replay carries it.
    if (link !== undefined) this.#conn.send(link, historyItem({ role: "user", text }));
    this.createResponse();
  }

  cancelResponse(responseId?: string): void {
    // Only while the response runs on this socket (the named one; unnamed, the default conversation's):
    // from its response.created to its response.done. While reconnecting it died with the socket.
    const link = this.#conn.readyLink();
    const runs = responseId === undefined ? this.#inBand.running : this.#responses.has(responseId);
    if (link === undefined || !runs) {
      this.runtime.log.debug({ responseId }, `${VENDOR}: no such response running; nothing to cancel`);
      return;
    }
    const eventId = this.#inBand.cancelEventId();
    this.#conn.send(link, { type: "response.cancel", event_id: eventId, ...(responseId === undefined ? {} : { response_id: responseId }) });
  }

  truncate(itemId: string, audioEndMs: number): void {
    const link = this.#conn.readyLink();
    const bytes = this.#itemAudio.get(itemId);
    if (link === undefined || bytes === undefined) {
      this.runtime.log.debug({ itemId }, `${VENDOR}: truncate of an item not on this socket; skipped`);
      return;
    }
    // docs/vendors.md (OpenAI Realtime): an `audio_end_ms` past the item's audio is an error, so clamp to what arrived.
    const receivedMs = Math.floor(bytes / this.#bytesPerMs);
    const end = Math.max(0, Math.min(Math.floor(audioEndMs), receivedMs));
    this.#conn.send(link, { type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: end });
  }

  deleteItem(itemId: string): void {
    const link = this.#conn.readyLink();
    // Items live on their socket: one from before a reconnect is not in this conversation (the replay carries only committed lines).
    if (link === undefined || (this.#itemAudio.get(itemId) === undefined && !this.#userItems.has(itemId))) {
      this.runtime.log.debug({ itemId }, `${VENDOR}: delete of an item not on this socket; skipped`);
      return;
    }
    this.#itemAudio.delete(itemId);
    this.#userItems.delete(itemId);
    this.#conn.send(link, { type: "conversation.item.delete", item_id: itemId });
  }

  remember(item: S2sHistoryItem): void {
    // While reconnecting there is nothing to add to: the replay carries the committed lines.
    const link = this.#conn.readyLink();
    if (link !== undefined) this.#conn.send(link, historyItem(item));
  }

  /** docs/vendors.md (OpenAI Realtime), "Conversation items": a `system` message item, then an in-band response. */
  note(text: string): boolean {
    const link = this.#conn.readyLink();
    if (link === undefined) return false;
    this.#pendingNotes.push(text);
    this.#conn.send(link, noteItem(text));
    this.#ask({ response: undefined });
    return true;
  }

  sendToolResults(results: readonly { readonly callId: string; readonly output: string }[], respond: boolean): void {
    // Kept until a response starts after them: a drop before that re-sends them on the next socket.
    for (const { callId, output } of results) this.#pendingResults.set(callId, output);
    if (respond && results.length > 0) this.#pendingRespond = true;
    const link = this.#conn.readyLink();
    if (link === undefined) return;
    for (const { callId, output } of results) this.#sendToolResult(link, callId, output);
    // docs/vendors.md (OpenAI Realtime), "Conversation items": the model does not continue on its own.
    if (respond) this.#ask({ response: undefined });
  }

  /** A hand-off: one `session.update` with the new agent's part; a socket set up later gets it in its own. */
  update(segment: S2sSegment): void {
    this.#setup = spread(this.#setup, segment);
    const link = this.#conn.readyLink();
    if (link !== undefined) this.#conn.send(link, segmentUpdate(segment));
    this.#segmentPending = link === undefined;
  }

  close(): Promise<void> {
    this.#closing ??= this.#conn.close().then((live) => {
      if (live) this.#events.closed({ expected: true });
    });
    return this.#closing;
  }

  #sendToolResult(link: Link, callId: string, output: string): void {
    const call = this.#calls.get(callId);
    if (call !== undefined && call.generation !== link.generation) {
      // [INF] a function_call_output needs its function_call in the conversation.
      this.#conn.send(link, { type: "conversation.item.create", item: { type: "function_call", call_id: callId, name: call.name, arguments: call.arguments } });
    }
    this.#conn.send(link, { type: "conversation.item.create", item: { type: "function_call_output", call_id: callId, output } });
  }

  /** The socket is gone: what lived on it (responses in flight, partial transcripts, item audio) ends with it. */
  #lost(): void {
    for (const [responseId, outOfBand] of this.#responses.entries()) this.#events.responseDone({ responseId, outOfBand, status: "failed" });
    this.#responses.clear();
    this.#inBand.lost();
    this.#itemAudio.clear();
    this.#userText.clear();
    this.#userItems.clear();
    this.#callItems.clear();
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
    if (this.#segmentPending) this.#conn.send(link, segmentUpdate(this.#setup));
    this.#segmentPending = false;
    for (const item of history) this.#conn.send(link, historyItem(item));
    for (const [callId, output] of this.#pendingResults.entries()) this.#sendToolResult(link, callId, output);
    for (const text of this.#pendingNotes) this.#conn.send(link, noteItem(text));
    for (const message of this.#queuedOutOfBand.splice(0)) this.#conn.send(link, message);
    // Everything is in the conversation now: a plain response answers it all (held ones coalesce with it).
    if ((this.#pendingRespond && this.#pendingResults.size > 0) || this.#pendingNotes.length > 0) this.#inBand.hold({ response: undefined }, "first");
    this.#inBand.next();
  }

  /** Server events (docs/vendors.md (OpenAI Realtime), "Server events": the GA names and the beta ones still seen). */
  #onEvent(link: Link, type: string, message: Record<string, unknown>): void {
    const events = this.#events;
    switch (type) {
      case "input_audio_buffer.speech_started":
        this.#conn.healthy();
        events.speechStarted();
        return;
      case "input_audio_buffer.speech_stopped":
        events.speechStopped();
        return;
      case "conversation.item.input_audio_transcription.delta": {
        const itemId = stringAt(message, "item_id") ?? "";
        const text = (this.#userText.get(itemId) ?? "") + (stringAt(message, "delta") ?? "");
        this.#userText.set(itemId, text);
        this.#userItems.add(itemId);
        events.userTranscript(text, { final: false, itemId });
        return;
      }
      case "conversation.item.input_audio_transcription.completed": {
        const itemId = stringAt(message, "item_id") ?? "";
        this.#userText.delete(itemId);
        this.#userItems.add(itemId);
        events.userTranscript(stringAt(message, "transcript") ?? "", { final: true, itemId });
        return;
      }
      case "conversation.item.input_audio_transcription.failed":
        this.#userText.delete(stringAt(message, "item_id") ?? "");
        this.runtime.log.warn({ err: errorText(message) }, `${VENDOR}: input transcription failed`);
        return;
      case "response.created": {
        const response = recordAt(message, "response");
        const responseId = stringAt(response, "id");
        if (responseId === undefined) return;
        const outOfBand = isOutOfBand(response);
        this.#responses.set(responseId, outOfBand);
        this.#conn.healthy();
        if (!outOfBand) this.#inBand.started(responseId, response);
        // Tool results and notes sent so far are in the context of this response: delivered.
        if (!outOfBand) this.#contextDelivered();
        events.responseStarted({ responseId, outOfBand });
        return;
      }
      case "response.output_item.added": {
        const item = recordAt(message, "item");
        const itemId = stringAt(item, "id");
        const name = stringAt(item, "name");
        if (stringAt(item, "type") === "function_call" && itemId !== undefined && name !== undefined) this.#callItems.set(itemId, name);
        return;
      }
      case "response.output_audio.delta":
      case "response.audio.delta": {
        const delta = stringAt(message, "delta");
        if (delta === undefined) return;
        const itemId = stringAt(message, "item_id") ?? "";
        const pcm = this.#audio.decode(delta, { itemId });
        if (pcm === undefined) return;
        this.#itemAudio.add(itemId, pcm.byteLength);
        events.audio(pcm, { responseId: stringAt(message, "response_id") ?? "", itemId });
        return;
      }
      case "response.output_audio_transcript.delta":
      case "response.audio_transcript.delta": {
        const delta = stringAt(message, "delta");
        if (delta !== undefined && delta !== "") events.agentTranscript(delta, { responseId: stringAt(message, "response_id") ?? "", itemId: stringAt(message, "item_id") ?? "" });
        return;
      }
      case "response.function_call_arguments.done": {
        const callId = stringAt(message, "call_id");
        const itemId = stringAt(message, "item_id") ?? "";
        const name = stringAt(message, "name") ?? this.#callItems.get(itemId);
        if (callId === undefined || name === undefined) {
          this.runtime.log.warn({ callId, itemId }, `${VENDOR}: a function call without call_id or name; ignored`);
          return;
        }
        const raw = stringAt(message, "arguments") ?? "";
        this.#calls.set(callId, { name, arguments: raw, generation: link.generation });
        events.toolCall({ callId, name, args: parseArgs(raw), responseId: stringAt(message, "response_id") ?? "" });
        return;
      }
      case "response.done": {
        const response = recordAt(message, "response");
        const responseId = stringAt(response, "id");
        if (responseId === undefined) return;
        const outOfBand = this.#responses.get(responseId) ?? isOutOfBand(response);
        this.#responses.delete(responseId);
        const usage = readUsage(recordAt(response, "usage"));
        events.responseDone({ responseId, outOfBand, status: readStatus(response?.status), ...(usage === undefined ? {} : { usage }) });
        if (!outOfBand) this.#inBand.done(responseId);
        return;
      }
      case "error": {
        if (this.#inBand.expectedError(stringAt(recordAt(message, "error"), "event_id"))) return;
        events.error(new GatewayError("s2s", `${VENDOR}: ${errorText(message)}`), { fatal: false });
        return;
      }
      default:
        return;
    }
  }

  #contextDelivered(): void {
    if (this.#pendingResults.size > 0) {
      for (const callId of this.#pendingResults.keys()) this.#calls.delete(callId);
      this.#pendingResults.clear();
    }
    this.#pendingRespond = false;
    this.#pendingNotes.length = 0;
  }
}
