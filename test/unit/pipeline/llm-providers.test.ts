import { describe, expect, it } from "vitest";
import { MissingKeyError } from "../../../src/errors.js";
import { resolveLanguageModel } from "../../../src/pipeline/providers/llm/index.js";

type Model = { provider: string; modelId: string };

describe("resolveLanguageModel", () => {
  it.each([
    ["openai", "OPENAI_API_KEY", "gpt-4.1-mini", /^openai/],
    ["anthropic", "ANTHROPIC_API_KEY", "claude-sonnet-4-5", /^anthropic/],
    ["google", "GOOGLE_API_KEY", "gemini-2.5-flash", /^google/],
    ["groq", "GROQ_API_KEY", "llama-3.3-70b-versatile", /^groq/],
  ])("builds %s from its key variable", (kind, variable, model, provider) => {
    const resolved = resolveLanguageModel({ kind, options: { model } }, { env: { [variable]: "k" } }) as unknown as Model;
    expect(resolved.modelId).toBe(model);
    expect(resolved.provider).toMatch(provider);
  });

  it("names the missing variable, or options.apiKeyEnv", () => {
    expect(() => resolveLanguageModel({ kind: "openai", options: { model: "m" } }, { env: {} })).toThrow(MissingKeyError);
    expect(() => resolveLanguageModel({ kind: "anthropic", options: { model: "m" } }, { env: {} })).toThrow(/set ANTHROPIC_API_KEY/);
    expect(() => resolveLanguageModel({ kind: "openai", options: { model: "m", apiKeyEnv: "TEAM_KEY" } }, { env: { OPENAI_API_KEY: "x" } })).toThrow(/set TEAM_KEY/);
    const viaNamed = resolveLanguageModel({ kind: "openai", options: { model: "m", apiKeyEnv: "TEAM_KEY" } }, { env: { TEAM_KEY: "x" } }) as unknown as Model;
    expect(viaNamed.modelId).toBe("m");
  });

  it("openai-compatible needs a base URL and a model, and a key only when apiKeyEnv names one", () => {
    const local = resolveLanguageModel({ kind: "openai-compatible", options: { baseURL: "http://127.0.0.1:11434/v1", model: "llama3.1" } }, { env: {} }) as unknown as Model;
    expect(local.modelId).toBe("llama3.1");
    expect(() => resolveLanguageModel({ kind: "openai-compatible", options: { model: "x" } }, { env: {} })).toThrow(/needs options.baseURL/);
  });

  it("scripted follows the agent's script; unknown kinds are refused by name", () => {
    const scripted = resolveLanguageModel({ kind: "scripted", options: {} }, { env: {}, script: { rules: [] } }) as unknown as Model;
    expect(scripted.provider).toBe("scripted");
    expect(() => resolveLanguageModel({ kind: "mystery", options: {} }, { env: {} })).toThrow(/no LLM provider of kind "mystery"/);
  });
});
