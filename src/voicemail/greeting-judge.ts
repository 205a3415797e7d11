/**
 * Who answered, judged from the first seconds of what the callee said (the STT's transcript):
 * the gateway's own answering-machine detection, for carriers without one and for answered calls
 * (docs/telephony.md "Voicemail and answering machines"). Pure: what was heard, and when, in; a
 * verdict (or none yet) out.
 *
 * A machine: its greeting says so ("leave a message", "not available", "after the tone",
 * "voicemail", "you have reached"…), or it talks on — a first utterance of `MONOLOGUE_WORDS`
 * words or more, or one still going `MONOLOGUE_MS` after it began. A person answers short and
 * then waits for the caller: a first utterance of at most `HUMAN_MAX_WORDS` words, ended, and
 * followed by `HUMAN_PAUSE_MS` of quiet. Anything in between stays undecided: the session's
 * window decides (a person, by default, so a real caller is never hung up on by a guess).
 */

/** A first utterance this long (words) is a recorded greeting: people answer "Hello?", "Hi, this is Dana". */
export const MONOLOGUE_WORDS = 12;
/** A first utterance still going this long after it began is a recorded greeting (ms). */
export const MONOLOGUE_MS = 4000;
/** A first utterance of at most this many words… */
export const HUMAN_MAX_WORDS = 5;
/** …followed by this much quiet (the callee waits for an answer) is a person (ms). */
export const HUMAN_PAUSE_MS = 800;

/** Phrases of recorded greetings, over normalized text (lowercase, apostrophes kept, other punctuation a space). */
export const VOICEMAIL_PHRASES: readonly RegExp[] = [
  /\bleave (?:me |us )?(?:a |your )?(?:brief |short |detailed )?(?:message|name and number|name|number)\b/,
  /\b(?:not|isn't|is not|aren't|are not|am not|i'm not) (?:available|in right now|here right now|able to (?:take|answer|come))\b/,
  /\b(?:can't|cannot|can not|couldn't) (?:take|answer|come to) (?:your call|the phone|the call)\b/,
  /\b(?:after|at) the (?:tone|beep)\b/,
  /\bvoice ?mail\b/,
  /\bmailbox\b/,
  /\byou(?:'ve| have) reached\b/,
  /\b(?:record|recording) (?:your|a) message\b/,
  /\b(?:get|call) (?:right )?back to you\b/,
  /\breturn your call\b/,
  /\bthe (?:person|party|number|subscriber) you (?:are|were|have) (?:calling|called|dialed|trying)\b/,
  /\bis not in service\b/,
];

/** What the callee has said so far, and when (ms on one clock). */
export interface GreetingHeard {
  /** Everything heard so far: final transcripts and the current interim, in order. */
  readonly text: string;
  /** When the callee began to speak; undefined: not yet. */
  readonly speechStartMs: number | undefined;
  /** When their first utterance ended (a final at end of turn); undefined: not yet, or still going. */
  readonly firstUtteranceEndMs: number | undefined;
  /** The first utterance's words (its final's, or the interim's while it goes on). */
  readonly firstUtteranceWords: number;
  /** Speech after the first utterance has begun (the callee spoke again). */
  readonly spokeAgain: boolean;
  readonly nowMs: number;
}

export type GreetingVerdict =
  | { readonly verdict: "machine"; readonly reason: "phrase"; readonly phrase: string }
  | { readonly verdict: "machine"; readonly reason: "monologue" }
  | { readonly verdict: "human"; readonly reason: "short answer" };

/** Lowercase; curly apostrophes straightened; everything but letters, digits and apostrophes a space. */
export function normalizeTranscript(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, " ")
    .trim();
}

export function wordCount(text: string): number {
  const normalized = normalizeTranscript(text);
  return normalized === "" ? 0 : normalized.split(" ").length;
}

/** The phrase of a recorded greeting `text` contains, or undefined. */
export function voicemailPhrase(text: string): string | undefined {
  const normalized = normalizeTranscript(text);
  for (const pattern of VOICEMAIL_PHRASES) {
    const match = pattern.exec(normalized);
    if (match !== null) return match[0];
  }
  return undefined;
}

/** The verdict so far, or undefined while it is undecided. */
export function judgeGreeting(heard: GreetingHeard): GreetingVerdict | undefined {
  const phrase = voicemailPhrase(heard.text);
  if (phrase !== undefined) return { verdict: "machine", reason: "phrase", phrase };
  if (heard.speechStartMs === undefined) return undefined;
  if (heard.firstUtteranceWords >= MONOLOGUE_WORDS) return { verdict: "machine", reason: "monologue" };
  if (heard.firstUtteranceEndMs === undefined) {
    return heard.nowMs - heard.speechStartMs >= MONOLOGUE_MS ? { verdict: "machine", reason: "monologue" } : undefined;
  }
  if (heard.firstUtteranceWords <= HUMAN_MAX_WORDS && !heard.spokeAgain && heard.nowMs - heard.firstUtteranceEndMs >= HUMAN_PAUSE_MS) {
    return { verdict: "human", reason: "short answer" };
  }
  return undefined;
}
