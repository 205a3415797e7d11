/**
 * One Realtime connection bound to one gateway session (docs/realtime.md "Design"): the explicit
 * state machine that turns the session's events (client protocol v1, in the link's paced order)
 * into Realtime server events, and Realtime client events into the session's commands. The
 * session decides everything an agent decides — turn-taking, barge-in, tools, tool messages, what
 * was heard — exactly as on `/websocket`; this maps its story onto Realtime's, and nothing else.
 * Pure: no sockets, no timers; ids come from an injected counter.
 */
import type { EventBody } from "../events.js";
import { MAX_USER_TEXT_CHARS, type SessionCommand } from "../transport/protocol.js";
import type { RealtimeClientEvent, RealtimeErrorBody } from "./client-events.js";
import { ClientTools, clientToolRefusal, type ClientToolSpec } from "./client-tools.js";
import { OutOfBandResponses } from "./out-of-band.js";
import { ReplyAudio } from "./reply-truncation.js";
import { realtimeAudioMs } from "./audio-format.js";
import { InputAudioBuffer, type InputRefusal } from "./input-buffer.js";
import { applySessionUpdate, bufferEventRefusal, initialSettings, shownTurnDetection, takesPushToTalk, type AgentTurns, type RealtimeSettings } from "./session-settings.js";
import * as server from "./server-events.js";
import type { ConversationItem, MessageItem, Modality, RealtimeServerEvent, ResponseStatus, StatusDetails } from "./server-events.js";
import { appendedText } from "./text-deltas.js";
import type { ReplyUsage } from "./usage.js";

/**
 * - `starting`: the socket is open, the session not yet configured (no `session.created` yet);
 * - `idle`: configured, no response open;
 * - `responding`: one response open (its item and content part added, deltas flowing);
 * - `cancelling`: the session cancelled a voice response on its own (a barge-in, as a rule): its
 *   `done` events wait for the `speech.started` the session releases right after, so the client
 *   reads `speech_started` first, as the API sends them (the Agents SDK truncates the item it is
 *   playing only then); `settle()`, which the link calls once the session's emits are over, ends it
 *   when none comes;
 * - `closed`: the session or socket ended; nothing more is sent.
 */
export type BindingState = "starting" | "idle" | "responding" | "cancelling" | "closed";

const TRANSITIONS: Readonly<Record<BindingState, readonly BindingState[]>> = {
  starting: ["idle", "closed"],
  idle: ["responding", "closed"],
  responding: ["idle", "cancelling", "closed"],
  cancelling: ["idle", "closed"],
  closed: [],
};

/** What the link hands the session for a client event. */
export type SessionInput = { readonly kind: "command"; readonly command: SessionCommand } | { readonly kind: "audio"; readonly chunk: Uint8Array };

/** Typed user messages waiting for `response.create`: at most this many, and `MAX_USER_TEXT_CHARS` in all (client-events.ts). */
export const MAX_PENDING_ITEMS = 8;

/** The items `conversation.item.retrieve` can find: the most recent this many (older ones are forgotten). */
export const MAX_REMEMBERED_ITEMS = 64;

interface OpenResponse {
  readonly id: string;
  readonly item: { readonly id: string };
  /** Its message item was added (a response opened by a client tool's call has none). */
  message: boolean;
  /** The item before its message in the conversation. */
  readonly previous: string | null;
  /** The session's latest snapshot of the reply (`agent-transcript.updated`). */
  snapshot: string;
  /** The tool messages said during the reply (`tool.message`): an s2s agent speaks them out of band, outside its snapshot. */
  readonly toolLines: string[];
  /** What the client is shown: tool lines the snapshot does not hold, then the snapshot. */
  text: string;
  /** Text sent as deltas: a prefix of `text` unless a snapshot rewrote earlier text. */
  sent: string;
  /** The reply as recorded (`agent-transcript.committed`), when the session said so. */
  committed?: string;
  /** The client asked to cancel it (`response.cancel`). */
  cancelRequested: boolean;
  /** Its audio has started (its format is then fixed: session-settings.ts). */
  audioSent?: boolean;
}

