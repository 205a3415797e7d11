/**
 * The local voice activity detector, used by the turn loop when the STT provider does no
 * endpointing. It wraps the WebRTC VAD (libfvad, https://github.com/dpirch/libfvad) compiled to
 * WASM by `@echogarden/fvad-wasm`: a GMM classifier over 10/20/30 ms frames at 8/16/32/48 kHz
 * with four aggressiveness modes (0 = most speech kept … 3 = most non-speech rejected).
 *
 * The WASM module loads once per process, lazily, on the first `createVad` (a shared promise);
 * each session gets its own fvad instance and frame buffer in that module's heap, freed by
 * `close()`. Sessions at 24000 or 44100 Hz are resampled to 16000 Hz first (fvad does not take
 * those rates; the resampler adds ≤ 2.25 ms of latency). Frame times stay in session time: frame k
 * (from 0) reports `atMs = (k + 1) · frameMs`, the ms of audio consumed once it is complete.
 *
 * Warm-up: fvad's noise model starts from trained defaults and settles over its first frames
 * that carry any signal; until then it flags even a ±5 LSB noise floor as speech, and its
 * hang-over stretches that (measured with this build on white noise, modes 0–3: up to 110 ms of
 * non-zero audio at 10 ms frames, 140 ms at 20 ms, 180 ms at 30 ms). So the verdicts of the first
 * `warmupMs` (default 200) of non-zero audio are reported as non-speech; fvad still sees those
 * frames and adapts. All-zero frames (a muted client) do not count, since fvad skips them too
 * (below its kMinEnergy, libfvad src/vad/vad_core.c). The cost: speech in the first 200 ms of a
 * session is reported up to 200 ms late.
 *
 * Turning frame verdicts into speech start/end events is `SpeechDetector`'s job
 * (speech-detector.ts), which is pure and timer-free.
 */
import { FrameSplitter, bytesToSamples, concatBytes, samplesToBytes } from "../audio/pcm.js";
import { Resampler } from "../audio/resample.js";
import { GatewayError, messageOf } from "../errors.js";

/** Rates fvad accepts (Hz). */
export const FVAD_RATES = [8000, 16000, 32000, 48000] as const;
/** Frame lengths fvad accepts (ms). */
export const VAD_FRAME_MS = [10, 20, 30] as const;
export type VadFrameMs = (typeof VAD_FRAME_MS)[number];
/** fvad aggressiveness: 0 (quality) … 3 (very aggressive). */
export type VadMode = 0 | 1 | 2 | 3;

/** Default aggressiveness: 2 ("aggressive"), between 0 (lets more noise through) and 3 (clips more soft speech). */
export const DEFAULT_VAD_MODE: VadMode = 2;
/** Default frame length (ms): matches the gateway's 20 ms audio frames. */
export const DEFAULT_VAD_FRAME_MS: VadFrameMs = 20;
/** Default warm-up (ms of non-zero audio whose verdicts are forced to non-speech); see above. */
export const DEFAULT_VAD_WARMUP_MS = 200;

/** One frame's verdict. */
export interface VadFrame {
  readonly speech: boolean;
  /** End of the frame: ms of session audio consumed since the detector started. */
  readonly atMs: number;
}

export interface VadOptions {
  /** The session's input rate (Hz): 8000, 16000, 24000, 32000, 44100 or 48000. */
  readonly sampleRate: number;
  /** Aggressiveness 0–3; default DEFAULT_VAD_MODE (2). */
  readonly mode?: VadMode | undefined;
  /** Frame length (ms): 10, 20 or 30; default 20. */
  readonly frameMs?: VadFrameMs | undefined;
  /** Non-zero audio (ms) at the start reported as non-speech while fvad settles; default 200, 0 disables. */
  readonly warmupMs?: number | undefined;
}

/** One session's voice activity detector. */
export interface Vad {
  /** The session's rate (Hz): what `push` takes. */
  readonly sampleRate: number;
  /** The rate fvad runs at (Hz): the session's, or 16000 when it had to be resampled. */
  readonly vadRate: number;
  readonly frameMs: VadFrameMs;
  readonly mode: VadMode;
  /**
   * Feeds PCM16 LE mono at `sampleRate`, in chunks of any size (odd lengths included), and
   * returns the verdict of every frame completed, oldest first. Returns [] after `close`.
   */
  push(pcm: Uint8Array): VadFrame[];
  /** Frees the fvad instance. Idempotent. */
  close(): void;
}

