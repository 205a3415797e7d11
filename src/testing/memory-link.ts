import { DEFAULT_SESSION_AUDIO, MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE, type SessionAudio } from "../audio/rates.js";
import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";
import type { AnnouncedFormat } from "../transport/audio-edge.js";
import type { ClientLink, ConnectionHandler, DirectListener } from "../transport/client-connection.js";
import { stamp, type Command, type EventBody, type EventType, type LinkCommand, type ServerEvent } from "../transport/protocol.js";

/**
 * A ClientLink in memory: what a session emits lands in `events`; `send` plays the client.
 * Lets a test drive a session with no socket at all.
 */
export class MemoryLink implements ClientLink {
  readonly events: ServerEvent[] = [];
  readonly ready: Promise<AnnouncedFormat> = Promise.resolve({ audioFormat: "pcm16", sampleRate: MIC_SAMPLE_RATE, ttsSampleRate: PLAYBACK_SAMPLE_RATE });
  #resolveHungUp: () => void = () => {};
  readonly hungUp: Promise<void> = new Promise((resolve) => {
    this.#resolveHungUp = resolve;
  });
  closed: { code: number; reason: string } | undefined;
  readonly #clock: Clock;
  #handler: ConnectionHandler | undefined;
  /** The session's mode, when the session hands it the listener directly (as a carrier bridge takes it). */
  #direct: DirectListener | undefined;
  readonly #pending: (Command | LinkCommand)[] = [];
  readonly #waiters: { type: EventType; after: number; resolve: (event: ServerEvent) => void }[] = [];

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  get open(): boolean {
    return this.closed === undefined;
  }

  emit(body: EventBody): ServerEvent {
    const event = stamp(body, this.#clock.now());
    if (this.closed !== undefined) return event;
    this.events.push(event);
    for (const waiter of [...this.#waiters]) {
      if (waiter.type === event.type && this.events.length > waiter.after) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
    return event;
  }

  /** Agent audio sent, in order; `afterEvents` is how many events had gone out before the chunk. */
  readonly audioOut: { readonly bytes: number; readonly ms: number; readonly at: number; readonly afterEvents: number }[] = [];

  audio(chunk: Uint8Array, durationMs: number): void {
    if (this.closed === undefined) this.audioOut.push({ bytes: chunk.byteLength, ms: durationMs, at: this.#clock.now(), afterEvents: this.events.length });
  }

  close(code: number, reason: string): void {
    if (this.closed !== undefined) return;
    this.closed = { code, reason };
    this.#resolveHungUp();
    this.#handler?.closed(code, reason);
  }

  /** What the session's mode declared it hears and speaks (the protocol's defaults until then); this link converts nothing. */
  sessionAudio: SessionAudio = DEFAULT_SESSION_AUDIO;

  /** The rate the listener plays at (default the browser's 24 kHz; set 8000 to play a phone line). */
  playbackRate: number = PLAYBACK_SAMPLE_RATE;

  useAudio(audio: SessionAudio): void {
    this.sessionAudio = audio;
  }

  attach(handler: ConnectionHandler): void {
    this.#handler = handler;
    for (const command of this.#pending.splice(0)) this.#hand(handler, command);
  }

  /** Whether the session's mode hears this link directly (`ClientLink.hearDirectly`). */
  get heardDirectly(): boolean {
    return this.#direct !== undefined;
  }

  hearDirectly(listener: DirectListener | undefined): void {
    this.#direct = this.#handler === undefined ? undefined : listener;
  }

  /** Play a client command (buffered until the session attaches, like a socket), or a command only a link hands its session (`LinkCommand`). */
  send(command: Command | LinkCommand): void {
    if (this.#handler === undefined) this.#pending.push(command);
    else this.#hand(this.#handler, command);
  }

  /** As a socket link does: the client's `playback_progress` is the link's playback report (this link holds nothing back). */
  #hand(handler: ConnectionHandler, command: Command | LinkCommand): void {
    if (command.type !== "playback_progress") handler.command(command);
    else if (this.#direct !== undefined) this.#direct.playbackProgress(command.bufferedMs);
    else handler.playback(command.bufferedMs);
  }

  /** Play a keypad digit (a carrier's DTMF frame). */
  sendDtmf(digit: string): void {
    this.#handler?.dtmf?.(digit);
  }

  /** Play a binary audio frame. */
  sendAudio(chunk: Uint8Array): void {
    (this.#direct ?? this.#handler)?.audio(chunk);
  }

  /** The next event of `type` emitted after the `after`-th event (default: after everything seen so far). */
  next<K extends EventType>(type: K, after = this.events.length): Promise<Extract<ServerEvent, { type: K }>> {
    const seen = this.events.slice(after).find((e) => e.type === type);
    if (seen !== undefined) return Promise.resolve(seen as Extract<ServerEvent, { type: K }>);
    return new Promise((resolve) => this.#waiters.push({ type, after, resolve: resolve as (event: ServerEvent) => void }));
  }

  /** Event types in emit order (meta dropped), for compact assertions. */
  types(): EventType[] {
    return this.events.map((e) => e.type);
  }

  /** Events of one type. */
  of<K extends EventType>(type: K): Extract<ServerEvent, { type: K }>[] {
    return this.events.filter((e): e is Extract<ServerEvent, { type: K }> => e.type === type);
  }
}