export interface BindingOptions {
  /** What the agent speaks through: `text` for a text agent, `audio` for pipeline and s2s. */
  readonly modality: Modality;
  /** The agent's name, shown as the session's `model`. */
  readonly agent: string;
  /** Send one Realtime server event to the client (in order). */
  readonly send: (event: RealtimeServerEvent) => void;
  /** A fresh id with the given prefix (`event`, `item`, `resp`). */
  readonly id: (prefix: string) => string;
  /** The agent's clientTools (its and its roster's), by the name the model calls: the client runs those it declares (client-tools.ts). */
  readonly clientTools?: ReadonlyMap<string, ClientToolSpec>;
  /** The agent's `usageLimits.totalTokens`, if it sets one: sent as `rate_limits.updated` (usage.ts). */
  readonly tokenLimit?: number;
  /** The gateway calls the agent's model (text, pipeline): out-of-band responses are served. Not for s2s. */
  readonly outOfBand?: boolean;
  /** The agent's `turnTaking.detection` (default `auto`): `manual` takes Realtime's push-to-talk (manual-turns.ts). */
  readonly turns?: AgentTurns;
  /** The client's audio formats changed (an accepted `session.update`): the link converts from the next audio. */
  readonly formats?: (settings: RealtimeSettings) => void;
}

export class RealtimeBinding {
  readonly #options: BindingOptions;
  #state: BindingState = "starting";
  #sessionId = "";
  #response: OpenResponse | undefined;
  /** The last item of the conversation, for `previous_item_id`. */
  #lastItem: string | null = null;
  /** Typed messages created and not yet answered (`response.create` sends them as one turn). */
  readonly #pending: { id: string; text: string }[] = [];
  /** Typed turns handed to the session whose `user-transcript.committed` is still to come: they were shown as items already. */
  readonly #typed: string[] = [];
  /** The conversation's recent items, as last sent, by id (at most `MAX_REMEMBERED_ITEMS`). */
  readonly #items = new Map<string, ConversationItem>();
  #settings: RealtimeSettings;
  /** The appended-audio clock, the user's spoken item, push-to-talk. */
  readonly #input: InputAudioBuffer;
  /** The agent's clientTools the client runs, their calls, and the reply across them. */
  readonly #tools: ClientTools;
  /** The latest reply's item and its audio sent: what `conversation.item.truncate` may name (reply-truncation.ts). */
  readonly #replyAudio = new ReplyAudio();
  /** Responses outside the conversation (`conversation: "none"`, out-of-band.ts). */
  readonly #outOfBand: OutOfBandResponses;
  /** The last response ended at a barge-in and none began since: a `response.cancel` now is the client's echo of it. */
  #interrupted = false;

