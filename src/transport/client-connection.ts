import type { Writable } from "node:stream";
import type { WebSocket } from "ws";
import type { AudioPayload } from "../audio/audio-payload.js";
import { MIC_SAMPLE_RATE, type G711Format, type SessionAudio } from "../audio/rates.js";
import type { WaitingSounds } from "../audio/waiting-sound.js";
import type { Clock } from "../clock.js";
import type { ErrorCode } from "../errors.js";
import type { TransferMode, TransferTarget } from "../manifest/index.js";
import type { Logger } from "../log.js";
import type { AnnouncedFormat, ClientAudioFormat } from "./audio-edge.js";
import { subscribed, type EventSubscription } from "./event-subscription.js";
import { clipReason } from "./peer-socket.js";
import { SocketLink } from "./socket-link.js";
import type { WaitingCues } from "./waiting-mix.js";
import { DEFAULT_LIMITS, parseCommand, stamp, MAX_BUFFERED_MS, type EventBody, type EventType, type Limits, type ServerEvent, type SessionCommand } from "./protocol.js";
import { spread } from "../spread.js";

/** What a session does with a connection's input. */
export interface ConnectionHandler {
  command(command: SessionCommand): void;
  /**
   * The listener's audio, in the session's input format: bytes, or — a carrier's G.711 in
   * passthrough — its canonical base64 text not yet decoded (audio/audio-payload.ts), which a
   * service that takes base64 sends as is. What reads the bytes asks `bytesOf`.
   */
  audio(chunk: AudioPayload): void;
  /**
   * The listener still has `bufferedMs` of agent audio to play: a browser's `playback_progress`
   * plus what the link still holds back, or a carrier's mark echo. The session's `PlaybackClock`
   * takes it (it only ever pushes playback later; src/turn/playback-clock.ts).
   */
  playback(bufferedMs: number): void;
  closed(code: number, reason: string): void;
  /** A telephone keypad digit (0-9, *, #, A-D) the caller pressed. */
  dtmf?(digit: string): void;
}

/**
 * What hears the listener when nothing between the link and the session's mode looks at its
 * audio (no answering-machine screen, no recording tap): the mode itself. A link that takes one
 * (`ClientLink.hearDirectly`) hands it the listener's audio and playback reports straight rather
 * than through the session's handler. Every 20 ms frame of a call crosses this path, and on a
 * process running hundreds of calls each object it crosses is a cache line cold by the call's
 * next frame (docs/benchmarks.md, `bench:carrier-counts`).
 */
export interface DirectListener {
  /** As `ConnectionHandler.audio`. */
  audio(chunk: AudioPayload): void;
  /** As `ConnectionHandler.playback`. */
  playbackProgress(bufferedMs: number): void;
}

