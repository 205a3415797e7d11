/**
 * `WS /v1/realtime`: one Realtime client's socket as a session's link (a `ClientLink`, as the
 * browser socket and the carrier bridge are). The session is the gateway's own, started by the
 * server exactly as for `/websocket`; this link only speaks Realtime on the wire:
 * - in: frames → `parseClientEvent` (bounded, never throws) → held until the session attaches
 *   (`SocketLink`, shared with `/websocket`) → the `RealtimeBinding` → commands, and audio in the
 *   client's input format converted once to what the session's mode hears (24 kHz PCM16 through
 *   the `AudioEdge`, G.711 through the `RealtimeAudioPath`);
 * - out: session events and agent audio (24 kHz PCM16, the waiting sounds mixed in) → the `Pacer`
 *   (the same ordering and 1.5 s lead as `/websocket`, so the session's playback estimate holds) →
 *   the client's output format as it leaves → the binding → Realtime events.
 */
import type { Writable } from "node:stream";
import type { WebSocket } from "ws";
import { DEFAULT_SESSION_AUDIO, PLAYBACK_SAMPLE_RATE, type SessionAudio } from "../audio/rates.js";
import type { Clock } from "../clock.js";
import type { EventBody } from "../events.js";
import type { Logger } from "../log.js";
import type { ConnectionHandler } from "../transport/client-connection.js";
import type { InputBudgetLimits } from "../transport/input-budget.js";
import { SocketLink } from "../transport/socket-link.js";
import { PCM24, RealtimeAudioPath, realtimeBytesPerSecond, type RealtimeAudioFormat } from "./audio-format.js";
import { AFTER_AUDIO_EVENTS, CLEARING_EVENTS, DEFAULT_LIMITS, stamp, ulid, type Limits, type ServerEvent } from "../transport/protocol.js";
import { RealtimeBinding, type SessionInput } from "./binding.js";
import type { ClientToolSpec } from "./client-tools.js";
import { MAX_APPEND_AUDIO_BYTES, MAX_REALTIME_FRAME_BYTES, parseClientEvent, type ParsedClientEvent } from "./client-events.js";
import type { Modality } from "./server-events.js";
import type { AgentTurns } from "./session-settings.js";
import { spread } from "../spread.js";

/** The Realtime API's default audio, and what the link's edge speaks: PCM16 at 24 kHz (docs/realtime.md "Audio"). */
export const REALTIME_SAMPLE_RATE = PLAYBACK_SAMPLE_RATE;

/**
 * What a Realtime client may send, sustained: its audio arrives as base64 in text frames, so the
 * text budget is `maxAudioRealtime` × real time of its input format (24 kHz PCM16: 48 000 bytes a
 * second; G.711: 8 000) in base64 (4/3 of the bytes), plus 64 KiB a second for its other events.
 * A change of input format retunes it (`PeerSocket.retune`).
 */
export function realtimeBudget(limits: Limits, input: RealtimeAudioFormat = PCM24): InputBudgetLimits {
  const audioBytesPerSecond = limits.maxAudioRealtime * realtimeBytesPerSecond(input);
  return {
    framesPerSecond: limits.maxFramesPerSecond,
    audioBytesPerSecond,
    textBytesPerSecond: Math.ceil((audioBytesPerSecond * 4) / 3) + 64 * 1024,
    burstSeconds: limits.inputBurstSeconds,
  };
}

export interface RealtimeConnectionOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly limits?: Partial<Limits>;
  readonly leadMs?: number;
  /** The agent's name (the session's `model`) and how it answers. */
  readonly agent: string;
  readonly modality: Modality;
  /** The agent's clientTools (client-tools.ts). */
  readonly clientTools?: ReadonlyMap<string, ClientToolSpec>;
  /** The agent's `usageLimits.totalTokens` (binding.ts). */
  readonly tokenLimit?: number;
  /** Out-of-band responses are served: the gateway calls the agent's model (binding.ts). */
  readonly outOfBand?: boolean;
  /** The agent's `turnTaking.detection` (binding.ts; default `auto`). */
  readonly turns?: AgentTurns;
  /** The agent's `interruption` is not `"off"` (binding.ts; default true). */
  readonly interrupts?: boolean;
  /** The socket under ws (`SocketLinkOptions.socket`). */
  readonly socket?: Pick<Writable, "write">;
}

export class RealtimeConnection extends SocketLink<ParsedClientEvent> {
  readonly #binding: RealtimeBinding;
  /** The client's G.711, when it chose it (audio-format.ts). */
  readonly #path = new RealtimeAudioPath(DEFAULT_SESSION_AUDIO);
  #handler: ConnectionHandler | undefined;

