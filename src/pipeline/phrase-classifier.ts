/**
 * The agent's phrase lists, compiled once per session, against the caller's words
 * (`interruption.acknowledgementPhrases` / `interruptPhrases`, docs/config.md; how spellings are
 * compared: manifest/spoken-phrases.ts). Only speech that starts while the agent is heard is
 * ever classified (voice-loop.ts): the same "okay" said into silence is a turn like any other.
 */
import { MAX_PHRASE_WORDS, phraseKey, spokenWords } from "../manifest/index.js";
import type { PhraseClass } from "./barge-in.js";

/**
 * A phrase of n words can be written as one word ("uhhuh") or one word as several ("o k"): a span
 * of the transcript is tried up to this many words long.
 */
const MAX_SPAN_WORDS = 2 * MAX_PHRASE_WORDS;
/** An utterance longer than this (in words) is never only acknowledgements: a listener's "yeah" is short. */
export const MAX_ACKNOWLEDGEMENT_WORDS = 12;

export interface PhraseLists {
  readonly acknowledgementPhrases: readonly string[];
  readonly interruptPhrases: readonly string[];
}

export class PhraseClassifier {
  readonly #acknowledgements: ReadonlySet<string>;
  readonly #interrupts: ReadonlySet<string>;

  constructor(lists: PhraseLists) {
    this.#acknowledgements = new Set(lists.acknowledgementPhrases.map(phraseKey).filter((key) => key !== ""));
    this.#interrupts = new Set(lists.interruptPhrases.map(phraseKey).filter((key) => key !== ""));
  }

  /** An interrupt phrase anywhere wins ("okay, stop"); else only acknowledgements; else speech. */
  classify(text: string): PhraseClass {
    const words = spokenWords(text);
    if (this.#contains(words, this.#interrupts)) return "interrupt";
    return this.#only(words, this.#acknowledgements) ? "acknowledgement" : "speech";
  }

  /** True when `text` has words and every one belongs to an acknowledgement, in any mix or repeat ("yeah yeah", "oh okay got it"). */
  acknowledges(text: string): boolean {
    return this.#only(spokenWords(text), this.#acknowledgements);
  }

  /** True when some run of `words`, its letters joined, is a phrase of `set`. */
  #contains(words: readonly string[], set: ReadonlySet<string>): boolean {
    if (set.size === 0) return false;
    for (let start = 0; start < words.length; start++) {
      let joined = "";
      for (let end = start; end < Math.min(words.length, start + MAX_SPAN_WORDS); end++) {
        joined += words[end];
        if (set.has(joined)) return true;
      }
    }
    return false;
  }

  /** True when `words` split into runs that are each a phrase of `set` (dynamic programming over the word positions). */
  #only(words: readonly string[], set: ReadonlySet<string>): boolean {
    if (set.size === 0 || words.length === 0 || words.length > MAX_ACKNOWLEDGEMENT_WORDS) return false;
    // covered[i]: the first i words split into phrases.
    const covered = [true, ...words.map(() => false)];
    for (let start = 0; start < words.length; start++) {
      if (covered[start] !== true) continue;
      let joined = "";
      for (let end = start; end < Math.min(words.length, start + MAX_SPAN_WORDS); end++) {
        joined += words[end];
        if (set.has(joined)) covered[end + 1] = true;
      }
    }
    return covered[words.length] === true;
  }
}
