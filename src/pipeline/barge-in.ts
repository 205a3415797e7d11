/** What decides whether user speech interrupts the agent (docs/config.md "Pipeline fields at runtime", `interruption`; docs/protocol.md "Behaviour in detail", "What interrupts"). */
export interface BargeInPolicy {
  /** `false` for `interruption: "off"`. */
  readonly enabled: boolean;
  readonly minWords: number;
  readonly minDurationMs: number;
}

/** What the caller's words are by the agent's phrase lists (phrase-classifier.ts). */
export type PhraseClass = "interrupt" | "acknowledgement" | "speech";

export interface SpeechEvidence {
  /** Words in the utterance so far (finals and the interim). */
  readonly words: number;
  /** Ms of sustained speech so far. */
  readonly speechMs: number;
  /** The evidence is a final (not duration-gated). */
  readonly final: boolean;
  /** The agent is audible: model audio pending at the client (+ grace) or produced by this reply. */
  readonly agentAudible: boolean;
  /** The words hold an interrupt phrase, are only acknowledgements, or neither (default: neither). */
  readonly phrase?: PhraseClass;
}

/**
 * Whether this speech is a real interruption. Utterances before the agent is audible never are;
 * an interrupt phrase is one at once, below `minWords` and `minDurationMs`; only acknowledgements
 * never are, however long or final; other speech needs `minWords` and a final or `minDurationMs`.
 */
export function isBargeIn(policy: BargeInPolicy, evidence: SpeechEvidence): boolean {
  if (!policy.enabled || !evidence.agentAudible) return false;
  if (evidence.phrase === "interrupt") return true;
  if (evidence.phrase === "acknowledgement") return false;
  if (evidence.words < policy.minWords) return false;
  return evidence.final || evidence.speechMs >= policy.minDurationMs;
}

/** Words in a transcript. */
export function countWords(text: string): number {
  const words = text.trim().match(/\S+/g);
  return words === null ? 0 : words.length;
}
