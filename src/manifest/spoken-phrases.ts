/**
 * Phrases matched against what a recognizer wrote (`interruption.acknowledgementPhrases` and
 * `interruption.interruptPhrases`, docs/config.md): how a phrase or a transcript becomes the words
 * they are compared by, and the config's checks on the two lists. Recognizers spell the same
 * sound many ways ("Uh-huh.", "uh huh", "uhhuh"; "Mm-hmm", "mhm", "mmhmm"; "OK", "O.K.",
 * "okaaay"), so comparison is by letters, not by spelling:
 * - lower case; apostrophes dropped ("I'm" → "im"); every other non-letter, non-digit character
 *   (hyphens, dots, commas, "?") separates words;
 * - within a word, a run of "m" is one "m" ("mm" → "m", "mmhmm" → "mhm") and any letter repeated
 *   3 or more times is one ("okaaay" → "okay", "yeahhh" → "yeah"); doubles of other letters stay,
 *   so "uh-huh" (yes) and "uh-uh" (no) never meet;
 * - a phrase matches a run of the transcript's words whose letters, joined, are the phrase's
 *   letters, joined: "uh huh", "uh-huh" and "uhhuh" are one phrase, as are "o k" and "ok".
 */
import { DEFAULTS } from "./defaults.js";
import type { IssueList } from "./errors.js";

/** At most this many phrases per list. */
export const MAX_PHRASES = 100;
/** A phrase is at most this many characters, and this many words. */
export const MAX_PHRASE_CHARS = 60;
export const MAX_PHRASE_WORDS = 6;

const APOSTROPHES = /['’ʼ`]/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const M_RUN = /m{2,}/gu;
const LONG_RUN = /(\p{L})\1{2,}/gu;

/** The words of `text` as phrases are compared by (see the module comment). */
export function spokenWords(text: string): string[] {
  return text
    .toLowerCase()
    .normalize("NFKC")
    .replace(APOSTROPHES, "")
    .split(SEPARATORS)
    .filter((word) => word !== "")
    .map((word) => word.replace(M_RUN, "m").replace(LONG_RUN, "$1"));
}

/** What a phrase is matched by: its words' letters, joined ("Uh-huh" → "uhhuh"). */
export function phraseKey(text: string): string {
  return spokenWords(text).join("");
}

type PhraseField = "acknowledgementPhrases" | "interruptPhrases";

/**
 * The checks the schema cannot make: each phrase has words and at most MAX_PHRASE_WORDS of them,
 * no phrase is listed twice (spelling aside), and no phrase is in both lists (it could not both
 * interrupt and not interrupt).
 */
export function checkSpokenPhrases(issues: IssueList, given: Partial<Record<PhraseField, readonly string[] | undefined>>): void {
  const lists: Record<PhraseField, readonly string[]> = {
    acknowledgementPhrases: given.acknowledgementPhrases ?? DEFAULTS.interruption.acknowledgementPhrases,
    interruptPhrases: given.interruptPhrases ?? DEFAULTS.interruption.interruptPhrases,
  };
  const seen = new Map<PhraseField, Map<string, string>>();
  for (const field of ["acknowledgementPhrases", "interruptPhrases"] as const) {
    const keys = new Map<string, string>();
    seen.set(field, keys);
    for (const [i, phrase] of lists[field].entries()) {
      const path = `interruption.${field}[${i}]`;
      const words = spokenWords(phrase);
      if (words.length === 0) {
        issues.add(path, `has no words (got ${JSON.stringify(phrase)}); write the phrase as it is said, e.g. "uh-huh".`);
        continue;
      }
      if (words.length > MAX_PHRASE_WORDS) {
        issues.add(path, `has ${words.length} words (got ${JSON.stringify(phrase)}); a phrase is at most ${MAX_PHRASE_WORDS}: list short phrases, their combinations ("okay, got it") match by themselves.`);
        continue;
      }
      const key = words.join("");
      const earlier = keys.get(key);
      if (earlier !== undefined) issues.add(path, `${JSON.stringify(phrase)} is the same phrase as ${JSON.stringify(earlier)}, listed before it (spelling, case and punctuation aside); remove one.`);
      else keys.set(key, phrase);
    }
  }
  const interrupts = seen.get("interruptPhrases") ?? new Map<string, string>();
  for (const [i, phrase] of lists.acknowledgementPhrases.entries()) {
    const other = interrupts.get(phraseKey(phrase));
    if (other === undefined) continue;
    issues.add(
      `interruption.acknowledgementPhrases[${i}]`,
      `${JSON.stringify(phrase)} is also in interruption.interruptPhrases (as ${JSON.stringify(other)}): a phrase cannot both interrupt and not. Remove it from one list${given.interruptPhrases === undefined ? " (interruptPhrases is the default list here; set it to change it)" : ""}.`,
    );
  }
}
