import { bytesOf, type AudioPayload } from "../audio/audio-payload.js";
import { MIC_SAMPLE_RATE, pcm16, type SessionAudio } from "../audio/rates.js";
import { durationMs } from "../audio/pcm.js";
import { GatewayError, messageOf } from "../errors.js";
import type { AgentConfig, ProviderDescriptor, ResolvedConfig } from "../manifest/index.js";
import type { ReplyLoop } from "../pipeline/reply-loop.js";
import { SpeechDetector } from "../pipeline/speech-detector.js";
import { isSttUnavailable, NO_STT, type SttProvider, type SttSession } from "../pipeline/stt-port.js";
import { reconnectingStt } from "../pipeline/stt-reconnect.js";
import type { TtsProvider, TtsSession } from "../pipeline/tts-port.js";
import { createVad, type Vad } from "../pipeline/vad.js";
import { VoiceLoop } from "../pipeline/voice-loop.js";
import type { AgentNote } from "../turn/agent-note.js";
import type { VoiceSettings } from "../pipeline/voice-settings.js";
import type { OutOfBandAsk, OutOfBandSink } from "../transport/protocol.js";
import type { ModeRunner, RunnerContext, TranscriptListener } from "./mode-runner.js";
import { respondOutOfBand } from "./out-of-band.js";
import type { ToolLine, ToolRunner } from "./tool-runner.js";

/** A local-VAD speech edge: this much non-speech ends a stretch (the loop's timers decide the turn). */
const VAD_EDGE_SILENCE_MS = 300;

/** How a gateway turns descriptors into speech providers. */
export interface VoiceProviders {
  stt(descriptor: ProviderDescriptor): SttProvider;
  tts(descriptor: ProviderDescriptor): TtsProvider;
  /** The local VAD for an STT without endpointing; default fvad. */
  vad?: (sampleRate: number) => Promise<Vad>;
}

export interface VoiceRunnerOptions {
  readonly config: AgentConfig;
  readonly loop: ReplyLoop;
  readonly providers: VoiceProviders;
  readonly tools: ToolRunner;
  /** Agent audio for the link, PCM16 at the TTS's own rate (the link converts it for the listener). */
  readonly audio: (pcm: Uint8Array, durationMs: number) => void;
  /**
   * The rate the link plays (`ClientLink.playbackRate`, Hz): the TTS is asked for it, so a TTS
   * that offers it (or converts to it, like the local one) does the only resample and the link
   * passes its audio on untouched.
   */
  readonly playbackRate: number;
  /** Declares the session's formats to the link once TTS has opened: the mic at the STT's rate in, the TTS's rate out. */
  readonly useAudio: (audio: SessionAudio) => void;
  /** The config with every default applied (manifest `resolveConfig`). */
  readonly settings: ResolvedConfig;
  /** Aborts the providers' handshakes (the client hung up during start, or the start timed out). */
  readonly signal?: AbortSignal;
  /** The agent is thinking (the turn state is `thinking`: a reply in flight, none of its audio out yet), or no longer is. */
  readonly thinking?: (on: boolean) => void;
}

/** The pipeline's view of a resolved config (config.md "Pipeline fields at runtime"). */
export function voiceSettings(settings: ResolvedConfig): VoiceSettings {
  const { turnTaking, interruption, silence } = settings;
  return {
    detection: turnTaking.detection,
    minSilenceMs: turnTaking.minSilenceMs,
    maxSilenceMs: turnTaking.maxSilenceMs,
    startSpeakingFloorMs: turnTaking.startSpeakingFloorMs,
    userTurnLimit: turnTaking.userTurnLimit,
    interruption,
    deadAirCoverMs: silence.deadAirCoverMs,
    preemptiveGeneration: turnTaking.preemptiveGeneration,
    continuationWindowMs: interruption.continuationWindowMs,
    nudge: silence.nudge,
    errorPhrase: settings.errorPhrase,
  };
}

/**
 * Pipeline mode: mic audio → STT (+ local VAD when the STT has no endpointing) → the voice
 * loop → TTS, asked for the link's playback rate → the link at the TTS's own rate (converted, at
 * most once, for the listener: not at all when the TTS gave the rate asked for).
 * Owns the provider links: STT drops are reconnected with the unfinalized audio replayed
 * (pipeline/stt-reconnect.ts), so no user speech is lost; a link lost for good is fatal.
 */
