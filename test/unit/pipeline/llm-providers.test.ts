import { describe, expect, it } from "vitest";
import { MissingKeyError } from "../../../src/errors.js";
import { resolveLanguageModel } from "../../../src/pipeline/providers/llm/index.js";

type Model = { provider: string; modelId: string };
const resolve = async (...args: Parameters<typeof resolveLanguageModel>): Promise<Model> => (await resolveLanguageModel(...args)) as unknown as Model;

describe("resolveLanguageModel", () => {
  it.each([
    ["openai", "OPENAI_API_KEY", "gpt-4.1-mini", /^openai/],
    ["anthropic", "ANTHROPIC_API_KEY", "claude-sonnet-4-5", /^anthropic/],
    ["google", "GOOGLE_API_KEY", "gemini-2.5-flash", /^google/],
    ["groq", "GROQ_API_KEY", "llama-3.3-70b-versatile", /^groq/],
  ])("builds %s from its key variable", async (kind, variable, model, provider) => {
    const resolved = await resolve({ kind, options: { model } }, { env: { [variable]: "k" } });
    expect(resolved.modelId).toBe(model);
    expect(resolved.provider).toMatch(provider);
  });

  it("names the missing variable, or options.apiKeyEnv", async () => {
    await expect(resolve({ kind: "openai", options: { model: "m" } }, { env: {} })).rejects.toThrow(MissingKeyError);
    await expect(resolve({ kind: "anthropic", options: { model: "m" } }, { env: {} })).rejects.toThrow(/set ANTHROPIC_API_KEY/);
    await expect(resolve({ kind: "openai", options: { model: "m", apiKeyEnv: "TEAM_KEY" } }, { env: { OPENAI_API_KEY: "x" } })).rejects.toThrow(/set TEAM_KEY/);
    const viaNamed = await resolve({ kind: "openai", options: { model: "m", apiKeyEnv: "TEAM_KEY" } }, { env: { TEAM_KEY: "x" } });
    expect(viaNamed.modelId).toBe("m");
  });

  it("openai-compatible needs a base URL and a model, and a key only when apiKeyEnv names one", async () => {
    const local = await resolve({ kind: "openai-compatible", options: { baseURL: "http://127.0.0.1:11434/v1", model: "llama3.1" } }, { env: {} });
    expect(local.modelId).toBe("llama3.1");
    await expect(resolve({ kind: "openai-compatible", options: { model: "x" } }, { env: {} })).rejects.toThrow(/needs options.baseURL/);
  });

  it("scripted follows the agent's script; unknown kinds are refused by name", async () => {
    const scripted = await resolve({ kind: "scripted", options: {} }, { env: {}, script: { rules: [] } });
    expect(scripted.provider).toBe("scripted");
    await expect(resolve({ kind: "mystery", options: {} }, { env: {} })).rejects.toThrow(/no LLM provider of kind "mystery"/);
  });
});