/** The session-facing side of any client link (browser socket today, carrier bridge later). */
export interface ClientLink {
  /**
   * Emit an event now; ordering rules apply (see Pacer). Returns the event as stamped for the
   * client, or `undefined` from a link that shows no events (a carrier), which may drop it.
   */
  emit(body: EventBody): ServerEvent | undefined;
  /**
   * Whether the link sends events of `type` on to its client (absent: every type): a carrier's
   * sends none, a browser socket the types its client chose (`?events=`). What an event does to
   * the audio (a barge-in's flush) happens either way.
   */
  shows?(type: EventType): boolean;
  /** Queue agent audio of a known duration. */
  audio(chunk: Uint8Array, durationMs: number): void;
  /** Close with a code and a reason (≤ 123 bytes). Idempotent. */
  close(code: number, reason: string): void;
  /** Start delivering input; frames buffered before this are drained first, in order. */
  attach(handler: ConnectionHandler): void;
  readonly open: boolean;
  /** Resolves with the audio format to announce once the link's codecs are loaded (rejects when they cannot be). */
  readonly ready: Promise<AnnouncedFormat>;
  /** Resolves when the client's socket has closed (a hang-up during start aborts provider handshakes). */
  readonly hungUp: Promise<void>;
  /** The G.711 the link could carry end to end (a carrier sending μ-law or A-law), if any. */
  readonly g711?: G711Format | undefined;
  /**
   * Once `ready` has resolved: the rate (Hz) the listener is played agent audio at, where PCM16 at
   * this rate crosses the link with no resample of its own — a browser's 24 kHz PCM16 (the
   * protocol's `ttsSampleRate`), an Opus client's encoder rate, a call's 8 kHz G.711 or its L16
   * rate. A mode whose audio source can make any rate (a TTS) asks for this one. Throws before `ready`.
   */
  readonly playbackRate: number;
  /**
   * Before `attach` (and before any agent audio): what the session hears and speaks, declared once
   * by its mode (docs/architecture.md "Audio formats"). The link converts the listener's audio to
   * `input` and `output` to the listener's: the only conversion on the path each way, none where
   * the formats match (a G.711 call to a G.711 service, a 24 kHz browser to a 24 kHz service).
   * Until told, the protocol's defaults (`DEFAULT_SESSION_AUDIO`). Throws for a format it cannot carry.
   */
  useAudio(audio: SessionAudio): void;
  /**
   * A phone call's link: how it can hand the caller to a person (`transfer_call`; empty: it
   * cannot). Absent on a link that shows events: its client is sent `transfer.requested` and acts on it.
   */
  readonly transferModes?: readonly TransferMode[];
  /** Why `target` cannot be reached from this call although its mode is among `transferModes` (what the model is told); undefined when it can. */
  transferRefusal?(target: TransferTarget): string | undefined;
  /**
   * Hand the caller to `target` (its line has been heard); resolves once the carrier accepted,
   * rejects when it refused. A warm transfer nobody answers comes back to session `sessionId`.
   */
  transfer?(target: TransferTarget, sessionId: string): Promise<void>;
  /**
   * Once the mode has opened: play the agent's waiting sounds on this link (docs/telephony.md
   * "Audio while waiting") — the bed from now on, the thinking sound on the returned cues — mixed
   * where the link encodes and paces agent audio. What it reports through `playback` stays the
   * agent's own audio. A link without audio (a test's) need not offer it.
   */
  playWaiting?(sounds: WaitingSounds): WaitingCues;
  /**
   * After `attach`: the listener's audio and playback reports go to `listener` directly, not
   * through the handler (commands, digits and the close still do); undefined: through the handler
   * again. A session gives its mode when it would only pass them on (docs/telephony.md "What
   * happens on a call"). A link that never takes one need not offer it.
   */
  hearDirectly?(listener: DirectListener | undefined): void;
}

type Buffered =
  | { readonly kind: "command"; readonly command: SessionCommand }
  | { readonly kind: "playback"; readonly bufferedMs: number }
  | { readonly kind: "audio"; readonly chunk: Uint8Array };

export { clipReason };

/**
 * A browser or device socket speaking client protocol v1: parses frames leniently, enforces
 * the limits, buffers input until the session attaches, paces output, pings, and closes a
 * peer that stops reading or answering (all but the wire format: `SocketLink`).
 */
export class ClientConnection extends SocketLink<Buffered> {
  readonly #limits: Limits;
  /** The events this client is sent (`?events=`); the others are not stamped or serialized. */
  readonly #events: EventSubscription;

  constructor(ws: WebSocket, options: { clock: Clock; log: Logger; limits?: Partial<Limits>; leadMs?: number; format?: ClientAudioFormat; events?: EventSubscription; socket?: Pick<Writable, "write"> }) {
    const limits: Limits = spread(DEFAULT_LIMITS, options.limits);
    const format = options.format ?? { codec: "pcm16", sampleRate: MIC_SAMPLE_RATE };
    super(ws, {
      clock: options.clock,
      log: options.log,
      leadMs: options.leadMs,
      format,
      limits,
      budget: {
        framesPerSecond: limits.maxFramesPerSecond,
        // PCM16 bytes a second at the declared rate, times the allowance.
        audioBytesPerSecond: limits.maxAudioRealtime * 2 * format.sampleRate,
        textBytesPerSecond: limits.maxTextBytesPerSecond,
        burstSeconds: limits.inputBurstSeconds,
      },
      socket: options.socket,
    });
    this.#limits = limits;
    this.#events = options.events ?? "all";
  }

