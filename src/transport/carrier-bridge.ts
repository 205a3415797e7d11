/**
 * The carrier bridge: adapts any carrier codec to the `ClientLink` a session uses for browser
 * sockets (docs/telephony.md, "Playback truth" and "What happens on a call"). Carrier audio is
 * decoded and resampled at this edge, to and from the rates the session's mode declared
 * (`useAudio`). The caller's side is a `CarrierInbound` (ordered, held until the session
 * attaches); the agent's a `CarrierOutbound` (framed for the carrier, paced, marked, mixed with
 * the waiting sounds). The bridge owns the stream's life: start, keep-alive, close and hang-up.
 *
 * Playback truth: a mark goes out after each reply segment with audio since the last mark (and
 * every MARK_EVERY_MS within one); what was sent, the marks outstanding and the estimate between
 * echoes are a `CarrierPlayout` (carrier-playout.ts). Echoes, and while marks are outstanding every inbound media frame, are
 * reported through the link's port (`ConnectionHandler.playback`, or the mode's own
 * `playbackProgress` when it hears the call directly), so the session's playback clock, heard
 * cursor, "agent stopped speaking" and idle timer follow the carrier.
 */
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import type { Clock, Timer } from "../clock.js";
import { CLOSE } from "../errors.js";
import { LogThrottle, type Logger } from "../log.js";
import { SmallMap } from "../small-map.js";
import { MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE, type G711Format, type SessionAudio } from "../audio/rates.js";
import type { TransferMode, TransferTarget } from "../manifest/index.js";
import { WholeTextFrames } from "../providers/text-frame.js";
import type { WaitingSounds } from "../audio/waiting-sound.js";
import type { AnnouncedFormat } from "./audio-edge.js";
import { CarrierAudio, carrierFormatProblem } from "./carrier-audio.js";
import { CarrierInbound } from "./carrier-inbound.js";
import { CarrierOutbound } from "./carrier-outbound.js";
import { MAX_TEXT_FRAME_CHARS, type CarrierCodec, type CarrierName } from "./carriers/carrier.js";
import { clipReason, type ClientLink, type ConnectionHandler, type DirectListener } from "./client-connection.js";
import { InputBudget, type InputBudgetLimits } from "./input-budget.js";
import { MARK_EVERY_MS } from "./carrier-playout.js";
import { KeepAlive, onPeerMessage } from "./keepalive.js";
import type { WaitingCues } from "./waiting-mix.js";
import { DEFAULT_LIMITS, MAX_BUFFERED_MS, type EventBody, type Limits } from "./protocol.js";
import { spread } from "../spread.js";

/** While a mark is outstanding, the agent still counts as audible for at least this long (ms) per report. */
const KEEPALIVE_MS = 60;
/** The carrier must send `start` within this (ms). */
export const CARRIER_START_TIMEOUT_MS = 10_000;
/** Reasons for ignored frames a bridge tells apart (the codecs have about a dozen); past them, `OTHER_REASONS`. */
export const IGNORED_REASONS = 16;
export const OTHER_REASONS = "other reasons";
/**
 * A carrier stream's input budget (input-budget.ts): 20 ms media is 50 frames a second, marks and
 * digits add a few; a burst holds the largest frame a codec accepts (a 1 MiB payload in base64).
 */
export const CARRIER_BUDGET: InputBudgetLimits = { framesPerSecond: 200, audioBytesPerSecond: 1024 * 1024, textBytesPerSecond: 1024 * 1024, burstSeconds: 2 };

/** The call as the carrier's `start` described it. */
export interface CarrierCall {
  readonly carrier: CarrierName;
  readonly streamId: string;
  readonly callId?: string | undefined;
  readonly customParameters: Readonly<Record<string, string>>;
  readonly encoding: CarrierAudio["encoding"];
  readonly sampleRate: number;
}

