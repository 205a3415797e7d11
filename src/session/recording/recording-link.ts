import { bytesOf } from "../../audio/audio-payload.js";
import type { SessionAudio } from "../../audio/rates.js";
import type { EventBody } from "../../events.js";
import type { ClientLink, ConnectionHandler } from "../../transport/client-connection.js";
import type { ServerEvent } from "../../transport/protocol.js";

/** What the recorder hears of a link: both directions of audio, the playback reports, the events. */
export interface LinkTap {
  /** The mode declared its formats (before any audio). */
  formats(audio: SessionAudio, playbackRate: number): void;
  /** Caller audio, in the session's input format, arriving now. */
  callerAudio(chunk: Uint8Array): void;
  /** Agent audio, in the session's output format, handed to the link now. */
  agentAudio(chunk: Uint8Array): void;
  /** The listener still has `bufferedMs` to play. */
  playback(bufferedMs: number): void;
  /** An event the session emitted (after the link has acted on it: a cancel has cleared playback). */
  event(event: EventBody): void;
}

/**
 * A `ClientLink` that passes everything through and tells a `LinkTap` what crossed it: the one
 * place the recorder meets the session, so no runner knows it is recorded.
 */
export class RecordingLink implements ClientLink {
  readonly #inner: ClientLink;
  readonly #tap: LinkTap;
  /** The inner link's, where it has them (present here exactly when there): a carrier's transfer, the waiting sounds. */
  readonly transferModes?: NonNullable<ClientLink["transferModes"]>;
  readonly transfer?: NonNullable<ClientLink["transfer"]>;
  readonly transferRefusal?: NonNullable<ClientLink["transferRefusal"]>;
  readonly playWaiting?: NonNullable<ClientLink["playWaiting"]>;

  constructor(inner: ClientLink, tap: LinkTap) {
    this.#inner = inner;
    this.#tap = tap;
    if (inner.transferModes !== undefined) this.transferModes = inner.transferModes;
    if (inner.transferRefusal !== undefined) this.transferRefusal = (target) => inner.transferRefusal?.(target);
    if (inner.transfer !== undefined) this.transfer = (target, sessionId) => inner.transfer?.(target, sessionId) ?? Promise.reject(new Error("this link cannot transfer"));
    if (inner.playWaiting !== undefined) {
      this.playWaiting = (sounds) => {
        const cues = inner.playWaiting?.(sounds);
        if (cues === undefined) throw new Error("this link plays no waiting sounds");
        return cues;
      };
    }
  }

  emit(body: EventBody): ServerEvent | undefined {
    const sent = this.#inner.emit(body);
    this.#tap.event(body);
    return sent;
  }

  audio(chunk: Uint8Array, durationMs: number): void {
    this.#inner.audio(chunk, durationMs);
    this.#tap.agentAudio(chunk);
  }

  close(code: number, reason: string): void {
    this.#inner.close(code, reason);
  }

  attach(handler: ConnectionHandler): void {
    const tap = this.#tap;
    // Methods called on the handler, not spread: a class-instance handler keeps its own.
    this.#inner.attach({
      command: (command) => handler.command(command),
      audio: (chunk) => {
        tap.callerAudio(bytesOf(chunk));
        handler.audio(chunk);
      },
      playback: (bufferedMs) => {
        tap.playback(bufferedMs);
        handler.playback(bufferedMs);
      },
      closed: (code, reason) => handler.closed(code, reason),
      ...(handler.dtmf === undefined ? {} : { dtmf: (digit: string) => handler.dtmf?.(digit) }),
    });
  }

  useAudio(audio: SessionAudio): void {
    this.#inner.useAudio(audio);
    let playbackRate: number | undefined;
    try {
      playbackRate = this.#inner.playbackRate;
    } catch {
      // Not ready: the listener's rate is unknown, and so is the recording's (it records none).
    }
    if (playbackRate !== undefined) this.#tap.formats(audio, playbackRate);
  }

  get open(): boolean {
    return this.#inner.open;
  }

  get ready(): ClientLink["ready"] {
    return this.#inner.ready;
  }

  get hungUp(): Promise<void> {
    return this.#inner.hungUp;
  }

  get g711(): ClientLink["g711"] {
    return this.#inner.g711;
  }

  get playbackRate(): number {
    return this.#inner.playbackRate;
  }
}
