import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { copyFile, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ModelMessage } from "ai";
import { decodeAlaw, decodeMulaw } from "../../audio/g711.js";
import { bytesToSamples } from "../../audio/pcm.js";
import { DEFAULT_SESSION_AUDIO, G711_SAMPLE_RATE, MIC_SAMPLE_RATE, PLAYBACK_SAMPLE_RATE, type AudioFormat, type SessionAudio } from "../../audio/rates.js";
import { RESAMPLER_RATES, resamplerBetween, type Resampler } from "../../audio/resample.js";
import { messageOf } from "../../errors.js";
import type { EventBody } from "../../events.js";
import type { Logger } from "../../log.js";
import type { RecordOutcome, ResolvedRecording } from "../../manifest/index.js";
import type { ClientLink } from "../../transport/client-connection.js";
import { AgentTrack } from "./agent-track.js";
import { CallRecord } from "./call-record.js";
import { ChannelFile } from "./channel-file.js";
import { RecordingLink, type LinkTap } from "./recording-link.js";
import { Redactor } from "./redaction.js";
import { uploadToS3 } from "./s3-upload.js";
import { writeStereoWav, type BleepSpan } from "./stereo-wav.js";
import type { SessionIdentity } from "../session-deps.js";

/** The bleep starts this long before a redacted caller line's speech.started, which lags the first word by the VAD's onset (ms). */
export const BLEEP_LEAD_MS = 500;
/** …and ends this long after its end (ms). */
export const BLEEP_TAIL_MS = 250;
/** The whole delivery (every file, every retry) is abandoned after this long (ms): a session's end never waits longer. */
export const DELIVERY_TIMEOUT_MS = 120_000;

export interface CallRecorderDeps extends SessionIdentity {
  /** The model history: an interrupted reply's heard prefix is its last assistant text. */
  readonly history: () => readonly ModelMessage[];
}

/** One channel's conversion: the link's format → PCM16 at the recording's rate. */
class ChannelInput {
  readonly #format: AudioFormat;
  readonly #resampler: Resampler | undefined;

  constructor(format: AudioFormat, rate: number) {
    this.#format = format;
    this.#resampler = resamplerBetween(format.sampleRate, rate);
  }

  samples(chunk: Uint8Array): Int16Array {
    const pcm = this.#format.encoding === "pcmu" ? decodeMulaw(chunk) : this.#format.encoding === "pcma" ? decodeAlaw(chunk) : bytesToSamples(chunk).slice();
    return this.#resampler === undefined ? pcm : this.#resampler.process(pcm);
  }
}

interface AudioState {
  readonly rate: number;
  /** Replaced when the mode declares new formats (a hand-off to a voice at another rate). */
  caller: ChannelInput;
  agent: ChannelInput;
  readonly callerFile: ChannelFile;
  readonly agentFile: ChannelFile;
  readonly track: AgentTrack;
}

/** A folder name from a session id: the id itself when it is plain, else its hash. */
function folderOf(sessionId: string, startedAt: number): string {
  const id = /^[A-Za-z0-9_-]{1,128}$/.test(sessionId) ? sessionId : createHash("sha256").update(sessionId).digest("hex").slice(0, 32);
  return `${id}/${new Date(startedAt).toISOString().replace(/[-:.]/g, "")}`;
}

function lastAssistantText(history: readonly ModelMessage[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i] as ModelMessage;
    if (message.role !== "assistant") continue;
    if (typeof message.content === "string") return message.content;
    return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
  }
  return undefined;
}

/**
 * A session's call record (docs/config.md "Recording"): taps the session's link
 * (`RecordingLink`), streams the caller channel (where it arrived) and the agent channel (where it
 * played, `AgentTrack`) to temp files on one timeline from the session's start, builds the JSON
 * record from the events (`CallRecord`), and when the session ends redacts, writes the stereo
 * WAV and the JSON, and delivers them to a directory or a bucket. Never throws: a failure is
 * logged and returned as the outcome `onSessionEnd` receives.
 */
export class CallRecorder implements LinkTap {
  readonly #settings: ResolvedRecording;
  readonly #deps: CallRecorderDeps;
  readonly #startedAt: number;
  readonly #record: CallRecord;
  /** The session's temp folder, or undefined when none could be made (nothing is recorded; the outcome says why). */
  readonly #temp: string | undefined;
  /** Audio state, from the mode's declared formats on. */
  #audio: AudioState | undefined;
  /** Why there is no audio although it was asked for (an unsupported rate), logged once. */
  #audioRefused = false;
  #truncatedAtMs: number | undefined;
  #finished: Promise<RecordOutcome> | undefined;

