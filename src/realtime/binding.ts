/**
 * One Realtime connection bound to one gateway session (docs/realtime.md "Design"): the explicit
 * state machine that turns the session's events (client protocol v1, in the link's paced order)
 * into Realtime server events, and Realtime client events into the session's commands. The
 * session decides everything an agent decides — turn-taking, barge-in, tools, tool messages, what
 * was heard — exactly as on `/websocket`; this maps its story onto Realtime's, and nothing else.
 * Pure: no sockets, no timers; ids come from an injected counter.
 */
import type { EventBody } from "../events.js";
import type { SessionCommand } from "../transport/protocol.js";
import type { RealtimeClientEvent, RealtimeErrorBody } from "./client-events.js";
import { ClientTools, clientToolRefusal, type ClientToolSpec } from "./client-tools.js";
import { ConversationItems, MAX_REMEMBERED_ITEMS } from "./conversation-items.js";
import { OutOfBandResponses } from "./out-of-band.js";
import { ReplyAudio } from "./reply-truncation.js";
import { ResponseStream } from "./response-stream.js";
import { InputAudioBuffer, type InputRefusal } from "./input-buffer.js";
import { applySessionUpdate, bufferEventRefusal, initialSettings, shownTurnDetection, takesPushToTalk, type AgentTurns, type RealtimeSettings } from "./session-settings.js";
import * as server from "./server-events.js";
import type { Modality, RealtimeServerEvent } from "./server-events.js";
import { TypedTurns } from "./typed-turns.js";

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
  /** The agent's speech over a reply interrupts it (`interruption` not `"off"`; default true): `interrupt_response` (session-settings.ts). */
  readonly interrupts?: boolean;
  /** The client's audio formats changed (an accepted `session.update`): the link converts from the next audio. */
  readonly formats?: (settings: RealtimeSettings) => void;
}

