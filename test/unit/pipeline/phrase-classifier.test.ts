import { describe, expect, it } from "vitest";
import { DEFAULTS } from "../../../src/manifest/index.js";
import { isBargeIn, type SpeechEvidence } from "../../../src/pipeline/barge-in.js";
import { MAX_ACKNOWLEDGEMENT_WORDS, PhraseClassifier } from "../../../src/pipeline/phrase-classifier.js";

const defaults = new PhraseClassifier(DEFAULTS.interruption);

describe("PhraseClassifier over the default lists", () => {
  it.each([
    "uh-huh", "Uh-huh.", "uh huh", "UHHUH", "Mm-hmm.", "mhm", "Mhmm", "mmhmm", "mm", "okay", "OK.", "O.K.", "Okaaay.", "alright", "all right",
    "right", "Right.", "yeah", "Yeah, yeah.", "yeah yeah yeah", "yep", "yes", "sure", "I see.", "got it", "Oh, okay.", "okay got it", "I'm listening.",
    "Mhm, right, makes sense.",
  ])("%j is only acknowledgement", (text) => {
    expect(defaults.classify(text)).toBe("acknowledgement");
    expect(defaults.acknowledges(text)).toBe(true);
  });

  it.each(["stop", "Stop!", "wait", "Wait a moment.", "hold on", "Hold on a second", "hang on", "okay, stop", "yeah wait", "no no stop it", "Excuse me?"])(
    "%j holds an interrupt phrase",
    (text) => expect(defaults.classify(text)).toBe("interrupt"),
  );

  it.each(["", "  ", "huh", "uh-uh", "no", "okay but where is my order", "yeah I want to cancel", "actually I meant Tuesday", "again", "share", "uh"])(
    "%j is speech",
    (text) => {
      expect(defaults.classify(text)).toBe("speech");
      expect(defaults.acknowledges(text)).toBe(false);
    },
  );

  it("words are whole words: 'stopwatch' and 'waiter' hold no interrupt phrase, 'rightly' is not 'right'", () => {
    expect(defaults.classify("the stopwatch")).toBe("speech");
    expect(defaults.classify("waiter")).toBe("speech");
    expect(defaults.classify("rightly")).toBe("speech");
  });

  it(`more than ${MAX_ACKNOWLEDGEMENT_WORDS} words is never only acknowledgement`, () => {
    expect(defaults.acknowledges(Array(MAX_ACKNOWLEDGEMENT_WORDS).fill("yeah").join(" "))).toBe(true);
    expect(defaults.acknowledges(Array(MAX_ACKNOWLEDGEMENT_WORDS + 1).fill("yeah").join(" "))).toBe(false);
  });

  it("empty lists classify everything as speech", () => {
    const none = new PhraseClassifier({ acknowledgementPhrases: [], interruptPhrases: [] });
    for (const text of ["okay", "stop", "uh-huh"]) expect(none.classify(text)).toBe("speech");
  });

  it("an author's phrase in another language matches its own words", () => {
    const spanish = new PhraseClassifier({ acknowledgementPhrases: ["sí", "vale", "ajá"], interruptPhrases: ["espera"] });
    expect(spanish.classify("Sí, sí, vale.")).toBe("acknowledgement");
    expect(spanish.classify("¡Espera!")).toBe("interrupt");
  });

  it("a long transcript is scanned in bounded work (a stranger's STT can send anything)", () => {
    const long = Array(20_000).fill("blah").join(" ");
    expect(defaults.classify(`${long} stop`)).toBe("interrupt");
    expect(defaults.classify(long)).toBe("speech");
  });
});

describe("isBargeIn with the phrase class", () => {
  const policy = { enabled: true, minWords: 3, minDurationMs: 1000 };
  const evidence: SpeechEvidence = { words: 1, speechMs: 50, final: false, agentAudible: true };

  it("an interrupt phrase interrupts below minWords and minDurationMs", () => {
    expect(isBargeIn(policy, evidence)).toBe(false);
    expect(isBargeIn(policy, { ...evidence, phrase: "interrupt" })).toBe(true);
  });

  it("only acknowledgements never interrupt, however long or final", () => {
    expect(isBargeIn(policy, { words: 4, speechMs: 5000, final: true, agentAudible: true, phrase: "acknowledgement" })).toBe(false);
    expect(isBargeIn(policy, { words: 4, speechMs: 5000, final: true, agentAudible: true, phrase: "speech" })).toBe(true);
  });

  it('nothing interrupts with interruption "off" or when the agent is not audible', () => {
    expect(isBargeIn({ ...policy, enabled: false }, { ...evidence, phrase: "interrupt" })).toBe(false);
    expect(isBargeIn(policy, { ...evidence, agentAudible: false, phrase: "interrupt" })).toBe(false);
  });
});