  private constructor(settings: ResolvedRecording, deps: CallRecorderDeps) {
    this.#settings = settings;
    this.#deps = deps;
    this.#startedAt = deps.clock.now();
    this.#temp = CallRecorder.#tempDir(deps.log);
    this.#record = new CallRecord({
      elapsedMs: () => deps.clock.now() - this.#startedAt,
      agentSpan: () => this.#audio?.track.mark(),
      lastAgentText: () => lastAssistantText(deps.history()),
    });
  }

  static #tempDir(log: Logger): string | undefined {
    try {
      return mkdtempSync(join(tmpdir(), "switchboard-rec-"));
    } catch (error) {
      log.warn({ err: messageOf(error), tmpdir: tmpdir() }, "recording: no temp folder");
      return undefined;
    }
  }

  /** The recorder of an agent that records, else undefined. */
  static for(settings: ResolvedRecording | undefined, deps: CallRecorderDeps): CallRecorder | undefined {
    return settings === undefined ? undefined : new CallRecorder(settings, deps);
  }

  /** The session's link, recorded. */
  tap(link: ClientLink): ClientLink {
    return new RecordingLink(link, this);
  }

  // ── LinkTap ───────────────────────────────────────────────────────────────────────────

  formats(audio: SessionAudio, playbackRate: number): void {
    const temp = this.#temp;
    if (!this.#settings.audio || this.#deps.mode === "text" || this.#audioRefused || temp === undefined) return;
    const supported = (format: AudioFormat): boolean => (RESAMPLER_RATES as readonly number[]).includes(format.sampleRate);
    if (!supported(audio.input) || !supported(audio.output)) {
      this.#deps.log.warn({ input: audio.input, output: audio.output }, "recording: no more audio (a rate the resampler does not take)");
      this.#audioRefused = true;
      return;
    }
    const current = this.#audio;
    if (current !== undefined) {
      // The same files and timeline; only what the link carries changed.
      current.caller = new ChannelInput(audio.input, current.rate);
      current.agent = new ChannelInput(audio.output, current.rate);
      return;
    }
    // One rate for both channels: a call's 8 kHz (what the line carries), else the mic's 16 kHz.
    const rate = playbackRate <= G711_SAMPLE_RATE ? G711_SAMPLE_RATE : MIC_SAMPLE_RATE;
    const callerFile = new ChannelFile(join(temp, "caller.pcm"));
    const agentFile = new ChannelFile(join(temp, "agent.pcm"));
    const maxSamples = (this.#settings.maxAudioMs / 1000) * rate;
    const track = new AgentTrack(this.#deps.clock, this.#startedAt, rate, (offset, samples) => this.#place(agentFile, offset, samples, maxSamples, rate));
    this.#audio = { rate, caller: new ChannelInput(audio.input, rate), agent: new ChannelInput(audio.output, rate), callerFile, agentFile, track };
  }

  callerAudio(chunk: Uint8Array): void {
    const audio = this.#ready();
    if (audio === undefined) return;
    const samples = audio.caller.samples(chunk);
    // A chunk was captured in the span before it arrived: it ends now (later if the one before it ends later).
    const now = Math.round(((this.#deps.clock.now() - this.#startedAt) / 1000) * audio.rate);
    this.#place(audio.callerFile, now - samples.length, samples, (this.#settings.maxAudioMs / 1000) * audio.rate, audio.rate);
  }

  agentAudio(chunk: Uint8Array): void {
    const audio = this.#ready();
    if (audio !== undefined) audio.track.queued(audio.agent.samples(chunk));
  }

  playback(bufferedMs: number): void {
    if (!this.#audioRefused) this.#audio?.track.report(bufferedMs);
  }

  event(event: EventBody): void {
    if (event.type === "reply.cancelled" || event.type === "session.reset") this.#audio?.track.cleared();
    this.#record.event(event);
  }

  // ── the end ───────────────────────────────────────────────────────────────────────────

  /** Writes and delivers the record, once; resolves with where it went or why it did not. */
  finish(): Promise<RecordOutcome> {
    this.#finished ??= this.#finish().catch((error: unknown) => {
      this.#deps.log.warn({ err: messageOf(error) }, "recording failed");
      return { status: "failed" as const, error: messageOf(error) };
    });
    return this.#finished;
  }

  async #finish(): Promise<RecordOutcome> {
    const { clock, log } = this.#deps;
    const endedAt = clock.now();
    const temp = this.#temp;
    if (temp === undefined) return { status: "failed", error: `no temp folder could be made in ${tmpdir()}` };
    const audio = this.#audio;
    // The session has ended: what had not played never will.
    audio?.track.cleared();
    try {
      const redactor = new Redactor(this.#settings.redact);
      const redactedLines = this.#record.redact(redactor);
      const files: string[] = [];
      let audioMeta: Record<string, unknown> | null = null;
      if (audio !== undefined) {
        await Promise.all([audio.callerFile.close(), audio.agentFile.close()]);
        const frames = Math.max(audio.callerFile.end, audio.agentFile.end);
        const toSample = (ms: number): number => Math.max(0, Math.round((ms / 1000) * audio.rate));
        const bleeps: BleepSpan[] = redactedLines.map((line) =>
          line.speaker === "caller"
            ? { channel: 0, start: toSample(Math.min(line.startMs - BLEEP_LEAD_MS, this.#record.speechFrom(line))), end: toSample(line.endMs + BLEEP_TAIL_MS) }
            : { channel: 1, start: toSample(line.startMs), end: toSample(line.endMs) },
        );
        const wav = join(temp, "audio.wav");
        await writeStereoWav({ out: wav, caller: audio.callerFile.path, agent: audio.agentFile.path, frames, sampleRate: audio.rate, bleeps });
        files.push(wav);
        audioMeta = {
          file: "audio.wav",
          format: "pcm16-wav",
          sampleRate: audio.rate,
          channels: ["caller", "agent"],
          durationMs: (frames / audio.rate) * 1000,
          bleeps: bleeps.map((bleep) => ({ channel: bleep.channel === 0 ? "caller" : "agent", startMs: (bleep.start / audio.rate) * 1000, endMs: (bleep.end / audio.rate) * 1000 })),
          ...(this.#truncatedAtMs === undefined ? {} : { truncatedAtMs: this.#truncatedAtMs }),
          ...(audio.callerFile.dropped + audio.agentFile.dropped > 0 ? { droppedMs: ((audio.callerFile.dropped + audio.agentFile.dropped) / audio.rate) * 1000 } : {}),
        };
      }
      const json = join(temp, "record.json");
      await writeFile(json, `${JSON.stringify(this.#json(endedAt, audioMeta, redactor), null, 2)}\n`);
      files.push(json);
      const outcome = await this.#deliver(files);
      if (outcome.status === "written") log.info({ location: outcome.location, files: outcome.files }, "recording written");
      else log.warn({ err: outcome.error }, "recording not delivered");
      return outcome;
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  #json(endedAt: number, audio: Record<string, unknown> | null, redactor: Redactor): Record<string, unknown> {
    const record = this.#record;
    const transcript = this.#settings.transcript;
    return {
      version: 1,
      sessionId: this.#deps.sessionId,
      agent: this.#deps.agentName,
      mode: this.#deps.mode,
      transport: this.#deps.transport,
      startedAt: new Date(this.#startedAt).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs: endedAt - this.#startedAt,
      audio,
      redaction: { rules: redactor.names, counts: Object.fromEntries(redactor.counts) },
      ...(transcript ? { transcript: record.lines, toolCalls: record.toolCalls, handOffs: record.handOffs } : {}),
      turns: record.turns,
      errors: record.errors,
      ...(record.voicemail === undefined ? {} : { voicemail: record.voicemail }),
      ...(record.dropped > 0 ? { droppedEntries: record.dropped } : {}),
    };
  }

  async #deliver(files: readonly string[]): Promise<RecordOutcome> {
    const destination = this.#settings.destination;
    const folder = folderOf(this.#deps.sessionId, this.#startedAt);
    const names = files.map((file) => basename(file));
    try {
      if ("dir" in destination) {
        const target = resolve(destination.dir, folder);
        await mkdir(target, { recursive: true });
        for (const file of files) await copyFile(file, join(target, basename(file)));
        return { status: "written", location: `${pathToFileURL(target).href}/`, files: names };
      }
      const stop = new AbortController();
      const timer = this.#deps.clock.setTimeout(() => stop.abort(new Error(`not delivered within ${DELIVERY_TIMEOUT_MS} ms`)), DELIVERY_TIMEOUT_MS);
      try {
        const location = await uploadToS3({ s3: destination.s3, folder, files, clock: this.#deps.clock, log: this.#deps.log, signal: stop.signal });
        return { status: "written", location, files: names };
      } finally {
        timer.cancel();
      }
    } catch (error) {
      return { status: "failed", error: messageOf(error) };
    }
  }

  /** The audio state, from the protocol's defaults when the mode never declared its formats. */
  #ready(): AudioState | undefined {
    if (this.#audio === undefined && !this.#audioRefused) this.formats(DEFAULT_SESSION_AUDIO, PLAYBACK_SAMPLE_RATE);
    return this.#audioRefused ? undefined : this.#audio;
  }

  /** Places samples on a channel, up to the cap; the first sample past it notes where the audio stopped. */
  #place(file: ChannelFile, offset: number, samples: Int16Array, maxSamples: number, rate: number): void {
    const at = Math.max(0, offset, file.end);
    if (at >= maxSamples) {
      this.#truncatedAtMs ??= (maxSamples / rate) * 1000;
      return;
    }
    file.write(at, at + samples.length > maxSamples ? samples.subarray(0, maxSamples - at) : samples);
  }
}