  constructor(options: BindingOptions) {
    this.#options = options;
    this.#tools = new ClientTools(options.clientTools ?? new Map());
    this.#outOfBand = new OutOfBandResponses({ send: (event) => this.#send(event), id: options.id, served: options.outOfBand === true });
    this.#settings = initialSettings(options.modality, options.turns ?? "auto");
    this.#input = new InputAudioBuffer({
      send: (event) => this.#send(event),
      eventId: () => this.#eventId(),
      itemId: () => options.id("item"),
      place: (id) => this.#place(id),
      pushToTalk: () => takesPushToTalk(this.#settings),
    });
  }

  get state(): BindingState {
    return this.#state;
  }

  #move(next: BindingState): void {
    if (!TRANSITIONS[this.#state].includes(next)) throw new RangeError(`realtime binding: ${this.#state} → ${next} is not a transition`);
    this.#state = next;
  }

  #send(event: RealtimeServerEvent): void {
    if (this.#state !== "closed") this.#options.send(event);
  }

  #eventId(): string {
    return this.#options.id("event");
  }

  /** A Realtime `error` (refusals, the session's errors). */
  error(error: RealtimeErrorBody): void {
    this.#send(server.errorEvent(this.#eventId(), error));
  }

  get #view(): server.RealtimeSessionView {
    const { input, output } = this.#settings;
    return { id: this.#sessionId, model: this.#options.agent, modality: this.#options.modality, tools: this.#tools.views(), input, output, turnDetection: shownTurnDetection(this.#settings) };
  }

  // ── client → session ────────────────────────────────────────────────────────────────────────

  /** One client event, once the session is attached: what to hand the session (possibly nothing). */
  client(event: RealtimeClientEvent): SessionInput[] {
    this.settle();
    if (this.#state === "closed") return [];
    const eventId = event.eventId;
    const refuse = (code: string, message: string, param?: string): SessionInput[] => {
      this.error({ type: "invalid_request_error", code, message, ...(param === undefined ? {} : { param }), ...(eventId === undefined ? {} : { event_id: eventId }) });
      return [];
    };
    const refused = (result: SessionInput[] | InputRefusal): SessionInput[] => (Array.isArray(result) ? result : refuse(result.code, result.message, result.param));
    switch (event.type) {
      case "session.update": {
        const settings = applySessionUpdate(event.update, this.#settings, this.#response?.audioSent === true);
        if ("code" in settings) return refuse(settings.code, settings.message, settings.param);
        const problem = event.update.tools === undefined ? undefined : this.#tools.declare(event.update.tools);
        if (problem !== undefined) return refuse(problem.code, problem.message, problem.param);
        this.#settings = settings;
        this.#options.formats?.(settings);
        this.#send(server.sessionUpdated(this.#eventId(), this.#view));
        return [];
      }
      case "input_audio_buffer.append":
        return refused(this.#input.append(event.audio, this.#settings.input));
      case "input_audio_buffer.commit":
      case "input_audio_buffer.clear": {
        const refusal = bufferEventRefusal(this.#settings, event.type);
        if (refusal !== undefined) return refuse(refusal.code, refusal.message);
        return event.type === "input_audio_buffer.commit" ? refused(this.#input.commit()) : this.#input.clear();
      }
      case "conversation.item.create": {
        const chars = this.#pending.reduce((sum, item) => sum + item.text.length, event.text.length);
        if (this.#pending.length >= MAX_PENDING_ITEMS || chars > MAX_USER_TEXT_CHARS) {
          return refuse("too_many_items", `conversation.item.create: at most ${MAX_PENDING_ITEMS} messages and ${MAX_USER_TEXT_CHARS} characters wait for response.create: send response.create first`);
        }
        const item: MessageItem = { id: event.itemId ?? this.#options.id("item"), role: "user", status: "completed", content: [{ type: "input_text", text: event.text }] };
        this.#addItem(item);
        this.#pending.push({ id: item.id, text: event.text });
        return [];
      }
      case "conversation.item.retrieve": {
        const item = this.#items.get(event.itemId);
        if (item === undefined) return refuse("item_not_found", `conversation.item.retrieve: no item ${JSON.stringify(event.itemId)} (the gateway keeps the last ${MAX_REMEMBERED_ITEMS})`, "item_id");
        this.#send(server.itemRetrieved(this.#eventId(), item));
        return [];
      }
      case "function_call_output": {
        const problem = this.#tools.answer(event.callId);
        if (problem !== undefined) return refuse(problem.code, problem.message, problem.param);
        this.#addItem({ type: "function_call_output", id: event.itemId ?? this.#options.id("item"), callId: event.callId, output: event.output });
        return [{ kind: "command", command: { type: "tool_result", toolCallId: event.callId, result: event.output } }];
      }
      case "conversation.item.truncate": {
        const outcome = this.#replyAudio.truncate(event, this.#items.get(event.itemId), this.#options.modality === "audio");
        if ("refusal" in outcome) return refuse(outcome.refusal.code, outcome.refusal.message, outcome.refusal.param);
        this.#send(server.itemTruncated(this.#eventId(), event.itemId, event.contentIndex, event.audioEndMs));
        return [{ kind: "command", command: outcome.command }];
      }
      case "response.create": {
        if (event.outOfBand !== undefined) {
          const started = this.#outOfBand.start(event.outOfBand);
          return "refusal" in started ? refuse(started.refusal.code, started.refusal.message, started.refusal.param) : [{ kind: "command", command: started.command }];
        }
        if (this.#pending.length === 0) {
          // After a tool output the agent continues by itself: its continuation answers this (docs/realtime.md "Client tools").
          const absorbed = this.#tools.absorb(this.#response !== undefined);
          if (absorbed === "pay") this.#payOwed();
          if (absorbed !== "none") return [];
          return refuse("no_new_input", "response.create: nothing new to answer: add a user message with conversation.item.create first (spoken turns are answered by the agent's own turn-taking)");
        }
        this.#tools.created();
        const text = this.#pending.map((item) => item.text).join("\n");
        this.#pending.length = 0;
        this.#typed.push(text);
        return [{ kind: "command", command: { type: "user_text", text } }];
      }
      case "response.cancel": {
        if (event.responseId !== undefined && this.#outOfBand.cancel(event.responseId)) return [];
        if (this.#response === undefined && this.#typed.length === 0) {
          // The Agents SDK cancels at `speech_started` the response a barge-in already ended: absorbed, once.
          if (this.#interrupted) {
            this.#interrupted = false;
            return [];
          }
          return refuse("response_cancel_not_active", "response.cancel: there is no active response");
        }
        if (this.#response !== undefined) this.#response.cancelRequested = true;
        // The session drops the turns still queued too: none of them will be answered.
        this.#typed.length = 0;
        return [{ kind: "command", command: { type: "cancel" } }];
      }
    }
  }

  /** Put item `id` next in the conversation: the item before it. */
  #place(id: string): string | null {
    const previous = this.#lastItem;
    this.#lastItem = id;
    return previous;
  }

  #addItem(item: ConversationItem): void {
    const previous = this.#place(item.id);
    this.#send(server.itemAdded(this.#eventId(), item, previous));
    this.#itemDone(item, previous);
  }

  /** `conversation.item.done`, and the item remembered for `conversation.item.retrieve`. */
  #itemDone(item: ConversationItem, previous: string | null): void {
    this.#remember(item);
    this.#send(server.itemDone(this.#eventId(), item, previous));
  }

  #remember(item: ConversationItem): void {
    this.#items.delete(item.id);
    this.#items.set(item.id, item);
    if (this.#items.size > MAX_REMEMBERED_ITEMS) this.#items.delete(this.#items.keys().next().value ?? "");
  }

  // ── session → client ────────────────────────────────────────────────────────────────────────

  /** A session event the link holds behind the agent audio before it: a declared client tool's call ends the response that audio belongs to. */
  waitsForAudio(event: EventBody): boolean {
    return event.type === "tool.called" && this.#tools.declared(event.toolName);
  }

  /**
   * One session event, in the link's order (after-audio events after the audio before them), and
   * what to hand the session back (a call of a clientTool the client did not declare, refused at
   * once: it would wait for its timeout).
   */
  session(event: EventBody): SessionInput[] {
    if (event.type === "tool.called" && this.#tools.isClientTool(event.toolName) && !this.#tools.declared(event.toolName)) {
      const refusal = clientToolRefusal(event.toolName);
      return [{ kind: "command", command: { type: "tool_result", toolCallId: event.toolCallId, result: refusal, error: refusal } }];
    }
    this.#onSession(event);
    return [];
  }

  #onSession(event: EventBody): void {
    if (this.#state === "cancelling") {
      // The barge-in's speech first, then the response it cut (Realtime's order).
      if (event.type === "speech.started") this.#input.speechStarted();
      this.settle();
      if (event.type === "speech.started") return;
    }
    if (this.#state === "closed") return;
    switch (event.type) {
      case "session.configured":
        this.#sessionId = event.sessionId;
        if (this.#state === "starting") {
          this.#move("idle");
          this.#send(server.sessionCreated(this.#eventId(), this.#view));
          this.#rateLimits(0);
        }
        return;
      case "speech.started":
        this.#input.speechStarted();
        return;
      case "speech.stopped":
        this.#input.speechStopped();
        return;
      case "user-transcript.updated":
        this.#input.caption(event.text);
        return;
      case "user-transcript.committed":
        this.#userCommitted(event.text);
        return;
      case "agent-transcript.updated": {
        const response = this.#open();
        response.snapshot = event.text;
        this.#show(response);
        return;
      }
      case "tool.message": {
        const response = this.#open();
        response.toolLines.push(event.text);
        this.#show(response);
        return;
      }
      case "agent-transcript.committed":
        if (this.#response !== undefined) this.#response.committed = event.text;
        return;
      case "tool.called":
        // A declared client tool's call ends the open response (or a new one), as the API's does (docs/realtime.md "Client tools").
        if (!this.#tools.declared(event.toolName)) return;
        if (this.#response === undefined) this.#begin();
        this.#finish("completed", undefined, undefined, { callId: event.toolCallId, name: event.toolName, args: event.args });
        return;
      case "tool.completed":
        this.#tools.settled(event.toolCallId);
        return;
      case "reply.completed":
        this.#finish("completed", undefined, event.usage);
        if (this.#tools.replyEnded()) this.#payOwed();
        return;
      case "usage.updated":
        this.#rateLimits(event.totalTokens);
        return;
      case "reply.cancelled":
        if (this.#response !== undefined && !this.#response.cancelRequested && this.#options.modality === "audio") {
          this.#move("cancelling");
          return;
        }
        this.#cancelled();
        return;
      case "session.reset":
        this.#typed.length = 0;
        return;
      case "error.reported":
        this.error({ type: event.fatal ? "server_error" : "invalid_request_error", code: event.code, message: event.message });
        if (event.fatal && this.#response !== undefined) this.#finish("failed", { type: "failed", error: { type: "server_error", code: event.code } });
        if (event.fatal && this.#tools.replyEnded()) this.#payOwed();
        return;
      default:
        // Tool calls, tool results, usage, metrics, state, hand-offs: the gateway's own business.
        // Server tools run in the gateway; their spoken or shown lines are part of the reply's text.
        return;
    }
  }

  /** A response the session cancelled on its own, held in `cancelling`, ends now (the link calls this once the session's emits are over). */
  settle(): void {
    if (this.#state === "cancelling") this.#cancelled();
  }

  #cancelled(): void {
    const response = this.#response;
    if (response !== undefined) {
      this.#interrupted = !response.cancelRequested;
      this.#finish("cancelled", { type: "cancelled", reason: response.cancelRequested ? "client_cancelled" : "turn_detected" });
    }
    if (this.#tools.replyEnded()) this.#payOwed();
  }

  /** Paced agent audio in the client's output format: the open response's; `waiting` (transport/waiting-mix.ts): the thinking sound (`opens`) begins one, the bed alone only joins one. */
  agentAudio(audio: Uint8Array, waiting?: { readonly opens: boolean }): void {
    this.settle();
    if (this.#state === "closed" || this.#options.modality !== "audio" || audio.byteLength === 0) return;
    if (waiting !== undefined && !waiting.opens && this.#response === undefined) return;
    const response = this.#open();
    response.audioSent = true;
    this.#replyAudio.sent(response.item.id, realtimeAudioMs(audio.byteLength, this.#settings.output));
    this.#send(server.audioDelta(this.#eventId(), this.#at(response), Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString("base64")));
  }

  /** The session or the socket ended: nothing is sent after. */
  close(): void {
    if (this.#state === "closed") return;
    this.#outOfBand.close();
    this.#move("closed");
  }

  #userCommitted(text: string): void {
    if (this.#typed[0] === text) {
      // A typed turn: its item was shown when the client created it.
      this.#typed.shift();
      return;
    }
    const { id, previous, seconds } = this.#input.committed();
    this.#send(server.itemAdded(this.#eventId(), { id, role: "user", status: "in_progress", content: [{ type: "input_audio", transcript: null }] }, previous));
    this.#send(server.transcriptionCompleted(this.#eventId(), id, text, seconds));
    this.#itemDone({ id, role: "user", status: "completed", content: [{ type: "input_audio", transcript: text }] }, previous);
  }

  /** Show the reply's text as it now stands: a delta when it extends what was sent. */
  #show(response: OpenResponse): void {
    const snapshot = this.#tools.unshown(response.snapshot);
    const lines = response.toolLines.filter((line) => !snapshot.includes(line));
    const text = [...lines, snapshot].filter((part) => part !== "").join(" ");
    response.text = text;
    const delta = appendedText(response.sent, text); // undefined when rewritten: the `done` events carry the whole text
    if (delta !== undefined && delta !== "") this.#delta(response, delta);
  }

  #delta(response: OpenResponse, delta: string): void {
    response.sent += delta;
    const at = this.#at(response);
    this.#send(this.#options.modality === "text" ? server.textDelta(this.#eventId(), at, delta) : server.transcriptDelta(this.#eventId(), at, delta));
  }

  #at(response: OpenResponse): { responseId: string; itemId: string } {
    return { responseId: response.id, itemId: response.item.id };
  }

  #item(response: OpenResponse, status: MessageItem["status"], text: string): MessageItem {
    const content = this.#options.modality === "text" ? { type: "output_text" as const, text } : { type: "output_audio" as const, transcript: text };
    return { id: response.item.id, role: "assistant", status, content: status === "in_progress" ? [] : [content] };
  }

  /** The open response with its message, or a new one: a reply begins (or continues after a client tool's call) with its first words or audio. */
  #open(): OpenResponse {
    if (this.#response !== undefined) return this.#response;
    const response = this.#begin();
    const item = this.#item(response, "in_progress", "");
    this.#lastItem = item.id;
    response.message = true;
    this.#replyAudio.began(item.id);
    this.#remember(item);
    this.#send(server.outputItemAdded(this.#eventId(), response.id, item));
    this.#send(server.itemAdded(this.#eventId(), item, response.previous));
    this.#send(server.contentPartAdded(this.#eventId(), this.#at(response), this.#options.modality));
    return response;
  }

  /** `rate_limits.updated`, when the agent has a token budget: `used` tokens of it so far (the session's totals). */
  #rateLimits(used: number): void {
    const limit = this.#options.tokenLimit;
    if (limit !== undefined) this.#send(server.rateLimitsUpdated(this.#eventId(), limit, used));
  }

  /** `response.created`: it answers a `response.create` absorbed before it. */
  #begin(replying = true): OpenResponse {
    const response: OpenResponse = { id: this.#options.id("resp"), item: { id: this.#options.id("item") }, previous: this.#lastItem, message: false, snapshot: "", toolLines: [], text: "", sent: "", cancelRequested: false };
    this.#response = response;
    this.#interrupted = false;
    this.#move("responding");
    this.#tools.responseBegan(replying);
    this.#send(server.responseCreated(this.#eventId(), { id: response.id, status: "in_progress", modality: this.#options.modality, output: [], format: this.#settings.output }));
    return response;
  }

  /** An absorbed `response.create` no response answered (the reply ended silent): an empty one. */
  #payOwed(): void {
    this.#begin(false);
    this.#finish("completed");
  }

  /** `call`: a declared client tool's call, the response's last output (its continuation is a new response). */
  #finish(status: Exclude<ResponseStatus, "in_progress">, details?: StatusDetails, usage?: ReplyUsage, call?: { callId: string; name: string; args: unknown }): void {
    const response = this.#response;
    if (response === undefined) return;
    this.#response = undefined;
    this.#move("idle");
    const output: ConversationItem[] = response.message ? [this.#messageDone(response, status)] : [];
    if (call !== undefined) {
      const previous = this.#lastItem;
      this.#lastItem = this.#options.id("item");
      const item = this.#tools.call((event) => this.#send(event), () => this.#eventId(), { responseId: response.id, outputIndex: output.length, previous, shown: response.text }, { ...call, id: this.#lastItem });
      output.push(item);
      this.#itemDone(item, previous);
    }
    this.#send(server.responseDone(this.#eventId(), { id: response.id, status, modality: this.#options.modality, output, format: this.#settings.output, ...(details === undefined ? {} : { statusDetails: details }), ...(usage === undefined ? {} : { usage }) }));
  }

  /** The message's `done` events and item. */
  #messageDone(response: OpenResponse, status: Exclude<ResponseStatus, "in_progress">): MessageItem {
    const modality = this.#options.modality;
    // What the client was shown (the deltas add up to it), tool lines included; the recorded reply only if nothing was.
    const text = response.text === "" ? this.#tools.unshown(response.committed ?? "") : response.text;
    const at = this.#at(response);
    // A reply the session only committed (no snapshot first): its text as one last delta, so the deltas add up to the done text.
    const last = appendedText(response.sent, text);
    if (last !== undefined && last !== "") this.#delta(response, last);
    if (modality === "text") {
      this.#send(server.textDone(this.#eventId(), at, text));
    } else {
      this.#send(server.audioDone(this.#eventId(), at));
      this.#send(server.transcriptDone(this.#eventId(), at, text));
    }
    this.#send(server.contentPartDone(this.#eventId(), at, modality, text));
    const item = this.#item(response, status === "completed" ? "completed" : "incomplete", text);
    this.#send(server.outputItemDone(this.#eventId(), response.id, item));
    this.#itemDone(item, response.previous);
    return item;
  }
}
