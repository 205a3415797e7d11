/**
 * STT reconnection as a decorator over an `SttProvider` (stt-port.ts): the session it opens looks
 * like one STT session, but an unexpected close of its connection is reconnected (bounded, on the
 * one retry loop: src/providers/reconnect.ts) and the audio the provider had not finalized is
 * replayed on the new connection, so no user speech is lost (docs/protocol.md "STT drops").
 * `sendAudio()` and `finalize()` always reach the current connection; events of a connection that
 * was dropped are ignored. What the session does about a reconnect (a count) and a give-up (a
 * fatal error) it says through `SttReconnectOptions`.
 */
import { durationMs } from "../audio/pcm.js";
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { ProviderLog } from "../providers/provider-log.js";
import { isRetryable, reconnect } from "../providers/reconnect.js";
import type { SttEvents, SttOpenOptions, SttProvider, SttSession } from "./stt-port.js";
import { spread } from "../spread.js";
import { ReplayQueue } from "./replay-queue.js";

/**
 * Waits (ms) before the reconnects that follow the first one, which is made at once: a drop
 * mid-speech is replaced as soon as possible, then 250 ms × attempt as before this decorator
 * (docs/protocol.md "Limits", "STT reconnects"). Not the s2s schedule (`RECONNECT_DELAYS_MS`,
 * 250/1000/2000 ms): the caller keeps talking while the link is down and the replay grows.
 */
export const STT_RECONNECT_DELAYS_MS: readonly number[] = [250, 500];
/** Reconnect attempts after one drop: the immediate one, then one per delay above. */
export const STT_RECONNECTS = 1 + STT_RECONNECT_DELAYS_MS.length;
/** Audio kept for replay after a drop: everything since the last final, at most this much (ms). */
export const STT_REPLAY_MS = 30_000;
/** A chunk ending this close past a final's end (ms, rounding of the provider's seconds) counts as finalized. */
const REPLAY_SLACK_MS = 0.5;

export interface SttReconnectOptions {
  /** The waits between attempts. */
  readonly clock: Clock;
  /** Each attempt and each failed one (pino's `Logger` fits). */
  readonly log: ProviderLog;
  /** A dropped connection was replaced and the replay sent on the new one. */
  readonly reconnected: () => void;
  /** Every attempt after a drop failed: the link is gone for good. Called once, with a fatal `connection` error. */
  readonly gaveUp: (error: GatewayError) => void;
}

/** `provider`, with its sessions reconnected after a drop and the unfinalized audio replayed. */
export function reconnectingStt(provider: SttProvider, options: SttReconnectOptions): SttProvider {
  return {
    kind: provider.kind,
    open: (openOptions, events) => ReconnectingSttSession.open(provider, openOptions, events, options),
  };
}

/** One connection of the session: `retired` once it dropped, was replaced, or the session closed. */
interface Link {
  session: SttSession | undefined;
  retired: boolean;
}

class ReconnectingSttSession implements SttSession {
  readonly #provider: SttProvider;
  readonly #openOptions: SttOpenOptions;
  readonly #events: SttEvents;
  readonly #options: SttReconnectOptions;
  /** Aborted by `close()`: stops a reconnect that is waiting or dialing. */
  readonly #stop = new AbortController();
  #link: Link = { session: undefined, retired: false };
  /** Audio sent since the last final, each chunk with where it ends in the current connection's stream. */
  readonly #replay = new ReplayQueue();
  /** Audio sent on the current connection (ms of its stream). */
  #sentMs = 0;
  #reconnecting = false;
  #gaveUp = false;
  /** Bytes the connections that dropped had dropped by their backlog policy (never replayed: they were over the limit). */
  #retiredDropped = 0;

  private constructor(provider: SttProvider, openOptions: SttOpenOptions, events: SttEvents, options: SttReconnectOptions) {
    this.#provider = provider;
    this.#openOptions = openOptions;
    this.#events = events;
    this.#options = options;
  }

