import type { BargeInPolicy } from "./barge-in.js";
import type { PhraseLists } from "./phrase-classifier.js";

/** The turn-taking, interruption and silence settings of a pipeline agent, defaulted. */
export interface VoiceSettings {
  readonly detection: "auto" | "manual";
  readonly minSilenceMs: number;
  readonly maxSilenceMs: number;
  readonly startSpeakingFloorMs: number;
  readonly userTurnLimit?: { readonly maxWords?: number | undefined; readonly maxDurationMs?: number | undefined } | undefined;
  readonly interruption: BargeInPolicy & PhraseLists & { readonly backoffMs: number; readonly resumeFalseInterruption: boolean };
  readonly deadAirCoverMs: number;
  /** Start the LLM on a confident interim (config.md `turnTaking.preemptiveGeneration`). */
  readonly preemptiveGeneration: boolean;
  /** Merge an utterance that starts this soon after the previous commit, before the agent is audible (ms; 0 = off). */
  readonly continuationWindowMs: number;
  readonly nudge?: { readonly afterMs: number; readonly prompt?: string | undefined } | undefined;
  readonly errorPhrase: string;
}
