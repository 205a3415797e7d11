/**
 * Every default of the agent configuration, in one place (docs/config.md "2. Fields"; the
 * behaviour they tune: docs/protocol.md). The runtime reads effective values through these;
 * nothing else hard-codes them.
 */
export const DEFAULTS = {
  greeting: "Hi! How can I help?",
  systemPrompt:
    "You are a helpful voice assistant on a live call. Your replies are spoken aloud, so keep them short and conversational: one or two sentences, no lists, no markdown, no emoji. Ask one question at a time. If you are unsure what the caller said, ask them to repeat it.",
  errorPhrase: "Sorry, I had a problem just then. Could you say that again?",
  toolChoice: "auto",
  resetToolChoice: true,
  maxSteps: 10,
  maxRetries: 2,
  idleTimeoutMs: 300_000,
  turnTaking: {
    detection: "auto",
    minSilenceMs: 1600,
    maxSilenceMs: 3500,
    preemptiveGeneration: false,
    startSpeakingFloorMs: 0,
  },
  interruption: {
    minWords: 1,
    minDurationMs: 500,
    backoffMs: 0,
    continuationWindowMs: 0,
    resumeFalseInterruption: true,
    /**
     * Said while the agent is heard, an utterance of only these (any mix, any repeat: "yeah yeah",
     * "okay, got it") neither interrupts nor becomes a turn (docs/config.md `interruption`). Spelling
     * variants match one entry (spoken-phrases.ts): "uh huh" covers "uh-huh" and "uhhuh", "mm hmm"
     * covers "mhm", "mm-hmm" and "mmhmm". Not "huh" (a "huh?" asks to repeat) nor "no".
     */
    acknowledgementPhrases: [
      "okay", "ok", "alright", "all right", "right", "yeah", "yes", "yep", "yup", "yea", "sure",
      "uh huh", "mm hmm", "mm", "oh", "ah", "aha", "i see", "got it", "gotcha", "understood",
      "i understand", "makes sense", "that makes sense", "cool", "great", "good", "nice", "perfect",
      "fine", "exactly", "correct", "true", "of course", "sounds good", "go on", "go ahead", "i'm listening",
    ],
    /** Said while the agent is heard, an utterance containing one of these cuts it at once, below `minWords` and `minDurationMs`. */
    interruptPhrases: ["stop", "wait", "hold on", "hang on", "one moment", "one second", "just a moment", "just a second", "excuse me", "be quiet", "shut up"],
  },
  silence: {
    deadAirCoverMs: 2400,
  },
  /**
   * Waiting sounds (docs/telephony.md "Audio while waiting"): the thinking sound waits this long
   * (ms) so a quick reply never starts it, at half volume; the bed sits well under speech (about
   * −20 dB).
   */
  waitingAudio: {
    thinkingAfterMs: 800,
    thinkingVolume: 0.5,
    ambienceVolume: 0.1,
  },
  /** Telephony: a call ends after this long, with `callLimitPhrase` spoken first (ms; 0 = no limit). */
  maxCallDurationMs: 3_600_000,
  callLimitPhrase: "We have reached the time limit for this call. Thank you for calling, goodbye.",
  /** Telephony: spoken when the gateway drains and a call is still live at the deadline. */
  shutdownPhrase: "Sorry, we have to end this call now. Please call back in a moment. Goodbye.",
  /** Telephony: DTMF digits arriving within this of each other form one input (ms); `#` ends one at once. */
  dtmfInterDigitMs: 1500,
  dtmf: "text",
  /** Per-call tool deadline (ms). */
  toolTimeoutMs: 30_000,
  /**
   * One guardrail check — every guardrail of a direction, in order, on one text — answers within
   * this (ms; docs/config.md "Guardrails"). Past it the check has failed: a pause longer than a
   * second is audible in a voice conversation, and an output check delays the words it holds.
   */
  guardrailBudgetMs: 1_000,
  /** Said instead when a guardrail throws, rejects, returns something that is not a verdict, or overruns its budget (it fails closed). */
  guardrailFailedPhrase: "Sorry, I can't help with that right now.",
} as const;
