import type { S2sEvents, S2sToolCall } from "./s2s-port.js";

type Handler = keyof S2sEvents;
type Args<K extends Handler> = Parameters<NonNullable<S2sEvents[K]>>;
type MediaInfo = Args<"audio">[1];

/**
 * The session's event handlers behind a guard: one that throws is reported (`threw`) and ignored,
 * so an adapter's socket loop never dies of a handler's bug. Every argument passes through as
 * given. Methods on one prototype: no closure per handler per session. Audio and transcript
 * deltas (many a second) are caught in place, allocating nothing per delta. Adapters call them as
 * methods (`events.audio(…)`), never detached.
 */
export class ShieldedEvents implements S2sEvents {
  readonly #events: S2sEvents;
  readonly #threw: (event: string, error: unknown) => void;

  constructor(events: S2sEvents, threw: (event: string, error: unknown) => void) {
    this.#events = events;
    this.#threw = threw;
  }

  audio(pcm: Uint8Array, info: MediaInfo): void {
    try {
      this.#events.audio(pcm, info);
    } catch (error) {
      this.#threw("audio", error);
    }
  }

  agentTranscript(delta: string, info: MediaInfo): void {
    try {
      this.#events.agentTranscript(delta, info);
    } catch (error) {
      this.#threw("agentTranscript", error);
    }
  }

  speechStarted(): void {
    this.#deliver("speechStarted");
  }

  speechStopped(...args: Args<"speechStopped">): void {
    this.#deliver("speechStopped", ...args);
  }

  userTranscript(...args: Args<"userTranscript">): void {
    this.#deliver("userTranscript", ...args);
  }

  responseStarted(...args: Args<"responseStarted">): void {
    this.#deliver("responseStarted", ...args);
  }

  responseDone(...args: Args<"responseDone">): void {
    this.#deliver("responseDone", ...args);
  }

  toolCall(call: S2sToolCall): void {
    this.#deliver("toolCall", call);
  }

  error(...args: Args<"error">): void {
    this.#deliver("error", ...args);
  }

  reconnected(): void {
    this.#deliver("reconnected");
  }

  closed(...args: Args<"closed">): void {
    this.#deliver("closed", ...args);
  }

  #deliver<K extends Handler>(name: K, ...args: Args<K>): void {
    try {
      const handler = this.#events[name] as ((...a: Args<K>) => void) | undefined;
      handler?.apply(this.#events, args);
    } catch (error) {
      this.#threw(name, error);
    }
  }
}