  /** The first connection: rejects as the provider's `open` does (the caller decides what a failure at start means). */
  static async open(provider: SttProvider, openOptions: SttOpenOptions, events: SttEvents, options: SttReconnectOptions): Promise<SttSession> {
    const session = new ReconnectingSttSession(provider, openOptions, events, options);
    const link = session.#link;
    link.session = await provider.open(openOptions, session.#eventsOf(link));
    return session;
  }

  get endpointing(): boolean {
    return this.#current.endpointing;
  }

  /** Caller audio dropped by every connection of this session so far (the close report counts them all). */
  get droppedBytes(): number {
    const link = this.#link;
    return this.#retiredDropped + (link.retired ? 0 : (link.session?.droppedBytes ?? 0));
  }

  // `finalizedAudioMs` is left unset: positions are per connection, and the replay is this decorator's.

  sendAudio(pcm: Uint8Array): void {
    if (this.#stop.signal.aborted) return;
    this.#sentMs += durationMs(pcm.byteLength, this.#openOptions.sampleRate);
    this.#replay.push(pcm, this.#sentMs);
    this.#replay.dropOver((STT_REPLAY_MS * this.#openOptions.sampleRate * 2) / 1000); // PCM16 mono: 2 bytes a sample
    this.#current.sendAudio(pcm);
  }

  finalize(): void {
    this.#current.finalize();
  }

  /** Close the current connection; a reconnect in progress stops, and a connection it opens after this is closed at once. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#current.close();
  }

  get #current(): SttSession {
    const session = this.#link.session;
    if (session === undefined) throw new GatewayError("internal", "the STT session was used before its first connection opened", { fatal: true });
    return session;
  }

  /** The events of one connection, passed on while it is the session's; its drop starts a reconnect. */
  #eventsOf(link: Link): SttEvents {
    return {
      partial: (text, info) => {
        if (!link.retired) this.#events.partial(text, info);
      },
      final: (text, info) => {
        if (link.retired) return;
        this.#finalized(link.session?.finalizedAudioMs);
        this.#events.final(text, info);
      },
      speechStarted: () => {
        if (!link.retired) this.#events.speechStarted();
      },
      error: (error, info) => this.#events.error(error, info),
      closed: (info) => {
        if (link.retired) return;
        link.retired = true;
        if (!info.expected) this.#retiredDropped += link.session?.droppedBytes ?? 0;
        if (info.expected) this.#events.closed(info);
        else void this.#reconnect(); // a no-op once the session is closing
      },
    };
  }

  /**
   * Finalized audio is safe at the provider: only what follows needs a replay after a drop. A
   * final arrives after more audio was sent, so the replay is trimmed up to where the provider
   * says the finalized audio ends (`endMs`, of this connection's stream); a provider that does
   * not say counts everything sent.
   */
  #finalized(endMs: number | undefined): void {
    this.#replay.dropThrough((endMs ?? Number.POSITIVE_INFINITY) + REPLAY_SLACK_MS);
  }

  /** The connection dropped: reopen (bounded) and replay the audio since the last final. */
  async #reconnect(): Promise<void> {
    if (this.#reconnecting || this.#gaveUp || this.#stop.signal.aborted) return;
    this.#reconnecting = true;
    const outcome = await reconnect({
      clock: this.#options.clock,
      immediately: true,
      delaysMs: STT_RECONNECT_DELAYS_MS,
      signal: this.#stop.signal,
      attempt: (n) => this.#reopen(n),
      // A failure another attempt cannot cure (a refused key: a fatal GatewayError) ends the reconnects at once.
      retryable: isRetryable,
      failed: (error) => this.#options.log.warn({ err: error }, "stt reconnect failed"),
    });
    this.#reconnecting = false;
    if (outcome.kind === "connected") {
      this.#options.reconnected();
    } else if (outcome.kind !== "stopped") {
      this.#gaveUp = true;
      if (outcome.kind === "refused") {
        // Named as the provider names it (a refused key names its variable), not as a count of attempts.
        const refusal = outcome.error;
        this.#options.gaveUp(
          refusal instanceof GatewayError && refusal.fatal
            ? refusal
            : new GatewayError("connection", `speech recognition was lost and could not reconnect: ${refusal.message}`, { fatal: true, cause: refusal }),
        );
      } else {
        const last = outcome.last;
        this.#options.gaveUp(
          new GatewayError("connection", `speech recognition was lost and ${STT_RECONNECTS} reconnects failed`, { fatal: true, ...(last === undefined ? {} : { cause: last }) }),
        );
      }
      this.#events.closed({ expected: false });
    }
  }

  /** One attempt: a new connection that becomes the session's, its stream starting with the replay. */
  async #reopen(attempt: number): Promise<void> {
    this.#options.log.warn({ attempt }, "stt reconnect");
    const link: Link = { session: undefined, retired: false };
    const session = await this.#provider.open(spread(this.#openOptions, { signal: this.#stop.signal }), this.#eventsOf(link));
    if (this.#stop.signal.aborted || link.retired) {
      link.retired = true;
      await session.close().catch(() => undefined);
      if (this.#stop.signal.aborted) return; // closed meanwhile: the loop stops
      throw new Error("the new STT connection closed while it opened");
    }
    link.session = session;
    this.#link = link;
    this.#sentMs = 0;
    this.#replay.resend((chunk) => {
      this.#sentMs += durationMs(chunk.byteLength, this.#openOptions.sampleRate);
      session.sendAudio(chunk);
      return this.#sentMs;
    });
  }
}
