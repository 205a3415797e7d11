/**
 * Audio while waiting (docs/telephony.md "Audio while waiting"): the agent's thinking sound and
 * ambience bed, mixed on the link at the rate its listener plays, the one place agent audio is
 * encoded and paced. The link's pacer asks for filler only when it holds no agent audio
 * (`PacerFeed`), so the thinking sound never plays under speech and speech is never delayed
 * behind more than the filler's small lead; the bed is added under agent audio as it crosses
 * (`under`) and fills the silences (`fill`), continuing one loop across both.
 *
 * The bed is not the agent speaking: the link sends it, and it subtracts it from what it reports
 * to the session's playback clock (`Pacer.agentBacklogMs`), so barge-in, the heard cursor, the
 * idle timer and end_call's wait follow the agent's speech alone.
 */
import { addInto, LoopingSource, mixUnder } from "../audio/mix.js";
import type { WaitingSound, WaitingSounds } from "../audio/waiting-sound.js";
import type { PacerFeed } from "./pacer.js";

/** What a session tells the link's waiting audio. */
export interface WaitingCues {
  /**
   * The agent is thinking (a reply in flight with none of its audio out yet, or a tool running
   * before it speaks) — or no longer is. The thinking sound starts once this has lasted the
   * sound's `afterMs` in silence, and stops at the agent's next audio or when this turns false.
   */
  thinking(on: boolean): void;
}

/** One sound looping at the link's current rate. */
class Loop {
  readonly #sound: WaitingSound;
  #rate = 0;
  #source: LoopingSource | undefined;

  constructor(sound: WaitingSound) {
    this.#sound = sound;
  }

  read(count: number, rate: number): Int16Array {
    if (this.#source === undefined || rate !== this.#rate) {
      this.#rate = rate;
      this.#source = new LoopingSource(this.#sound.at(rate));
    }
    return this.#source.read(count);
  }

  rewind(): void {
    this.#source?.rewind();
  }
}

/**
 * The state of one link's waiting audio. Thinking is `off` (no cue), `armed` (cued at `since`,
 * waiting out `afterMs` of silence) or `playing`; the bed plays from the start to `stop`.
 */
export class WaitingMix implements WaitingCues {
  readonly #thinking: { readonly loop: Loop; readonly gain: number; readonly afterMs: number } | undefined;
  readonly #ambience: { readonly loop: Loop; readonly gain: number } | undefined;
  readonly #now: () => number;
  /** Called when a cue may make filler due sooner than the pacer last asked (the link wakes its pacer). */
  readonly #wake: () => void;
  #state: { readonly kind: "off" } | { readonly kind: "armed" | "playing"; readonly since: number } = { kind: "off" };
  #stopped = false;

  constructor(sounds: WaitingSounds, now: () => number, wake: () => void) {
    this.#thinking = sounds.thinking === undefined ? undefined : { loop: new Loop(sounds.thinking.sound), gain: sounds.thinking.gain, afterMs: sounds.thinking.afterMs };
    this.#ambience = sounds.ambience === undefined ? undefined : { loop: new Loop(sounds.ambience.sound), gain: sounds.ambience.gain };
    this.#now = now;
    this.#wake = wake;
  }

  /** The thinking sound is playing now (for tests and the link's log). */
  get thinkingAudible(): boolean {
    return this.#state.kind === "playing";
  }

  thinking(on: boolean): void {
    if (this.#thinking === undefined || this.#stopped) return;
    if (!on) return this.#silenceThinking();
    if (this.#state.kind !== "off") return;
    this.#state = { kind: "armed", since: this.#now() };
    this.#wake();
  }

  /** Agent speech crosses the link: the thinking sound stops at once (re-armed while the cue holds); the bed goes under it. */
  under(samples: Int16Array, rate: number): Int16Array {
    if (this.#state.kind !== "off") this.#state = { kind: "armed", since: this.#now() };
    this.#thinking?.loop.rewind();
    const ambience = this.#ambience;
    if (ambience === undefined || this.#stopped) return samples;
    return mixUnder(samples, ambience.loop.read(samples.length, rate), ambience.gain);
  }

  /**
   * When filler is next due (epoch ms), given that the agent's audio sent so far ends playing at
   * `agentEndsAt`: now while the bed plays; the end of the thinking sound's wait while it is
   * armed; undefined when there is nothing to play until a cue.
   */
  nextAt(now: number, agentEndsAt: number): number | undefined {
    if (this.#stopped) return undefined;
    if (this.#ambience !== undefined) return now;
    const thinking = this.#thinking;
    const state = this.#state;
    if (thinking === undefined || state.kind === "off") return undefined;
    return state.kind === "playing" ? now : Math.max(state.since, agentEndsAt) + thinking.afterMs;
  }

  /** `count` samples of filler at `rate` for a silence of the agent's, or undefined when nothing is due. */
  fill(count: number, rate: number, now: number, agentEndsAt: number): Int16Array | undefined {
    if (this.#stopped) return undefined;
    const thinking = this.#thinking;
    let state = this.#state;
    if (thinking !== undefined && state.kind === "armed" && now >= Math.max(state.since, agentEndsAt) + thinking.afterMs) {
      state = { kind: "playing", since: state.since };
      this.#state = state;
    }
    const ambience = this.#ambience;
    const playing = thinking !== undefined && state.kind === "playing";
    if (ambience === undefined && !playing) return undefined;
    const out = new Int16Array(count);
    if (ambience !== undefined) addInto(out, ambience.loop.read(count, rate), ambience.gain);
    if (playing) addInto(out, thinking.loop.read(count, rate), thinking.gain);
    return out;
  }

  /**
   * `count` samples of the bed alone, to complete the frame a reply's audio ended in (the link
   * would pad it with silence): undefined without a bed. Never the thinking sound: speech just ended.
   */
  tail(count: number, rate: number): Int16Array | undefined {
    const ambience = this.#ambience;
    if (ambience === undefined || this.#stopped) return undefined;
    const out = new Int16Array(count);
    addInto(out, ambience.loop.read(count, rate), ambience.gain);
    return out;
  }

  /** The session ended: nothing more plays. */
  stop(): void {
    this.#stopped = true;
    this.#state = { kind: "off" };
  }

  #silenceThinking(): void {
    this.#state = { kind: "off" };
    this.#thinking?.loop.rewind();
  }
}

/**
 * A link's pacer feed from its waiting mix: `rate()` is the rate the link plays right now, and
 * `encode` turns filler at that rate into the link's frames (Opus, G.711, carrier framing).
 */
export function waitingFeed(mix: WaitingMix, rate: () => number, encode: (samples: Int16Array) => readonly { readonly data: Uint8Array; readonly ms: number }[]): PacerFeed {
  return {
    nextAt: (now, agentEndsAt) => mix.nextAt(now, agentEndsAt),
    take: (ms, now, agentEndsAt) => {
      const playback = rate();
      const samples = mix.fill(Math.round((ms * playback) / 1000), playback, now, agentEndsAt);
      return samples === undefined ? [] : encode(samples);
    },
  };
}