export interface CarrierBridgeOptions {
  readonly codec: CarrierCodec;
  readonly clock: Clock;
  readonly log: Logger;
  readonly limits?: Partial<Limits>;
  readonly leadMs?: number;
  readonly startTimeoutMs?: number;
  /**
   * The stream's socket under ws (TCP, or TLS), as the upgrade handed it over: text frames are
   * written onto it whole (`providers/text-frame.ts`), and frames written together (a chunk cut at
   * a mark boundary, its mark and the rest) are corked into one write. Absent: each frame goes
   * through ws's `send`, each its own write.
   */
  readonly socket?: Pick<Duplex, "cork" | "uncork" | "write"> | undefined;
  /**
   * Hang the call up through the carrier's API after the gateway closed the stream (end_call,
   * idle timeout, call duration limit, a fatal error). Never called when the caller hung up or
   * the stream was refused. Given only for a call the gateway answered itself: the id it hangs
   * up is the one a verified webhook named, never one the stream claims.
   */
  readonly hangUp?: () => Promise<void>;
  /**
   * Hand the caller to a person through the carrier's API (`transfer_call`), for a call the gateway
   * answered itself and whose carrier and credentials allow it: the modes it can do, why it cannot
   * take a target of one of them (a carrier that whispers only to some destinations), and the run.
   */
  readonly transfer?: {
    readonly modes: readonly TransferMode[];
    refusal?(target: TransferTarget): string | undefined;
    run(target: TransferTarget, sessionId: string): Promise<void>;
  };
}


const ANNOUNCED: AnnouncedFormat = { audioFormat: "pcm16", sampleRate: MIC_SAMPLE_RATE, ttsSampleRate: PLAYBACK_SAMPLE_RATE };

export class CarrierBridge implements ClientLink {
  readonly #ws: WebSocket;
  readonly #options: CarrierBridgeOptions;
  readonly #codec: CarrierCodec;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #limits: Limits;
  readonly #keepAlive: KeepAlive;
  #call: CarrierCall | undefined;
  #audio: CarrierAudio | undefined;
  /** The caller's media and digits, in order, held until the session attaches. */
  readonly #inbound: CarrierInbound;
  /** The agent's audio out: framed, paced, marked, mixed with its waiting sounds; what has played. */
  readonly #outbound: CarrierOutbound;
  #closed = false;
  #closing: { code: number; reason: string; timer: Timer } | undefined;
  #closeInfo: { code: number; reason: string } | undefined;
  #stopped = false;
  #startTimer: Timer | undefined;
  /**
   * Frames the codec ignored, by reason (the first of each logged at debug). A reason may quote
   * the peer (an encoding's or a track's name), so at most `IGNORED_REASONS` are told apart and
   * the rest are counted under `OTHER_REASONS`: a peer inventing names cannot grow this.
   */
  readonly ignored = new SmallMap<string, number>();
  readonly started: Promise<CarrierCall>;
  readonly ready: Promise<AnnouncedFormat>;
  readonly hungUp: Promise<void>;
  #resolveStarted: (call: CarrierCall) => void = () => {};
  #rejectStarted: (error: Error) => void = () => {};
  #resolveHungUp: () => void = () => {};

