/**
 * The local STT's voiced-speech tracking (the design and its measurements: local.ts): fvad
 * (`createVad`) and a `SpeechDetector` (END_SILENCE_MS end silence) cut the session's audio into
 * speech segments, and a voicing check (pitch-range autocorrelation) on fvad's speech frames tells
 * speech from what both VADs take for it but has no pitch (a cough). Two answers come out of it:
 * a segment's voiced start (once it holds VOICED_MIN_MS of voiced frames), and whether a line
 * pocketsphinx prints has that much voiced speech behind it since the previous line.
 *
 * Positions are stream time: ms of audio pushed since the session opened, the clock pocketsphinx's
 * `-time yes` word times run on (both see every byte, from the start). A line is judged by the
 * voiced speech up to its utterance's end, not by everything pushed so far: fvad runs in-process
 * and is ahead of the recognizer, so the next utterance's voice may already be counted when a line
 * comes — counting it then gave it to this line and left the next one with nothing (two quick
 * utterances on a loaded machine: the second was dropped).
 */
import { bytesToSamples, FrameSplitter } from "../../../audio/pcm.js";
import { messageOf } from "../../../errors.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { SpeechDetector } from "../../speech-detector.js";
import { DEFAULT_VAD_FRAME_MS, type Vad } from "../../vad.js";
import { END_SILENCE_MS, LOCAL_STT_SAMPLE_RATE } from "./local-setup.js";

/**
 * The voicing gate: a frame is voiced when the normalized autocorrelation of the last 40 ms peaks
 * at ≥ VOICED_PEAK over pitch lags of 2–12.5 ms (500–80 Hz). Measured on the fixtures: vowels of
 * the flite clips 0.9–1.0, the cough ≤ 0.21, a ±20 LSB noise floor ≤ 0.18.
 */
const VOICED_PEAK = 0.7;
/** Pitch lags in samples at LOCAL_STT_SAMPLE_RATE (2–12.5 ms). */
const PITCH_LAGS = { min: 32, max: 200 } as const;
/** Voiced speech (ms) that confirms fvad's speech start, and that a line needs to be reported. */
export const VOICED_MIN_MS = 60;
/**
 * Voiced runs kept for lines still to come. A line takes the runs before its end, so only speech
 * pocketsphinx has not reported yet is held: a few runs per utterance (pauses between syllables).
 */
const MAX_RUNS = 1000;

/**
 * Peak normalized autocorrelation of `x` over pitch lags (0 for silence): near 1 for a vowel, low
 * for noise. Stops at the first lag reaching `enough`.
 */
function periodicity(x: Int16Array, enough: number): number {
  let best = 0;
  for (let lag = PITCH_LAGS.min; lag <= PITCH_LAGS.max; lag++) {
    let xy = 0;
    let xx = 0;
    let yy = 0;
    for (let n = 0; n + lag < x.length; n++) {
      const a = x[n] ?? 0;
      const b = x[n + lag] ?? 0;
      xy += a * b;
      xx += a * a;
      yy += b * b;
    }
    if (xx > 0 && yy > 0) best = Math.max(best, xy / Math.sqrt(xx * yy));
    if (best >= enough) break;
  }
  return best;
}

export interface VoicedSpeechEvents {
  /** fvad's current segment reached VOICED_MIN_MS of voiced frames (once per segment). */
  readonly started: () => void;
  /** fvad's segment ended (END_SILENCE_MS of non-speech), voiced or not. */
  readonly ended: () => void;
}

/** One session's voiced-speech tracker over 16 kHz PCM16; it owns (and closes) the session's fvad. */
export class VoicedSpeech {
  readonly #vad: Vad;
  readonly #log: ProviderLog;
  readonly #events: VoicedSpeechEvents;
  readonly #detector = new SpeechDetector({ minSilenceMs: END_SILENCE_MS });
  /** The same 20 ms frames fvad cuts (both split from the start of the stream), for the voicing check. */
  readonly #frames = new FrameSplitter(LOCAL_STT_SAMPLE_RATE, DEFAULT_VAD_FRAME_MS);
  /** The last two frames: the voicing window. */
  readonly #window = new Int16Array(2 * (LOCAL_STT_SAMPLE_RATE / 1000) * DEFAULT_VAD_FRAME_MS);
  /** Voiced speech (ms) in fvad's current speech segment; `started` went out once it reached VOICED_MIN_MS. */
  #segmentVoicedMs = 0;
  /** Stream time (ms) at the end of the frames judged so far. */
  #positionMs = 0;
  /**
   * Voiced runs [start, end) in stream ms not yet taken by a line, oldest first; contiguous voiced
   * frames extend the last run. Bounded: at most MAX_RUNS (older ones are dropped).
   */
  readonly #runs: { startMs: number; endMs: number }[] = [];

  constructor(vad: Vad, log: ProviderLog, events: VoicedSpeechEvents) {
    this.#vad = vad;
    this.#log = log;
    this.#events = events;
  }

  /** fvad + detector + voicing over the audio; the events fire as the frames are judged, in order. */
  push(pcm: Uint8Array): void {
    let verdicts;
    try {
      verdicts = this.#vad.push(pcm);
    } catch (error) {
      this.#log.warn({ err: messageOf(error) }, "local stt VAD failed on a chunk; skipped");
      this.#frames.push(pcm); // fvad consumed the chunk too: stay aligned
      return;
    }
    const frames = this.#frames.push(pcm);
    verdicts.forEach((verdict, i) => {
      const samples = bytesToSamples(frames[i] ?? new Uint8Array(0));
      const half = this.#window.length / 2;
      this.#window.copyWithin(0, half);
      this.#window.set(samples.subarray(0, half), half);
      const event = this.#detector.push(verdict);
      if (event?.type === "start") this.#segmentVoicedMs = 0;
      if (verdict.speech && this.#detector.speaking && periodicity(this.#window, VOICED_PEAK) >= VOICED_PEAK) {
        const before = this.#segmentVoicedMs;
        this.#addVoiced(this.#positionMs);
        this.#segmentVoicedMs += DEFAULT_VAD_FRAME_MS;
        if (before < VOICED_MIN_MS && this.#segmentVoicedMs >= VOICED_MIN_MS) this.#events.started();
      }
      this.#positionMs += DEFAULT_VAD_FRAME_MS;
      if (event?.type === "end") this.#events.ended();
    });
  }

  /**
   * A line was printed for an utterance ending at `untilMs` (stream time; default: all audio so
   * far): true when VOICED_MIN_MS of voiced speech came before that point since the last line
   * taken. Either way, the voiced speech up to `untilMs` is used up; later speech waits for its own line.
   */
  takeLine(untilMs = Number.POSITIVE_INFINITY): boolean {
    let voicedMs = 0;
    while (this.#runs.length > 0) {
      const run = this.#runs[0]!;
      if (run.startMs >= untilMs) break;
      const end = Math.min(run.endMs, untilMs);
      voicedMs += end - run.startMs;
      if (run.endMs > untilMs) {
        run.startMs = untilMs;
        break;
      }
      this.#runs.shift();
    }
    return voicedMs >= VOICED_MIN_MS;
  }

  #addVoiced(startMs: number): void {
    const last = this.#runs.at(-1);
    if (last !== undefined && last.endMs === startMs) {
      last.endMs = startMs + DEFAULT_VAD_FRAME_MS;
      return;
    }
    this.#runs.push({ startMs, endMs: startMs + DEFAULT_VAD_FRAME_MS });
    if (this.#runs.length > MAX_RUNS) this.#runs.shift();
  }

  close(): void {
    this.#vad.close();
  }
}
