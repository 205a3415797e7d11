import type { GuardrailVerdict } from "../manifest/index.js";
import type { Guardrails } from "../turn/guardrails.js";

/** A caller utterance the service transcribes, as its input guardrails see it. */
export interface CallerWords {
  /** The words that were checked: the final transcript when it passed, the text that tripped when refused. */
  readonly text: string;
  /** The service's item for the caller's audio, when it names one. */
  readonly itemId: string | undefined;
}

export interface CallerChecksDeps {
  readonly guardrails: Guardrails;
  /** The utterance's final transcript passed: commit it. */
  passed(words: CallerWords): void;
  /** A check of its transcript so far tripped (once per utterance; the final is then never committed again). */
  refused(words: CallerWords, verdict: GuardrailVerdict): void;
}

interface Utterance {
  readonly itemId: string | undefined;
  /** The newest transcript (interim, or final once `final`). */
  latest: string;
  final: boolean;
  /** The text of the last check that answered. */
  checked: string | undefined;
  checking: boolean;
  refused: boolean;
}

/**
 * The input guardrails in speech-to-speech (docs/config.md "Guardrails"): the service hears the
 * caller itself and may answer before the words are transcribed, so each utterance is checked
 * as its transcript arrives, interim by interim — one check at a time, the next on the newest
 * text — and the final once more if it differs from what was checked. The first verdict refuses
 * the utterance at once; a final that passed is committed.
 */
export class CallerChecks {
  readonly #deps: CallerChecksDeps;
  /** Utterances being transcribed, by item ("" where the service names none: one at a time). */
  readonly #utterances = new Map<string, Utterance>();

  constructor(deps: CallerChecksDeps) {
    this.#deps = deps;
  }

  /** A transcript of the utterance `itemId`: interim, or `final`. */
  heard(text: string, final: boolean, itemId: string | undefined): void {
    const key = itemId ?? "";
    let utterance = this.#utterances.get(key);
    if (utterance === undefined) {
      utterance = { itemId, latest: text, final, checked: undefined, checking: false, refused: false };
      this.#utterances.set(key, utterance);
    }
    utterance.latest = text;
    utterance.final ||= final;
    void this.#check(key, utterance);
  }

  async #check(key: string, utterance: Utterance): Promise<void> {
    if (utterance.checking) return;
    utterance.checking = true;
    // A blank transcript (a final with no words) is nothing to check, and nothing to commit.
    while (!utterance.refused && utterance.latest !== utterance.checked && utterance.latest.trim() !== "") {
      const text = utterance.latest;
      const verdict = await this.#deps.guardrails.check("input", text);
      utterance.checked = text;
      if (verdict !== undefined) {
        utterance.refused = true;
        this.#deps.refused({ text, itemId: utterance.itemId }, verdict);
      }
    }
    utterance.checking = false;
    if (!utterance.final) return;
    this.#utterances.delete(key);
    if (!utterance.refused && utterance.latest.trim() !== "") this.#deps.passed({ text: utterance.latest.trim(), itemId: utterance.itemId });
  }
}
