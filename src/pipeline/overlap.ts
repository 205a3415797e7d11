import type { Clock } from "../clock.js";
import { countWords, isBargeIn } from "./barge-in.js";
import { PhraseClassifier } from "./phrase-classifier.js";
import type { Utterance } from "./utterance.js";
import type { VoiceSettings } from "./voice-settings.js";

/**
 * The caller's speech over the agent's reply (docs/config.md `interruption`): whether the words
 * so far interrupt it, and whether an utterance that ended while the reply was heard was only the
 * caller listening ("uh-huh", "yeah yeah": `interruption.acknowledgementPhrases`).
 */
export class Overlap {
  readonly #settings: Pick<VoiceSettings, "interruption" | "detection">;
  readonly #clock: Clock;
  readonly #phrases: PhraseClassifier;

  constructor(settings: Pick<VoiceSettings, "interruption" | "detection">, clock: Clock) {
    this.#settings = settings;
    this.#clock = clock;
    this.#phrases = new PhraseClassifier(settings.interruption);
  }

  /** A held utterance's interim or final: does it interrupt the reply (`agentAudible`: the reply is heard)? */
  interrupts(utterance: Utterance, final: boolean, agentAudible: boolean): boolean {
    const text = utterance.transcript.text;
    const speechMs = this.#clock.now() - utterance.startedAt;
    return isBargeIn(this.#settings.interruption, { words: countWords(text), speechMs, final, agentAudible, phrase: this.#phrases.classify(text) });
  }

  /**
   * A held utterance ended as `text` while the reply is still heard: only acknowledgements are
   * not a turn. Push-to-talk turns are always turns (the caller pressed to speak); so is anything
   * once the agent has fallen quiet.
   */
  acknowledgement(text: string, agentAudible: boolean): boolean {
    return this.#settings.detection !== "manual" && agentAudible && this.#phrases.acknowledges(text);
  }
}
