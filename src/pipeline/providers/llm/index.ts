import type { LanguageModel } from "ai";
import { GatewayError } from "../../../errors.js";
import { apiKeyFor, stringOption, type Env } from "../keys.js";

export { apiKeyFor, type Env } from "../keys.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { scriptedModel } from "./scripted.js";

/** The environment variable each LLM provider reads its key from, unless `options.apiKeyEnv` names another. */
export const LLM_KEY_VARIABLES: Readonly<Record<string, readonly string[]>> = {
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  google: ["GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"],
  groq: ["GROQ_API_KEY"],
};

function requiredOption(descriptor: ProviderDescriptor, name: string, example: string): string {
  const value = stringOption(descriptor, name);
  if (value === undefined) {
    throw new GatewayError("internal", `llm ${descriptor.kind} needs options.${name}, e.g. ${example}.`, { fatal: true });
  }
  return value;
}

/** Context a resolver may need beyond the descriptor. */
export interface LlmResolveOptions {
  readonly env: Env;
  /** The agent's offline script (its `offline.json`), for the `scripted` kind. */
  readonly script?: unknown;
}

/**
 * The model for an `llm` descriptor. Options and keys are checked before anything loads; a
 * provider's SDK package is imported on first use, so a gateway pays only for the one it runs.
 */
export async function resolveLanguageModel(descriptor: ProviderDescriptor, options: LlmResolveOptions): Promise<LanguageModel> {
  const { env } = options;
  switch (descriptor.kind) {
    case "scripted":
      return scriptedModel(options.script ?? descriptor.options.script ?? { rules: [] });
    case "openai-compatible": {
      const baseURL = requiredOption(descriptor, "baseURL", '"http://127.0.0.1:11434/v1" (Ollama)');
      const model = requiredOption(descriptor, "model", '"llama3.1"');
      const keyEnv = stringOption(descriptor, "apiKeyEnv");
      const apiKey = keyEnv === undefined ? undefined : apiKeyFor(descriptor, env, []);
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      // includeUsage: streamed usage is what usageLimits count.
      return createOpenAICompatible({ name: "openai-compatible", baseURL, includeUsage: true, ...(apiKey === undefined ? {} : { apiKey }) }).chatModel(model);
    }
    case "openai":
    case "anthropic":
    case "google":
    case "groq": {
      const model = requiredOption(descriptor, "model", descriptor.kind === "openai" ? '"gpt-4.1-mini"' : "the provider's model id");
      const apiKey = apiKeyFor(descriptor, env, LLM_KEY_VARIABLES[descriptor.kind] ?? []);
      const baseURL = stringOption(descriptor, "baseURL");
      const settings = { apiKey, ...(baseURL === undefined ? {} : { baseURL }) };
      if (descriptor.kind === "openai") return (await import("@ai-sdk/openai")).createOpenAI(settings)(model);
      if (descriptor.kind === "anthropic") return (await import("@ai-sdk/anthropic")).createAnthropic(settings)(model);
      if (descriptor.kind === "google") return (await import("@ai-sdk/google")).createGoogleGenerativeAI(settings)(model);
      return (await import("@ai-sdk/groq")).createGroq(settings)(model);
    }
    default:
      throw new GatewayError("internal", `no LLM provider of kind "${descriptor.kind}" is registered in this gateway.`, { fatal: true });
  }
}