  constructor(ws: WebSocket, options: CarrierBridgeOptions) {
    this.#ws = ws;
    this.#options = options;
    this.#codec = options.codec;
    this.#clock = options.clock;
    this.#log = options.log.child({ carrier: options.codec.carrier });
    this.#limits = spread(DEFAULT_LIMITS, options.limits);
    this.#inbound = new CarrierInbound({ audioBytes: this.#limits.preStartAudioBytes, commands: this.#limits.preStartCommands }, this.#log);
    const socket = options.socket;
    this.#outbound = new CarrierOutbound({
      clock: options.clock,
      codec: options.codec,
      leadMs: options.leadMs,
      ws,
      maxBacklogBytes: this.#limits.maxBacklogBytes,
      overflow: (backlog) => {
        this.#log.warn({ backlog }, "carrier stopped reading");
        this.#finish(CLOSE.policy, "audio backlog exceeded", false);
      },
      batch: socket === undefined ? undefined : (send) => corked(socket, send),
      // The gateway's servers never negotiate compression (server/upgrade.ts); were one to, ws would queue its frames.
      frames: socket === undefined || ws.extensions !== "" ? undefined : new WholeTextFrames(socket, false),
    });
    this.started = new Promise<CarrierCall>((resolve, reject) => {
      this.#resolveStarted = resolve;
      this.#rejectStarted = reject;
    });
    this.started.catch(() => {});
    this.ready = this.started.then(() => ANNOUNCED);
    this.ready.catch(() => {});
    this.hungUp = new Promise((resolve) => {
      this.#resolveHungUp = resolve;
    });
    const startTimeoutMs = options.startTimeoutMs ?? CARRIER_START_TIMEOUT_MS;
    this.#startTimer = options.clock.setTimeout(() => this.refuse(`the carrier sent no start within ${startTimeoutMs} ms`), startTimeoutMs);
    const throttle = new LogThrottle(() => options.clock.now());
    onPeerMessage(ws, this.#log, (data, isBinary) => this.#receive(data, isBinary), {
      budget: new InputBudget(CARRIER_BUDGET, options.clock),
      clock: options.clock,
      dropped: (count) => throttle.warn(this.#log, { count }, "carrier input over budget; frames dropped"),
    });
    ws.on("close", (code, reason) => this.#onClose(code, reason.toString()));
    ws.on("error", (err) => this.#log.warn({ err }, "carrier socket error"));
    this.#keepAlive = new KeepAlive(ws, options.clock, this.#log, this.#limits.pingIntervalMs, () => {
      this.#finish(CLOSE.normal, "carrier stopped answering", false);
      ws.terminate();
    });
  }

  get open(): boolean {
    return !this.#closed && this.#closing === undefined;
  }

  /** The call, once `start` arrived. */
  get call(): CarrierCall | undefined {
    return this.#call;
  }

  get g711(): G711Format | undefined {
    return this.#audio?.g711;
  }

  /** The call's rate: PCM16 at it is only encoded (8 kHz G.711, or the L16 rate), never resampled. */
  get playbackRate(): number {
    if (this.#audio === undefined) throw new RangeError("the carrier stream has not started");
    return this.#audio.sampleRate;
  }

  /** Before `attach`: what the session hears and speaks; the carrier edge converts to and from it, once each way. */
  useAudio(audio: SessionAudio): void {
    if (this.#audio === undefined) throw new RangeError("the carrier stream has not started");
    this.#audio.use(audio);
  }

  /** Ms of audio sent to the carrier and not yet played (marks, else real time), plus what the pacer holds. */
  get unplayedMs(): number {
    return this.#outbound.unplayedMs;
  }

  /** Ms until the agent's own audio has played: waiting sounds sent after its last audio left out (what the session is told). */
  get agentUnplayedMs(): number {
    return this.#outbound.agentUnplayedMs;
  }

  // ── ClientLink: session → carrier ─────────────────────────────────────────────────────

  /** A carrier's caller sees no events. */
  shows(): boolean {
    return false;
  }

  /** A carrier takes no events: only the ones that move audio matter here (nothing is stamped, nothing returned). */
  emit(body: EventBody): undefined {
    if (body.type === "reply.cancelled" || body.type === "session.reset") this.#outbound.clear();
    else if (body.type === "audio.completed") this.#outbound.endSegment();
    return undefined;
  }

  /**
   * Agent audio; its duration is recomputed from the bytes at the carrier's rate. The carrier
   * edge cuts it into frames the carrier accepts, ending one at every mark boundary: a mark goes
   * out right after that frame, so marks come every MARK_EVERY_MS of audio.
   */
  audio(chunk: Uint8Array, _durationMs?: number): void {
    if (!this.#closed) this.#outbound.audio(chunk);
  }

  /** How this call can be handed to a person (empty: not at all). */
  get transferModes(): readonly TransferMode[] {
    return this.#options.transfer?.modes ?? [];
  }

  /** Why this call cannot be handed to `target` although its mode is offered; undefined when it can. */
  transferRefusal(target: TransferTarget): string | undefined {
    return this.#options.transfer?.refusal?.(target);
  }

  /**
   * Hand the caller to `target` (the agent's line has been heard): the carrier's API replaces the
   * call's instructions, then the stream closes 1000 `call transferred` with no hang-up. Rejects,
   * leaving the stream open, when the carrier refused.
   */
  async transfer(target: TransferTarget, sessionId: string): Promise<void> {
    const port = this.#options.transfer;
    if (port === undefined || !port.modes.includes(target.mode)) throw new Error(`this call cannot be transferred (${target.mode})`);
    const refusal = port.refusal?.(target);
    if (refusal !== undefined) throw new Error(refusal);
    if (!this.open) throw new Error("the call has ended");
    await port.run(target, sessionId);
    this.#log.info({ destination: target.name, mode: target.mode }, "call transferred");
    this.#finish(CLOSE.normal, "call transferred", false);
  }

  /**
   * The agent's waiting sounds, encoded and framed like its speech. Filler frames carry no marks:
   * marks say where the agent's audio has played, and an outstanding one keeps the agent audible.
   */
  playWaiting(sounds: WaitingSounds): WaitingCues {
    return this.#outbound.playWaiting(sounds);
  }

  attach(handler: ConnectionHandler): void {
    this.#inbound.attach(handler);
    if (this.#closeInfo !== undefined) handler.closed(this.#closeInfo.code, this.#closeInfo.reason);
  }

  /** The caller's media and the playback reports straight to the session's mode (commands, digits and the close still to the handler). */
  hearDirectly(listener: DirectListener | undefined): void {
    this.#inbound.hearDirectly(listener);
  }

  /**
   * Close the stream. A normal close (end_call, idle, call limit) first lets the caller hear what
   * was already said — until the last mark echoes, bounded — then hangs up through the carrier.
   */
  close(code: number, reason: string): void {
    if (this.#closed || this.#closing !== undefined) return;
    // The call is ending: the waiting sounds stop; what the agent said still plays.
    this.#outbound.stopWaiting();
    const playMs = this.#outbound.playout.closingPlayMs(this.#outbound.heldMs);
    if (code !== CLOSE.normal || this.#stopped || playMs === undefined) {
      this.#finish(code, reason, !this.#stopped);
      return;
    }
    const timer = this.#clock.setTimeout(() => this.#finish(code, reason, true), playMs);
    this.#closing = { code, reason, timer };
    this.#log.debug({ unplayedMs: this.unplayedMs }, "closing after playback");
  }

  // ── carrier → session ─────────────────────────────────────────────────────────────────

  #receive(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.#closed) return;
    this.#keepAlive.seen();
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    // ws has checked a text message's UTF-8 already (it closes 1007 otherwise, RFC 6455 §8.1): a
    // text frame of a size the codec reads is decoded here without a second check.
    const frame = isBinary || bytes.byteLength > MAX_TEXT_FRAME_CHARS ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes.toString("utf8");
    const inbound = this.#codec.decode(frame, isBinary);
    switch (inbound.kind) {
      case "start":
        this.#start({ carrier: this.#codec.carrier, ...inbound });
        return;
      case "media":
        this.#tick();
        if (this.#audio === undefined) return this.#ignore("media before start");
        if (this.#closing !== undefined) return;
        this.#inbound.media(inbound.chunk, inbound.payload);
        return;
      case "mark":
        this.#onMark(inbound.name);
        return;
      case "dtmf":
        this.#inbound.dtmf(inbound.digit);
        return;
      case "stop":
        this.#stopped = true;
        this.#log.info({ callId: this.#call?.callId }, "carrier stop");
        this.#finish(CLOSE.normal, "carrier stop", false);
        return;
      case "ignored":
        this.#ignore(inbound.reason);
        return;
    }
  }

  #start(call: CarrierCall): void {
    if (this.#call !== undefined) return this.#ignore("second start");
    this.#startTimer?.cancel();
    const problem = carrierFormatProblem(call.encoding, call.sampleRate);
    if (problem !== undefined) return this.refuse(problem);
    this.#call = call;
    this.#audio = new CarrierAudio(call.encoding, call.sampleRate, this.#codec.framing?.(call.encoding, call.sampleRate), this.#codec.marks ? MARK_EVERY_MS : undefined);
    this.#inbound.start(this.#audio);
    this.#outbound.start(this.#audio, call);
    this.#log.info({ streamId: call.streamId, callId: call.callId, encoding: call.encoding, sampleRate: call.sampleRate }, "carrier stream started");
    this.#resolveStarted(call);
  }

  #ignore(given: string): void {
    const reason = this.ignored.size < IGNORED_REASONS || this.ignored.has(given) ? given : OTHER_REASONS;
    const seen = this.ignored.get(reason) ?? 0;
    this.ignored.set(reason, seen + 1);
    if (seen === 0) this.#log.debug({ reason }, "carrier frame ignored");
  }

  /**
   * A start that never came or cannot be served, or a stream its gateway will not serve: closed
   * 1008 with the reason, no session starts and no hang-up is asked of the carrier.
   */
  refuse(reason: string): void {
    this.#log.warn({ reason }, "carrier stream refused");
    this.#rejectStarted(new Error(reason));
    this.#finish(CLOSE.policy, reason, false);
  }

  // ── playback truth ────────────────────────────────────────────────────────────────────

  #onMark(name: string): void {
    if (!this.#outbound.playout.echoed(name)) return;
    this.#report(this.agentUnplayedMs);
    if (this.#closing !== undefined && this.#outbound.playout.outstanding === 0 && this.#outbound.heldMs === 0) {
      this.#finish(this.#closing.code, this.#closing.reason, true);
    }
  }

  /** Inbound media is the carrier's 20 ms tick: while marks are outstanding the agent is still audible. */
  #tick(): void {
    const { playout } = this.#outbound;
    if (playout.outstanding === 0) return;
    const overdue = playout.giveUpIfOverdue();
    if (overdue !== undefined) {
      this.#log.warn({ mark: overdue.name, overdueMs: overdue.overdueMs }, "carrier did not echo marks; playback estimated in real time");
      if (this.#closing !== undefined) this.#finish(this.#closing.code, this.#closing.reason, true);
      return;
    }
    this.#report(Math.max(this.agentUnplayedMs, KEEPALIVE_MS));
  }

  #report(bufferedMs: number): void {
    this.#inbound.playback(Math.min(MAX_BUFFERED_MS, Math.max(0, Math.round(bufferedMs))));
  }

  // ── socket ────────────────────────────────────────────────────────────────────────────

  #finish(code: number, reason: string, hangUp: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing?.timer.cancel();
    this.#closing = undefined;
    this.#startTimer?.cancel();
    this.#keepAlive.stop();
    this.#outbound.close();
    this.#rejectStarted(new Error(reason));
    try {
      this.#ws.close(code, clipReason(reason));
    } catch (err) {
      this.#log.debug({ err }, "carrier close failed");
      this.#ws.terminate();
    }
    const hang = this.#options.hangUp;
    if (hangUp && this.#call !== undefined && hang !== undefined) {
      hang().catch((err: unknown) => this.#log.warn({ err }, "carrier hang-up failed"));
    }
  }

  #onClose(code: number, reason: string): void {
    const first = !this.#closed;
    this.#finish(code, reason, false);
    this.#closeInfo = { code: this.#stopped ? CLOSE.normal : code, reason: this.#stopped ? "carrier stop" : reason };
    this.#resolveHungUp();
    const handler = this.#inbound.handler;
    if (first || handler !== undefined) handler?.closed(this.#closeInfo.code, this.#closeInfo.reason);
  }
}

/** Run `send` with `socket` corked: its writes leave in one syscall once it returns (Node's `Writable.cork`, which nests). */
function corked(socket: Pick<Duplex, "cork" | "uncork">, send: () => void): void {
  socket.cork();
  try {
    send();
  } finally {
    socket.uncork();
  }
}