  shows(type: EventType): boolean {
    return subscribed(this.#events, type);
  }

  /** Sends the event if the client chose it (`?events=`); what it does to the audio applies either way. */
  emit(body: EventBody): ServerEvent | undefined {
    const edge = this.edge;
    if (body.type === "audio.completed") {
      // With a bed, the reply's last Opus frame is completed with the bed rather than silence: no gap in it.
      const short = edge?.outboundShortSamples ?? 0;
      const bed = short > 0 && edge !== undefined ? this.waiting?.tail(short, edge.playbackRate) : undefined;
      if (bed !== undefined) for (const frame of edge?.filler(bed) ?? []) this.pacer.audio(frame.data, frame.ms);
      for (const frame of edge?.flushOutbound() ?? []) this.pacer.audio(frame.data, frame.ms);
    } else if (body.type === "reply.cancelled" || body.type === "session.reset") {
      edge?.resetOutbound();
    }
    if (!subscribed(this.#events, body.type)) return undefined;
    const event = stamp(body, this.clock.now());
    this.pacer.event(event);
    return event;
  }

  protected sendText(text: string): void {
    this.peer.write(text, "audio backlog exceeded");
  }

  protected sendAudio(chunk: Uint8Array): void {
    this.peer.write(chunk, "audio backlog exceeded");
  }

  protected dropped(count: number): void {
    this.peer.throttle.warn(this.log, { count }, "client input over budget; frames dropped");
    this.#report("protocol", `input over budget: ${count} frames dropped; send audio in real time and at most ${this.#limits.maxFramesPerSecond} frames a second`);
  }

  protected audioBytesOf(item: Buffered): number | undefined {
    return item.kind === "audio" ? item.chunk.byteLength : undefined;
  }

  protected overflow(): void {
    this.#report("protocol", "too much input before the session started; frames past the limit were dropped");
  }

  /** A non-fatal error the client should see (protocol, audio): reported, nothing else happens. */
  #report(code: ErrorCode, message: string): void {
    this.emit({ type: "error.reported", code, message, fatal: false });
  }

  protected receive(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (isBinary) {
      if (bytes.byteLength === 0) return;
      if (bytes.byteLength > this.#limits.maxBinaryFrameBytes) {
        this.#report("protocol", `binary frame of ${bytes.byteLength} bytes exceeds ${this.#limits.maxBinaryFrameBytes}; send audio in frames of about 20 ms`);
        return;
      }
      this.peer.deliver({ kind: "audio", chunk: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
      return;
    }
    if (bytes.byteLength > this.#limits.maxTextFrameBytes) {
      this.#report("protocol", `text frame of ${bytes.byteLength} bytes exceeds ${this.#limits.maxTextFrameBytes}`);
      return;
    }
    const frame = parseCommand(bytes.toString("utf8"));
    switch (frame.kind) {
      case "command":
        this.peer.deliver(frame.command.type === "playback_progress" ? this.#withHeldAudio(frame.command.bufferedMs) : { kind: "command", command: frame.command });
        return;
      case "invalid-json":
        this.peer.throttle.warn(this.log, { bytes: bytes.byteLength }, "client sent invalid json");
        return;
      case "malformed":
        this.peer.throttle.warn(this.log, { type: frame.type, problem: frame.message }, "client sent malformed command");
        this.#report("protocol", frame.message);
        return;
      case "unknown":
        this.log.debug({ type: frame.type }, "client sent unknown command");
        return;
    }
  }

  /**
   * A browser's `playback_progress` counts the audio it has received and not yet played. Audio
   * this gateway still holds back (the pacer's lead) is unplayed too, so the session hears the sum
   * through `ConnectionHandler.playback` — as the carrier bridge reports its marks. Otherwise a browser whose playout falls behind reports
   * less than the gateway's estimate, the report is ignored, and the heard position runs ahead of
   * what the listener heard. Waiting sounds sent after the agent's last audio are not the agent's:
   * they are left out (`Pacer.agentBacklogMs`).
   */
  #withHeldAudio(bufferedMs: number): Buffered {
    return { kind: "playback", bufferedMs: Math.min(MAX_BUFFERED_MS, Math.round(this.pacer.agentBacklogMs(bufferedMs))) };
  }

  protected hand(handler: ConnectionHandler, item: Buffered): void {
    if (item.kind === "command") handler.command(item.command);
    else if (item.kind === "playback") handler.playback(item.bufferedMs);
    else this.audioIn(handler, item.chunk);
  }
}
