import type { Clock } from "../clock.js";
import { SmallMap, SmallSet } from "../small-map.js";
import type { GuardedOutput } from "../turn/guarded-output.js";
import type { ToolOutcome } from "./tool-runner.js";

/** A response the service gives as the agent's reply (out-of-band lines are not replies). */
export interface Reply {
  readonly responseId: string;
  text: string;
  itemId: string | undefined;
  /** Its tool calls by call id, once it makes one (most replies make none). */
  calls: Map<string, Promise<ToolOutcome>> | undefined;
  /** Barged in on (or cancelled) before the caller heard all of it. */
  interrupted: boolean;
  /** The service has finished it (`response.done`): nothing left to cancel there. */
  done: boolean;
  /** When its first audio arrived (ms, session clock). */
  firstAudioAt: number | undefined;
  /** Ms of its audio that arrived. */
  audioMs: number;
  /** Its transcript on the way to the client, through the output guardrails (the runner sets it when the reply starts). */
  output: GuardedOutput | undefined;
  /** It answers a caller turn an input guardrail refused: cut, its calls not run, its item removed from the model's memory. */
  forget: boolean;
  /** The caller's speech this reply answers, if it answers speech. */
  speech: SpeechTurn | undefined;
  /** Ms of its model audio the service was told were heard (`S2sSession.truncate`), once told. */
  truncatedMs?: number;
}

/** The caller's speech, timed: when it ended (the service's VAD) and when a response first answered it (ms, session clock). */
interface SpeechTurn {
  readonly endedAt: number;
  respondedAt?: number;
}

/** What a barge-in cut: replies finished at the service but still playing, and the reply in flight. */
export interface Interrupted {
  readonly playing: readonly Reply[];
  readonly current: Reply | undefined;
}

/**
 * The s2s replies through their life (times in ms on the session clock): the caller's speech
 * waiting for a response to answer it; the reply in flight (the latest response started); each
 * reply by its response id until the service has finished it; and replies the service finished
 * but the caller is still hearing (a phone line buffers seconds).
 */
export class S2sReplies {
  readonly #clock: Clock;
  /** The caller's last speech, until a response answers it. */
  #speech: SpeechTurn | undefined;
  #current: Reply | undefined;
  #latest: Reply | undefined;
  readonly #byResponse = new SmallMap<string, Reply>();
  readonly #playing = new SmallSet<Reply>();
  /** A tool step ended and its results ask for the next response, which has not started yet. */
  #followUp = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The reply in flight: started, and not yet ended or interrupted. */
  get current(): Reply | undefined {
    return this.#current;
  }

  /** A reply is in flight, or the caller is still hearing one. */
  get inFlight(): boolean {
    return this.#current !== undefined || this.#playing.size > 0;
  }

  /** A reply is in flight or still heard, or a tool step's results are on their way to the response that answers them. */
  get pending(): boolean {
    return this.inFlight || this.#followUp;
  }

  /** The caller's speech has ended and no response answers it yet. */
  get awaitingAnswer(): boolean {
    return this.#speech !== undefined;
  }

  /** The reply started last: the one answering the caller's last speech, unless that still waits for one (`awaitingAnswer`). */
  get latest(): Reply | undefined {
    return this.#latest;
  }

  /** The caller still hears, or waits to hear, `reply`. */
  heard(reply: Reply): boolean {
    return reply === this.#current || this.#playing.has(reply);
  }

  /** The reply a response started, until the service has finished it. */
  get(responseId: string): Reply | undefined {
    return this.#byResponse.get(responseId);
  }

  /** The caller stopped speaking. An end the service inferred from its own answer dates nothing: no turn is timed from it. */
  speechStopped(inferred: boolean): void {
    this.#speech = inferred ? undefined : { endedAt: this.#clock.now() };
  }

  /** A response started: from now the reply in flight, answering the caller's speech if some was waiting. */
  start(responseId: string): Reply {
    const speech = this.#speech;
    this.#speech = undefined;
    if (speech !== undefined) speech.respondedAt ??= this.#clock.now();
    const reply: Reply = {
      responseId,
      text: "",
      itemId: undefined,
      calls: undefined,
      interrupted: false,
      done: false,
      firstAudioAt: undefined,
      audioMs: 0,
      output: undefined,
      forget: false,
      speech,
    };
    this.#byResponse.set(responseId, reply);
    this.#followUp = false;
    this.#current = reply;
    this.#latest = reply;
    return reply;
  }

  /** The service finished the response (`response.done`): its reply, marked done and no longer found by id. */
  done(responseId: string): Reply | undefined {
    const reply = this.#byResponse.get(responseId);
    if (reply === undefined) return undefined;
    this.#byResponse.delete(responseId);
    reply.done = true;
    return reply;
  }

  /** The caller hears `reply` until `playedOut` resolves: in flight meanwhile, and cut by a barge-in. */
  async hear(reply: Reply, playedOut: () => Promise<void>): Promise<void> {
    this.#playing.add(reply);
    await playedOut();
    this.#playing.delete(reply);
  }

  /**
   * The reply has ended (heard, cancelled, or a step that only called tools): no longer in flight.
   * A tool step hands the caller's speech on to the response after its results: the turn is timed to that one's audio.
   * `continues`: its results ask for that response (it is `pending` until it starts).
   */
  ended(reply: Reply, step: boolean, continues = false): void {
    if (reply === this.#current) this.#current = undefined;
    if (step && continues) this.#followUp = true;
    if (step && reply.speech !== undefined) this.#speech ??= reply.speech;
  }

  /** `reply` alone is cut before any of it was heard (an input guardrail refused what it answers). */
  cut(reply: Reply): void {
    reply.interrupted = true;
    this.#playing.delete(reply);
    if (reply === this.#current) this.#current = undefined;
  }

  /** Barge-in or cancel: every reply the caller was hearing or waiting for is interrupted; none is in flight any more. */
  interrupt(): Interrupted {
    const current = this.#current;
    const playing = this.#playing.values().filter((reply) => reply !== current);
    for (const reply of playing) reply.interrupted = true;
    this.#playing.clear();
    if (current !== undefined) current.interrupted = true;
    this.#current = undefined;
    this.#followUp = false;
    return { playing, current };
  }
}

/**
 * A spoken answer's stages (protocol.md `metrics.turn`): `endpointMs`, end of the caller's
 * speech → the service starting its response (its turn detection); `voiceToVoiceMs`, end of
 * speech → the answer's first audio playing at the listener (`playbackStartedAt`: client reports,
 * carrier marks), or leaving the gateway when nothing reports playback. Only for a reply to speech.
 */
export function turnLatencies(reply: Reply, playbackStartedAt: number | undefined): { endpointMs?: number; voiceToVoiceMs?: number } {
  const speech = reply.speech;
  if (speech?.respondedAt === undefined) return {};
  const heardAt = playbackStartedAt ?? reply.firstAudioAt;
  return {
    endpointMs: Math.max(0, speech.respondedAt - speech.endedAt),
    ...(reply.firstAudioAt === undefined || heardAt === undefined ? {} : { voiceToVoiceMs: Math.max(0, heardAt - speech.endedAt) }),
  };
}
