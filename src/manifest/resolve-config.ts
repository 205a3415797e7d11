import type { AgentConfig } from "./agent-config.js";
import { DEFAULTS } from "./defaults.js";
import { resolveVoicemail, type ResolvedVoicemail } from "./voicemail-config.js";
import { DEFAULT_MAX_AUDIO_MINUTES, type RecordingDestination, type RedactionRule } from "./recording.js";
import { spread } from "../spread.js";

type Defined<T> = Exclude<T, undefined>;
type TurnTaking = Defined<AgentConfig["turnTaking"]>;

/**
 * What the runtime reads of an `AgentConfig`, with every default written in (docs/config.md
 * "2. Fields"; the values are `DEFAULTS`). `AgentConfig` stays as the author wrote it (it is
 * serialized and echoed); a session resolves it once and nothing downstream re-defaults a field.
 */
export interface ResolvedConfig {
  readonly errorPhrase: string;
  readonly toolChoice: Defined<AgentConfig["toolChoice"]>;
  readonly resetToolChoice: boolean;
  readonly maxSteps: number;
  readonly maxRetries: number;
  /** ms without conversational activity before the session ends. */
  readonly idleTimeoutMs: number;
  /** Telephony: ms before the call ends with `callLimitPhrase` (0 = no limit). */
  readonly maxCallDurationMs: number;
  readonly dtmf: Defined<AgentConfig["dtmf"]>;
  readonly turnTaking: {
    readonly detection: Defined<TurnTaking["detection"]>;
    readonly minSilenceMs: number;
    readonly maxSilenceMs: number;
    readonly startSpeakingFloorMs: number;
    readonly preemptiveGeneration: boolean;
    readonly userTurnLimit: TurnTaking["userTurnLimit"];
  };
  readonly interruption: {
    /** `interruption: "off"` turns barge-in off; the thresholds still apply to nothing. */
    readonly enabled: boolean;
    readonly minWords: number;
    readonly minDurationMs: number;
    readonly backoffMs: number;
    readonly continuationWindowMs: number;
    readonly resumeFalseInterruption: boolean;
    /** Said while the agent is heard: neither a barge-in nor a turn (spoken-phrases.ts matches them). */
    readonly acknowledgementPhrases: readonly string[];
    /** Said while the agent is heard: a barge-in at once, whatever `minWords` and `minDurationMs`. */
    readonly interruptPhrases: readonly string[];
  };
  readonly silence: {
    readonly deadAirCoverMs: number;
    readonly nudge: Defined<AgentConfig["silence"]>["nudge"];
  };
  /** The call record (docs/config.md "Recording"), or undefined when the agent records nothing. */
  readonly recording: ResolvedRecording | undefined;
  /** What a machine on the line gets (docs/config.md "voicemail"), or undefined when the agent sets none. */
  readonly voicemail: ResolvedVoicemail | undefined;
}

export interface ResolvedRecording {
  /** The stereo WAV: asked for (default true); a text session records none whatever this says. */
  readonly audio: boolean;
  readonly transcript: boolean;
  readonly destination: RecordingDestination;
  readonly redact: readonly RedactionRule[];
  /** The audio stops here (ms from the session's start). */
  readonly maxAudioMs: number;
}

/** Resolved configs by the config they resolve: every session of an agent shares its one. */
const RESOLVED = new WeakMap<AgentConfig, ResolvedConfig>();

/** Resolve a validated config: every runtime default applied once, here, and once per config object (frozen: sessions share it). */
export function resolveConfig(config: AgentConfig): ResolvedConfig {
  let resolved = RESOLVED.get(config);
  if (resolved === undefined) {
    const fresh = resolve(config);
    // The groups resolve() built; values taken from the config as they are (nudge, dtmf) stay the config's.
    resolved = Object.freeze(spread(fresh, { turnTaking: Object.freeze(fresh.turnTaking), interruption: Object.freeze(fresh.interruption), silence: Object.freeze(fresh.silence), recording: fresh.recording && Object.freeze(fresh.recording), voicemail: fresh.voicemail && Object.freeze(fresh.voicemail) }));
    RESOLVED.set(config, resolved);
  }
  return resolved;
}

function resolve(config: AgentConfig): ResolvedConfig {
  const turn = config.turnTaking;
  const interruption = config.interruption;
  const tuned = typeof interruption === "object" ? interruption : {};
  return {
    errorPhrase: config.errorPhrase ?? DEFAULTS.errorPhrase,
    toolChoice: config.toolChoice ?? DEFAULTS.toolChoice,
    resetToolChoice: config.resetToolChoice ?? DEFAULTS.resetToolChoice,
    maxSteps: config.maxSteps ?? DEFAULTS.maxSteps,
    maxRetries: config.maxRetries ?? DEFAULTS.maxRetries,
    idleTimeoutMs: config.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs,
    maxCallDurationMs: config.maxCallDurationMs ?? DEFAULTS.maxCallDurationMs,
    dtmf: config.dtmf ?? DEFAULTS.dtmf,
    turnTaking: {
      detection: turn?.detection ?? DEFAULTS.turnTaking.detection,
      minSilenceMs: turn?.minSilenceMs ?? DEFAULTS.turnTaking.minSilenceMs,
      maxSilenceMs: turn?.maxSilenceMs ?? DEFAULTS.turnTaking.maxSilenceMs,
      startSpeakingFloorMs: turn?.startSpeakingFloorMs ?? DEFAULTS.turnTaking.startSpeakingFloorMs,
      preemptiveGeneration: turn?.preemptiveGeneration ?? DEFAULTS.turnTaking.preemptiveGeneration,
      userTurnLimit: turn?.userTurnLimit,
    },
    interruption: {
      enabled: interruption !== "off",
      minWords: tuned.minWords ?? DEFAULTS.interruption.minWords,
      minDurationMs: tuned.minDurationMs ?? DEFAULTS.interruption.minDurationMs,
      backoffMs: tuned.backoffMs ?? DEFAULTS.interruption.backoffMs,
      continuationWindowMs: tuned.continuationWindowMs ?? DEFAULTS.interruption.continuationWindowMs,
      resumeFalseInterruption: tuned.resumeFalseInterruption ?? DEFAULTS.interruption.resumeFalseInterruption,
      acknowledgementPhrases: tuned.acknowledgementPhrases ?? DEFAULTS.interruption.acknowledgementPhrases,
      interruptPhrases: tuned.interruptPhrases ?? DEFAULTS.interruption.interruptPhrases,
    },
    silence: {
      deadAirCoverMs: config.silence?.deadAirCoverMs ?? DEFAULTS.silence.deadAirCoverMs,
      nudge: config.silence?.nudge,
    },
    recording:
      config.recording === undefined
        ? undefined
        : {
            audio: config.recording.audio ?? true,
            transcript: config.recording.transcript ?? true,
            destination: config.recording.destination,
            redact: config.recording.redact ?? [],
            maxAudioMs: (config.recording.maxAudioMinutes ?? DEFAULT_MAX_AUDIO_MINUTES) * 60_000,
          },
    voicemail: resolveVoicemail(config.voicemail),
  };
}