  constructor(ws: WebSocket, options: RealtimeConnectionOptions) {
    const limits: Limits = spread(DEFAULT_LIMITS, options.limits);
    super(ws, {
      clock: options.clock,
      log: options.log,
      leadMs: options.leadMs,
      format: { codec: "pcm16", sampleRate: REALTIME_SAMPLE_RATE },
      limits,
      budget: realtimeBudget(limits),
      socket: options.socket,
    });
    this.#binding = new RealtimeBinding({
      modality: options.modality,
      agent: options.agent,
      send: (event) => this.peer.write(JSON.stringify(event), "backlog exceeded"),
      id: (prefix) => `${prefix}_${ulid(this.clock.now())}`,
      ...(options.clientTools === undefined ? {} : { clientTools: options.clientTools }),
      ...(options.tokenLimit === undefined ? {} : { tokenLimit: options.tokenLimit }),
      ...(options.outOfBand === undefined ? {} : { outOfBand: options.outOfBand }),
      ...(options.turns === undefined ? {} : { turns: options.turns }),
      ...(options.interrupts === undefined ? {} : { interrupts: options.interrupts }),
      formats: ({ input, output }) => {
        this.#path.set(input, output);
        this.peer.retune(realtimeBudget(limits, input));
      },
    });
  }

  override useAudio(audio: SessionAudio): void {
    super.useAudio(audio);
    this.#path.use(audio);
  }

  /** Session events, by the pacer's ordering rules: after-audio events wait for held audio, clearing events drop it. */
  emit(body: EventBody): ServerEvent {
    const event = stamp(body, this.clock.now());
    if (CLEARING_EVENTS.has(body.type)) {
      this.pacer.clear();
      this.#fromSession(body);
    } else if (AFTER_AUDIO_EVENTS.has(body.type) || this.#binding.waitsForAudio(body)) {
      this.pacer.afterAudio(() => this.#fromSession(body));
    } else {
      this.#fromSession(body);
    }
    // A response the session cancelled waits for the speech.started it emits next, in the same turn (binding.ts `cancelling`).
    if (this.#binding.state === "cancelling") queueMicrotask(() => this.#binding.settle());
    return event;
  }

  /** A session event through the binding; what it hands back reaches the session after the emit returns (never inside it). */
  #fromSession(body: EventBody): void {
    const back = this.#binding.session(body);
    const handler = this.#handler;
    if (back.length === 0 || handler === undefined) return;
    queueMicrotask(() => {
      for (const input of back) this.#input(handler, input);
    });
  }

  override attach(handler: ConnectionHandler): void {
    this.#handler = handler;
    super.attach(handler);
  }

  /** Events never go through the pacer's text path (`emit` orders them itself). */
  protected sendText(): void {}

  /** Paced agent audio (24 kHz PCM16) in the client's format: the open response's audio. */
  protected sendAudio(chunk: Uint8Array): void {
    this.#binding.agentAudio(this.#path.outbound(chunk));
  }

  /** Paced waiting sounds: the response's audio too; the thinking sound starts one (binding.ts `agentAudio`). */
  protected override sendFiller(chunk: Uint8Array): void {
    this.#binding.agentAudio(this.#path.outbound(chunk), { opens: this.waiting?.thinkingAudible === true });
  }

  protected override stopped(): void {
    this.#binding.close();
  }

  protected dropped(count: number): void {
    this.peer.throttle.warn(this.log, { count }, "realtime client input over budget; frames dropped");
    this.#binding.error({ type: "invalid_request_error", code: "input_over_budget", message: `input over budget: ${count} frames dropped; append audio in real time` });
  }

  protected audioBytesOf(item: ParsedClientEvent): number | undefined {
    return item.kind === "event" && item.event.type === "input_audio_buffer.append" ? item.event.audio.byteLength : undefined;
  }

  protected overflow(): void {
    this.#binding.error({ type: "invalid_request_error", code: "too_much_input", message: "too much input before the session started; events past the limit were dropped" });
  }

  protected receive(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (isBinary) {
      this.peer.deliver({ kind: "refused", error: { type: "invalid_request_error", code: "invalid_event", message: "binary frames are not Realtime events: send audio as input_audio_buffer.append" } });
      return;
    }
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    // Size before decoding: a frame over the limit is never turned into a string.
    const parsed: ParsedClientEvent =
      bytes.byteLength > MAX_REALTIME_FRAME_BYTES
        ? { kind: "refused", error: { type: "invalid_request_error", code: "frame_too_large", message: `a frame of ${bytes.byteLength} bytes exceeds ${MAX_REALTIME_FRAME_BYTES}: send audio in smaller appends` } }
        : parseClientEvent(bytes.toString("utf8"), MAX_REALTIME_FRAME_BYTES, MAX_APPEND_AUDIO_BYTES);
    if (parsed.kind === "refused") this.peer.throttle.warn(this.log, { code: parsed.error.code }, "realtime client event refused");
    this.peer.deliver(parsed);
  }

  protected hand(handler: ConnectionHandler, item: ParsedClientEvent): void {
    if (item.kind === "refused") {
      this.#binding.error(item.error);
      return;
    }
    for (const input of this.#binding.client(item.event)) this.#input(handler, input);
  }

  #input(handler: ConnectionHandler, input: SessionInput): void {
    if (input.kind === "command") {
      handler.command(input.command);
      return;
    }
    const g711 = this.#path.inbound(input.chunk);
    if (g711 === undefined) this.audioIn(handler, input.chunk);
    else if (g711.byteLength > 0) handler.audio(g711);
  }
}
