import { describe, expect, it } from "vitest";
import { configIssues } from "../../helpers/config-issues.js";
import { DEFAULTS, phraseKey, resolveConfig, spokenWords, toAgentConfig, type AgentConfigSource, type ConfigIssue } from "../../../src/manifest/index.js";

function problems(interruption: unknown): ConfigIssue[] {
  return configIssues(() => toAgentConfig({ name: "x", interruption } as AgentConfigSource, { warn: () => {} }));
}

describe("spoken words: how phrases and transcripts are compared", () => {
  it("ignores case and punctuation, drops apostrophes, splits at hyphens", () => {
    expect(spokenWords("Okay, GOT it!")).toEqual(["okay", "got", "it"]);
    expect(spokenWords("I'm listening…")).toEqual(["im", "listening"]);
    expect(spokenWords("Uh-huh.")).toEqual(["uh", "huh"]);
    expect(spokenWords(" ¿? ")).toEqual([]);
  });

  it("one spelling per sound: joined letters, a run of m is one m, a letter held 3+ times is one", () => {
    for (const spelling of ["uh huh", "Uh-huh.", "uhhuh", "UH-HUH"]) expect(phraseKey(spelling), spelling).toBe("uhhuh");
    for (const spelling of ["mm hmm", "Mm-hmm.", "mhm", "Mhmm", "mmhmm", "mmm-hmmm"]) expect(phraseKey(spelling), spelling).toBe("mhm");
    for (const spelling of ["ok", "OK.", "O.K.", "o k"]) expect(phraseKey(spelling), spelling).toBe("ok");
    expect(phraseKey("Okaaay")).toBe("okay");
    expect(phraseKey("yeahhh")).toBe("yeah");
    // "uh-uh" (no) is not "uh-huh" (yes).
    expect(phraseKey("uh-uh")).not.toBe(phraseKey("uh-huh"));
  });
});

describe("interruption phrase lists in the config", () => {
  it("defaults both lists, and the defaults pass their own checks", () => {
    const resolved = resolveConfig(toAgentConfig({ name: "x" }));
    expect(resolved.interruption.acknowledgementPhrases).toEqual(DEFAULTS.interruption.acknowledgementPhrases);
    expect(resolved.interruption.interruptPhrases).toEqual(DEFAULTS.interruption.interruptPhrases);
    expect(resolved.interruption.acknowledgementPhrases).toEqual(expect.arrayContaining(["uh huh", "mm hmm", "okay", "yeah", "right"]));
    expect(resolved.interruption.interruptPhrases).toEqual(expect.arrayContaining(["stop", "wait"]));
  });

  it("takes the author's lists as written; an empty list turns one off", () => {
    const config = toAgentConfig({ name: "x", interruption: { acknowledgementPhrases: ["Uh-huh", "si"], interruptPhrases: [] } });
    expect(config.interruption).toEqual({ acknowledgementPhrases: ["Uh-huh", "si"], interruptPhrases: [] });
    expect(resolveConfig(config).interruption.interruptPhrases).toEqual([]);
  });

  it("refuses a phrase with no words, one of too many words, one too long, and a list that is not a list", () => {
    expect(problems({ acknowledgementPhrases: ["okay", " -- "] })).toEqual([
      { path: "interruption.acknowledgementPhrases[1]", message: 'has no words (got " -- "); write the phrase as it is said, e.g. "uh-huh".' },
    ]);
    expect(problems({ interruptPhrases: ["please would you stop talking right now"] })[0]).toEqual({
      path: "interruption.interruptPhrases[0]",
      message: expect.stringContaining("has 7 words") as string,
    });
    expect(problems({ interruptPhrases: ["x".repeat(61)] })[0]?.message).toContain("must be at most 60 characters");
    expect(problems({ acknowledgementPhrases: "okay" })[0]).toEqual({
      path: "interruption",
      message: expect.stringContaining('{ acknowledgementPhrases: ["uh-huh", "okay"], interruptPhrases: ["stop"] } (phrase lists are lists of strings) (got {"acknowledgementPhrases":"okay"})') as string,
    });
  });

  it("refuses the same phrase twice, spelling aside, naming the first", () => {
    expect(problems({ acknowledgementPhrases: ["uh-huh", "okay", "Uh huh."] })).toEqual([
      { path: "interruption.acknowledgementPhrases[2]", message: '"Uh huh." is the same phrase as "uh-huh", listed before it (spelling, case and punctuation aside); remove one.' },
    ]);
  });

  it("refuses a phrase in both lists, the default list included", () => {
    expect(problems({ acknowledgementPhrases: ["okay", "Wait"], interruptPhrases: ["wait"] })).toEqual([
      { path: "interruption.acknowledgementPhrases[1]", message: '"Wait" is also in interruption.interruptPhrases (as "wait"): a phrase cannot both interrupt and not. Remove it from one list.' },
    ]);
    expect(problems({ acknowledgementPhrases: ["stop"] })[0]?.message).toContain("(interruptPhrases is the default list here; set it to change it)");
    expect(toAgentConfig({ name: "x", interruption: { acknowledgementPhrases: ["stop"], interruptPhrases: [] } }).interruption).toBeDefined();
  });
});