/** The Emscripten module `@echogarden/fvad-wasm` exports (only what is used; the package ships no types). */
interface FvadModule {
  _fvad_new(): number;
  _fvad_free(instance: number): void;
  _fvad_set_mode(instance: number, mode: number): number;
  _fvad_set_sample_rate(instance: number, rate: number): number;
  /** 1 speech, 0 non-speech, −1 invalid frame length. */
  _fvad_process(instance: number, frame: number, length: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  /** View of the heap; replaced when memory grows, so read it anew on each use. */
  readonly HEAP16: Int16Array;
}
type FvadFactory = (moduleArg?: object) => Promise<FvadModule>;

// A variable specifier: the package has no type declarations, and the import stays lazy.
const FVAD_PACKAGE: string = "@echogarden/fvad-wasm";
let loading: Promise<FvadModule> | undefined;

async function importFvad(): Promise<FvadModule> {
  try {
    const imported = (await import(FVAD_PACKAGE)) as { default: FvadFactory };
    return await imported.default();
  } catch (error) {
    throw new GatewayError("audio", `could not load the WebRTC VAD (${FVAD_PACKAGE}): ${messageOf(error)}`, { cause: error });
  }
}

/** The process-wide fvad module, loaded on first use; a failed load is retried by the next call. */
function loadFvad(): Promise<FvadModule> {
  if (loading === undefined) {
    const attempt = importFvad();
    loading = attempt;
    void attempt.catch(() => {
      if (loading === attempt) loading = undefined;
    });
  }
  return loading;
}

function vadRateFor(sampleRate: number): number {
  if ((FVAD_RATES as readonly number[]).includes(sampleRate)) return sampleRate;
  if (sampleRate === 24000 || sampleRate === 44100) return 16000;
  throw new GatewayError("audio", `the local VAD cannot run at ${sampleRate} Hz; use 8000, 16000, 24000, 32000, 44100 or 48000`);
}

/** Creates a session's VAD (loading the WASM module on first use). */
export async function createVad(options: VadOptions): Promise<Vad> {
  const mode = options.mode ?? DEFAULT_VAD_MODE;
  const frameMs = options.frameMs ?? DEFAULT_VAD_FRAME_MS;
  if (![0, 1, 2, 3].includes(mode)) throw new GatewayError("audio", `VAD mode must be 0, 1, 2 or 3 (got ${String(mode)})`);
  if (!(VAD_FRAME_MS as readonly number[]).includes(frameMs)) throw new GatewayError("audio", `VAD frames must be 10, 20 or 30 ms (got ${String(frameMs)})`);
  const warmupMs = options.warmupMs ?? DEFAULT_VAD_WARMUP_MS;
  if (!(warmupMs >= 0)) throw new GatewayError("audio", `VAD warm-up must be ≥ 0 ms (got ${warmupMs})`);
  const vadRate = vadRateFor(options.sampleRate);
  const fvad = await loadFvad();
  return new FvadVad(fvad, options.sampleRate, vadRate, mode, frameMs, warmupMs);
}

class FvadVad implements Vad {
  readonly sampleRate: number;
  readonly vadRate: number;
  readonly frameMs: VadFrameMs;
  readonly mode: VadMode;
  readonly #fvad: FvadModule;
  readonly #splitter: FrameSplitter;
  readonly #resampler: Resampler | undefined;
  readonly #frameSamples: number;
  #instance = 0;
  #buffer = 0;
  /** An odd byte held over when resampling (half a sample). */
  #oddByte: Uint8Array | undefined;
  #frames = 0;
  /** Warm-up left (ms of non-zero frames). */
  #warmupMs: number;

  constructor(fvad: FvadModule, sampleRate: number, vadRate: number, mode: VadMode, frameMs: VadFrameMs, warmupMs: number) {
    this.sampleRate = sampleRate;
    this.vadRate = vadRate;
    this.mode = mode;
    this.frameMs = frameMs;
    this.#fvad = fvad;
    this.#warmupMs = warmupMs;
    this.#splitter = new FrameSplitter(vadRate, frameMs);
    this.#resampler = vadRate === sampleRate ? undefined : new Resampler(sampleRate, vadRate);
    this.#frameSamples = this.#splitter.frameBytes / 2;
    const instance = fvad._fvad_new();
    if (instance === 0) throw new GatewayError("audio", "fvad_new failed (out of memory)");
    if (fvad._fvad_set_sample_rate(instance, vadRate) !== 0 || fvad._fvad_set_mode(instance, mode) !== 0) {
      fvad._fvad_free(instance);
      throw new GatewayError("audio", `fvad rejected rate ${vadRate} Hz or mode ${mode}`);
    }
    const buffer = fvad._malloc(this.#frameSamples * 2);
    if (buffer === 0) {
      fvad._fvad_free(instance);
      throw new GatewayError("audio", "fvad frame buffer allocation failed");
    }
    this.#instance = instance;
    this.#buffer = buffer;
  }

  push(pcm: Uint8Array): VadFrame[] {
    if (this.#instance === 0) return [];
    const frames = this.#splitter.push(this.#resampler === undefined ? pcm : this.#resample(this.#resampler, pcm));
    const results: VadFrame[] = [];
    for (const frame of frames) {
      const samples = bytesToSamples(frame);
      // The heap view is read per frame: a growing heap replaces it.
      this.#fvad.HEAP16.set(samples, this.#buffer >> 1);
      const verdict = this.#fvad._fvad_process(this.#instance, this.#buffer, this.#frameSamples);
      if (verdict < 0) throw new GatewayError("audio", `fvad rejected a ${this.#frameSamples}-sample frame at ${this.vadRate} Hz`);
      this.#frames += 1;
      let speech = verdict === 1;
      if (this.#warmupMs > 0 && samples.some((s) => s !== 0)) {
        this.#warmupMs -= this.frameMs;
        speech = false;
      }
      results.push({ speech, atMs: this.#frames * this.frameMs });
    }
    return results;
  }

  close(): void {
    if (this.#instance === 0) return;
    this.#fvad._free(this.#buffer);
    this.#fvad._fvad_free(this.#instance);
    this.#instance = 0;
    this.#buffer = 0;
  }

  /** Session-rate bytes → VAD-rate bytes, carrying an odd byte to the next chunk. */
  #resample(resampler: Resampler, pcm: Uint8Array): Uint8Array {
    let bytes = pcm;
    if (this.#oddByte !== undefined) {
      bytes = concatBytes([this.#oddByte, pcm]);
      this.#oddByte = undefined;
    }
    if (bytes.byteLength % 2 === 1) {
      this.#oddByte = bytes.slice(-1);
      bytes = bytes.subarray(0, -1);
    }
    return samplesToBytes(resampler.process(bytesToSamples(bytes)));
  }
}
