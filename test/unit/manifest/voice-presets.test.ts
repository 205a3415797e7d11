import { describe, expect, it } from "vitest";
import { VOICE_PRESETS, VOICE_PRESET_NAMES, buildSystemPrompt } from "../../../src/manifest/index.js";

describe("voice presets", () => {
  it("the catalog has at least the four pinned presets", () => {
    expect(VOICE_PRESET_NAMES).toEqual(expect.arrayContaining(["speechNormalization", "echoVerification", "natoAlphabet", "phoneEtiquette"]));
  });

  it("appends presets in the order named, then the prompt context", () => {
    const prompt = buildSystemPrompt({
      systemPrompt: "You are Ada. ",
      voicePresets: ["phoneEtiquette", "unknownPreset", "natoAlphabet"],
      promptContext: "The caller's name is Sam.",
    });
    expect(prompt).toBe(["You are Ada.", VOICE_PRESETS.phoneEtiquette, VOICE_PRESETS.natoAlphabet, "The caller's name is Sam."].join("\n\n"));
  });

  it("is the bare system prompt without presets or context", () => {
    expect(buildSystemPrompt({ systemPrompt: "Hello.", promptContext: "  " })).toBe("Hello.");
  });
});