export class RealtimeBinding {
  readonly #options: BindingOptions;
  #state: BindingState = "starting";
  #sessionId = "";
  /** The conversation as this link shows it. */
  readonly #items: ConversationItems;
  /** Typed messages waiting for `response.create`, and typed turns sent. */
  readonly #typed = new TypedTurns();
  /** The open response, as the client sees it. */
  readonly #responses: ResponseStream;
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
    this.#settings = initialSettings(options.modality, options.turns ?? "auto", options.interrupts ?? true);
    const send = (event: RealtimeServerEvent): void => this.#send(event);
    const eventId = (): string => this.#eventId();
    this.#items = new ConversationItems({ send, eventId });
    this.#responses = new ResponseStream({
      modality: options.modality,
      send,
      eventId,
      id: options.id,
      format: () => this.#settings.output,
      items: this.#items,
      tools: this.#tools,
      replyAudio: this.#replyAudio,
      began: () => {
        this.#interrupted = false;
        this.#move("responding");
      },
      ended: () => this.#move("idle"),
    });
    this.#input = new InputAudioBuffer({
      send: (event) => this.#send(event),
      eventId: () => this.#eventId(),
      itemId: () => options.id("item"),
      place: (id) => this.#items.place(id),
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
        const settings = applySessionUpdate(event.update, this.#settings, this.#responses.audioStarted);
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
        const problem = this.#typed.refusal(event.text);
        if (problem !== undefined) return refuse("too_many_items", problem);
        this.#items.add({ id: event.itemId ?? this.#options.id("item"), role: "user", status: "completed", content: [{ type: "input_text", text: event.text }] });
        this.#typed.add(event.text);
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
        this.#items.add({ type: "function_call_output", id: event.itemId ?? this.#options.id("item"), callId: event.callId, output: event.output });
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
        const text = this.#typed.take();
        if (text === undefined) {
          // After a tool output the agent continues by itself: its continuation answers this (docs/realtime.md "Client tools").
          const absorbed = this.#tools.absorb(this.#responses.open);
          if (absorbed === "pay") this.#responses.payOwed();
          if (absorbed !== "none") return [];
          return refuse("no_new_input", "response.create: nothing new to answer: add a user message with conversation.item.create first (spoken turns are answered by the agent's own turn-taking)");
        }
        this.#tools.created();
        return [{ kind: "command", command: { type: "user_text", text } }];
      }
      case "response.cancel": {
        if (event.responseId !== undefined && this.#outOfBand.cancel(event.responseId)) return [];
        if (!this.#responses.open && !this.#typed.queued) {
          // The Agents SDK cancels at `speech_started` the response a barge-in already ended: absorbed, once.
          if (this.#interrupted) {
            this.#interrupted = false;
            return [];
          }
          return refuse("response_cancel_not_active", "response.cancel: there is no active response");
        }
        this.#responses.requestCancel();
        // The session drops the turns still queued too: none of them will be answered.
        this.#typed.dropQueued();
        return [{ kind: "command", command: { type: "cancel" } }];
      }
    }
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
      case "agent-transcript.updated":
        this.#responses.snapshot(event.text);
        return;
      case "tool.message":
        this.#responses.toolLine(event.text);
        return;
      case "agent-transcript.committed":
        this.#responses.committed(event.text);
        return;
      case "tool.called":
        // A declared client tool's call ends the open response (or a new one), as the API's does (docs/realtime.md "Client tools").
        if (this.#tools.declared(event.toolName)) this.#responses.call({ callId: event.toolCallId, name: event.toolName, args: event.args });
        return;
      case "tool.completed":
        this.#tools.settled(event.toolCallId);
        return;
      case "reply.completed":
        this.#responses.finish("completed", undefined, event.usage);
        if (this.#tools.replyEnded()) this.#responses.payOwed();
        return;
      case "usage.updated":
        this.#rateLimits(event.totalTokens);
        return;
      case "reply.cancelled":
        if (this.#responses.open && !this.#responses.cancelRequested && this.#options.modality === "audio") {
          this.#move("cancelling");
          return;
        }
        this.#cancelled();
        return;
      case "session.reset":
        this.#typed.dropQueued();
        return;
      case "error.reported":
        this.error({ type: event.fatal ? "server_error" : "invalid_request_error", code: event.code, message: event.message });
        if (event.fatal) this.#responses.finish("failed", { type: "failed", error: { type: "server_error", code: event.code } });
        if (event.fatal && this.#tools.replyEnded()) this.#responses.payOwed();
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
    if (this.#responses.open) {
      const byClient = this.#responses.cancelRequested;
      this.#responses.finish("cancelled", { type: "cancelled", reason: byClient ? "client_cancelled" : "turn_detected" });
      this.#interrupted = !byClient;
    }
    if (this.#tools.replyEnded()) this.#responses.payOwed();
  }

  /** Paced agent audio in the client's output format: the open response's; `waiting` (transport/waiting-mix.ts): the thinking sound (`opens`) begins one, the bed alone only joins one. */
  agentAudio(audio: Uint8Array, waiting?: { readonly opens: boolean }): void {
    this.settle();
    if (this.#state === "closed" || this.#options.modality !== "audio" || audio.byteLength === 0) return;
    if (waiting !== undefined && !waiting.opens && !this.#responses.open) return;
    this.#responses.audio(audio);
  }

  /** The session or the socket ended: nothing is sent after. */
  close(): void {
    if (this.#state === "closed") return;
    this.#outOfBand.close();
    this.#move("closed");
  }

  #userCommitted(text: string): void {
    // A typed turn: its item was shown when the client created it.
    if (this.#typed.committed(text)) return;
    const { id, previous, seconds } = this.#input.committed();
    this.#send(server.itemAdded(this.#eventId(), { id, role: "user", status: "in_progress", content: [{ type: "input_audio", transcript: null }] }, previous));
    this.#send(server.transcriptionCompleted(this.#eventId(), id, text, seconds));
    this.#items.done({ id, role: "user", status: "completed", content: [{ type: "input_audio", transcript: text }] }, previous);
  }

  /** `rate_limits.updated`, when the agent has a token budget: `used` tokens of it so far (the session's totals). */
  #rateLimits(used: number): void {
    const limit = this.#options.tokenLimit;
    if (limit !== undefined) this.#send(server.rateLimitsUpdated(this.#eventId(), limit, used));
  }
}
