import type { LanguageModel } from "ai";
import { type VirtualClock, virtualClock } from "../clock.js";
import { silentLogger } from "../log.js";
import { toAgentConfig, type AgentConfigSource, type ProviderDescriptor, type ResolvedAgentDef } from "../manifest/index.js";
import type { TtsProvider } from "../pipeline/tts-port.js";
import { scriptedModel } from "../pipeline/providers/llm/scripted.js";
import { type Script } from "../pipeline/providers/llm/script.js";
import { Session } from "../session/session.js";
import { MemorySessionStore, type SessionStore } from "../session/store.js";
import { FakeStt, FakeTts, fakeVad } from "./fake-speech.js";
import { MemoryLink } from "./memory-link.js";
import type { WorkflowEngine } from "../workflows/index.js";
import { spread } from "../spread.js";

export interface VoiceSessionOptions {
  readonly script?: Script;
  readonly model?: LanguageModel;
  readonly clock?: VirtualClock;
  readonly store?: SessionStore;
  /** The fake STT endpoints turns itself unless told otherwise. */
  readonly sttEndpointing?: boolean;
  /** Ms of audio the fake TTS makes per character (default 50). */
  readonly msPerChar?: number;
  readonly ttsLatencyMs?: number;
  /** The fake TTS speaks samples of this value instead of silence (a test that looks for the agent in a recording). */
  readonly ttsLevel?: number;
  /** The fake TTS's one rate (Hz; default: whatever rate it is asked for). */
  readonly ttsSampleRate?: number;
  /** The STT refuses to open as "not installed" (the text-input fallback). */
  readonly sttUnavailable?: boolean;
  /** Resume this session id from `store` (as `?sessionId=` would). */
  readonly resumeId?: string;
  /** The rate the link plays (Hz; default the browser's 24 kHz, 8000 for a phone line). */
  readonly playbackRate?: number;
  /**
   * The TTS for a descriptor other than the agent's own (a roster member's `tts`, opened at a
   * hand-off); undefined, or left out, means the harness's fake TTS (`tts`).
   */
  readonly ttsFor?: (descriptor: ProviderDescriptor) => TtsProvider | undefined;
  /** The engine the agent's `workflows` run on (its tools' `ctx.workflows`). */
  readonly workflows?: WorkflowEngine;
}

export interface VoiceSessionHarness {
  readonly session: Session;
  readonly link: MemoryLink;
  readonly stt: FakeStt;
  readonly tts: FakeTts;
  readonly clock: VirtualClock;
  readonly store: SessionStore;
  readonly started: Promise<void>;
}

/**
 * A pipeline session over fakes under virtual time: the test plays the STT vendor
 * (`stt.current.final("hello")`), the fake TTS speaks at a known rate, `clock.advance` moves
 * time.
 */
export function voiceSession(agentDef: ResolvedAgentDef<unknown>, options: VoiceSessionOptions = {}): VoiceSessionHarness {
  const def = agentDef as ResolvedAgentDef;
  const clock = options.clock ?? virtualClock();
  const link = new MemoryLink(clock);
  if (options.playbackRate !== undefined) link.playbackRate = options.playbackRate;
  const store = options.store ?? new MemorySessionStore(clock);
  const stt = new FakeStt({ endpointing: options.sttEndpointing ?? true });
  stt.unavailable = options.sttUnavailable ?? false;
  const tts = new FakeTts(clock, { msPerChar: options.msPerChar ?? 50, latencyMs: options.ttsLatencyMs ?? 0, ...(options.ttsLevel === undefined ? {} : { level: options.ttsLevel }), ...(options.ttsSampleRate === undefined ? {} : { sampleRate: options.ttsSampleRate }) });
  const config = toAgentConfig(
    spread(def as AgentConfigSource, { stt: { kind: "deepgram", options: {} }, tts: { kind: "cartesia", options: {} }, llm: { kind: "scripted", options: {} } }),
    { warn: () => {} },
  );
  const sleep = (ms: number, signal?: AbortSignal): Promise<void> => clock.sleep(ms, signal);
  const model = options.model ?? scriptedModel(options.script ?? { rules: [] }, { sleep });
  const session = new Session({
    agent: { def, config },
    link,
    clock,
    log: silentLogger,
    store,
    ...(options.resumeId === undefined ? {} : { resumeId: options.resumeId }),
    ...(options.workflows === undefined ? {} : { workflows: options.workflows }),
    // A team agent whose scripted llm has a script of its own answers from it; every other agent from this model.
    resolveModel: (_descriptor, own) => (own === undefined ? model : scriptedModel(own, { sleep })),
    voice: { stt: () => stt, tts: (descriptor) => (descriptor === config.tts ? undefined : options.ttsFor?.(descriptor)) ?? tts, vad: (rate) => Promise.resolve(fakeVad(rate)) },
  });
  return { session, link, stt, tts, clock, store, started: session.start() };
}