export class VoiceRunner implements ModeRunner {
  readonly #ctx: RunnerContext;
  readonly #tts: TtsSession;
  readonly #loop: VoiceLoop;
  readonly #stt: SttSession;
  #vad: Vad | undefined;
  #detector: SpeechDetector | undefined;
  #closed = false;
  /** While set, STT events go here instead of the loop (`holdTurns`). */
  #held: TranscriptListener | undefined;
  /** The agent's model (out-of-band responses call it directly). */
  readonly #model: ReplyLoop;

  private constructor(ctx: RunnerContext, options: VoiceRunnerOptions, stt: SttSession, tts: TtsSession) {
    this.#ctx = ctx;
    this.#model = options.loop;
    this.#stt = stt;
    this.#tts = tts;
    this.#loop = new VoiceLoop({
      clock: ctx.clock,
      log: ctx.log,
      settings: voiceSettings(options.settings),
      reply: options.loop,
      stt,
      tts,
      ledger: ctx.ledger,
      guardrails: ctx.guardrails,
      emit: (event) => ctx.emit(event),
      wants: (type) => ctx.wants(type),
      audio: (pcm, ms) => options.audio(pcm, ms),
      activity: () => ctx.activity(),
      admitTurn: () => ctx.admitTurn(),
      toolCovering: () => options.tools.coveringCalls > 0,
      toolsRunning: () => options.tools.runningCalls > 0,
      count: (what) => ctx.count(what),
      phaseChanged: (to) => options.thinking?.(to === "thinking"),
    });
  }

  /** Open STT and TTS concurrently; if STT fails while TTS is up, speak `startFailurePhrase` first. */
  static async open(ctx: RunnerContext, options: VoiceRunnerOptions): Promise<VoiceRunner> {
    const { config, providers } = options;
    if (config.stt === undefined || config.tts === undefined) throw new GatewayError("internal", "a pipeline agent needs stt and tts providers.", { fatal: true });
    const sttProvider = reconnectingStt(providers.stt(config.stt), {
      clock: ctx.clock,
      log: ctx.log,
      reconnected: () => ctx.count("provider_reconnect"),
      gaveUp: (error) => ctx.fatal(error),
    });
    const ttsProvider = providers.tts(config.tts);
    const ref: { runner?: VoiceRunner } = {};
    const settings = voiceSettings(options.settings);
    // STT events before the runner exists (none expected: no audio was sent yet) are dropped.
    const events = {
      partial: (text: string, info: { readonly eotConfidence?: number }) => ref.runner?.sttEvent({ kind: "partial", text, eotConfidence: info.eotConfidence }),
      final: (text: string, info: { readonly endOfTurn: boolean }) => ref.runner?.sttEvent({ kind: "final", text, endOfTurn: info.endOfTurn }),
      speechStarted: () => ref.runner?.sttEvent({ kind: "speech" }),
      error: (error: Error, info: { readonly recoverable: boolean }) => {
        ctx.log.warn({ err: error, recoverable: info.recoverable }, "stt error");
        ctx.count("provider_error");
      },
      closed: () => {}, // drops are reconnected by the decorator; its give-up reaches `gaveUp`
    };
    const sttOptions = {
      sampleRate: MIC_SAMPLE_RATE,
      prompt: config.sttPrompt,
      minSilenceMs: settings.minSilenceMs,
      maxSilenceMs: settings.maxSilenceMs,
      signal: options.signal,
    };
    const [opened, tts] = await Promise.allSettled([sttProvider.open(sttOptions, events), ttsProvider.open({ sampleRate: options.playbackRate, signal: options.signal })]);
    // A recognizer that is not installed here: the session still talks, on typed turns.
    const fallback = opened.status === "rejected" && isSttUnavailable(opened.reason);
    const stt: PromiseSettledResult<SttSession> = fallback ? { status: "fulfilled", value: NO_STT } : opened;
    // Before any audio (the start-failure phrase included): the link converts the TTS's rate, the STT hears the mic rate.
    if (tts.status === "fulfilled") options.useAudio({ input: pcm16(MIC_SAMPLE_RATE), output: pcm16(tts.value.sampleRate) });
    if (fallback) {
      ctx.log.warn({ err: opened.reason }, "stt unavailable: typed turns only");
      ctx.emit({ type: "error.reported", code: "stt", message: `${messageOf(opened.reason)} Until then, type to the agent.`, fatal: false });
    }
    if (stt.status === "rejected" || tts.status === "rejected") {
      if (stt.status === "rejected" && tts.status === "fulfilled" && config.startFailurePhrase !== undefined) {
        // Spoken, then played out: the socket closes only after the caller heard it.
        const spokenMs = await speakOnce(tts.value, config.startFailurePhrase, options.audio).catch(() => 0);
        await ctx.clock.sleep(spokenMs).catch(() => {});
      }
      if (stt.status === "fulfilled") await stt.value.close().catch(() => {});
      if (tts.status === "fulfilled") await tts.value.close().catch(() => {});
      const failed: unknown = stt.status === "rejected" ? stt.reason : (tts as PromiseRejectedResult).reason;
      throw failed instanceof GatewayError ? failed : new GatewayError(stt.status === "rejected" ? "stt" : "tts", `speech provider could not open: ${messageOf(failed)}`, { fatal: true, cause: failed });
    }
    const runner = new VoiceRunner(ctx, options, stt.value, tts.value);
    ref.runner = runner;
    if (!fallback && !stt.value.endpointing && settings.detection === "auto") {
      runner.#vad = await (providers.vad ?? ((sampleRate: number) => createVad({ sampleRate })))(MIC_SAMPLE_RATE);
      runner.#detector = new SpeechDetector({ minSilenceMs: VAD_EDGE_SILENCE_MS });
    }
    return runner;
  }

  get userSpeaking(): boolean {
    return this.#loop.userSpeaking;
  }

  get busy(): boolean {
    return this.#loop.busy;
  }

  get queuedTurns(): number {
    return this.#loop.queuedTurns;
  }

  greet(text: string): void {
    this.#loop.say(text);
  }

  userText(text: string): void {
    this.#loop.userText(text);
  }

  cancel(): void {
    this.#loop.cancel();
  }

  strand(): void {
    this.#loop.reset();
  }

  audio(payload: AudioPayload): void {
    if (this.#closed) return;
    const chunk = bytesOf(payload);
    this.#stt.sendAudio(chunk);
    const vad = this.#vad;
    const detector = this.#detector;
    if (vad === undefined || detector === undefined || this.#held !== undefined) return;
    for (const frame of vad.push(chunk)) {
      const edge = detector.push(frame);
      if (edge !== undefined) this.#loop.vadSpeech(edge.type);
    }
  }

  playbackProgress(bufferedMs: number): void {
    this.#loop.playbackProgress(bufferedMs);
  }

  outOfBand(ask: OutOfBandAsk, sink: OutOfBandSink): void {
    void respondOutOfBand(this.#model, this.#ctx, ask, sink);
  }

  truncateHeard(audioMs: number): void {
    const outcome = this.#loop.truncateHeard(audioMs);
    this.#ctx.log.debug({ audioMs, outcome }, "reply truncated by the listener");
  }

  manual(command: "start" | "commit" | "clear"): void {
    this.#loop.manual(command);
  }

  toolLine(line: ToolLine): void {
    this.#loop.speakFiller(line.text);
  }

  get takesNotes(): boolean {
    return true;
  }

  note(note: AgentNote): boolean {
    if (this.#closed) return false;
    this.#loop.note(note);
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#loop.close();
    this.#vad?.close();
    this.#ctx.audioDropped("stt", this.#stt.droppedBytes);
    await Promise.allSettled([this.#stt.close(), this.#tts.close()]);
  }

  holdTurns(listener: TranscriptListener | undefined): void {
    this.#held = listener;
  }

  /** STT events (the decorator passes on those of the current connection). */
  sttEvent(event: { kind: "partial"; text: string; eotConfidence?: number | undefined } | { kind: "final"; text: string; endOfTurn: boolean } | { kind: "speech" }): void {
    const held = this.#held;
    if (held !== undefined) {
      if (event.kind === "partial") held.partial(event.text);
      else if (event.kind === "final") held.final(event.text, event.endOfTurn);
      else held.speech();
      return;
    }
    if (event.kind === "partial") this.#loop.sttPartial(event.text, event.eotConfidence);
    else if (event.kind === "final") this.#loop.sttFinal(event.text, { endOfTurn: event.endOfTurn });
    else this.#loop.sttSpeechStarted();
  }
}

/** Speak one line straight to the client (the start-failure phrase, before any loop exists); resolves with its length (ms). */
function speakOnce(tts: TtsSession, text: string, audio: (pcm: Uint8Array, ms: number) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    let total = 0;
    const stream = tts.stream({
      audio: (pcm) => {
        const ms = durationMs(pcm.byteLength, tts.sampleRate);
        total += ms;
        audio(pcm, ms);
      },
      words: () => {},
      done: () => resolve(total),
      error: reject,
    });
    stream.push(text);
    stream.end();
  });
}
