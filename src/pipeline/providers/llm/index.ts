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

/** A network model's settings, as `languageModelSettings` reads them from the descriptor. */
export type NetworkLlmSettings =
  | { readonly kind: "openai-compatible"; readonly baseURL: string; readonly model: string; readonly apiKey: string | undefined }
  | { readonly kind: "openai" | "anthropic" | "google" | "groq"; readonly model: string; readonly apiKey: string; readonly baseURL: string | undefined };

/** What an `llm` descriptor resolves to before any SDK loads: the scripted model itself, or a network model's settings. */
export type LlmSettings = { readonly kind: "scripted"; readonly model: LanguageModel } | NetworkLlmSettings;

/**
 * Every check `resolveLanguageModel` makes, and nothing else: the options, the key and — for
 * `scripted` — the script (compiled here). Pure: no SDK is imported and nothing is opened, so
 * `switchboard check` and the agent loader run exactly what a session start runs. Throws the
 * error the session would: a fatal `GatewayError` naming the option, a `MissingKeyError` naming
 * the variable, or the script's `ConfigError`.
 */
export function languageModelSettings(descriptor: ProviderDescriptor, options: LlmResolveOptions): LlmSettings {
  const { env } = options;
  switch (descriptor.kind) {
    case "scripted":
      return { kind: "scripted", model: scriptedModel(options.script ?? descriptor.options.script ?? { rules: [] }) };
    case "openai-compatible": {
      const baseURL = requiredOption(descriptor, "baseURL", '"http://127.0.0.1:11434/v1" (Ollama)');
      const model = requiredOption(descriptor, "model", '"llama3.1"');
      const keyEnv = stringOption(descriptor, "apiKeyEnv");
      const apiKey = keyEnv === undefined ? undefined : apiKeyFor(descriptor, env, []);
      return { kind: "openai-compatible", baseURL, model, apiKey };
    }
    case "openai":
    case "anthropic":
    case "google":
    case "groq": {
      const model = requiredOption(descriptor, "model", descriptor.kind === "openai" ? '"gpt-4.1-mini"' : "the provider's model id");
      const apiKey = apiKeyFor(descriptor, env, LLM_KEY_VARIABLES[descriptor.kind] ?? []);
      return { kind: descriptor.kind, model, apiKey, baseURL: stringOption(descriptor, "baseURL") };
    }
    default:
      throw new GatewayError("internal", `no LLM provider of kind "${descriptor.kind}" is registered in this gateway.`, { fatal: true });
  }
}

/**
 * The model for an `llm` descriptor. Options and keys are checked before anything loads
 * (`languageModelSettings`); a provider's SDK package is imported on first use, so a gateway
 * pays only for the one it runs.
 */
export async function resolveLanguageModel(descriptor: ProviderDescriptor, options: LlmResolveOptions): Promise<LanguageModel> {
  const settings = languageModelSettings(descriptor, options);
  switch (settings.kind) {
    case "scripted":
      return settings.model;
    case "openai-compatible": {
      const { baseURL, model, apiKey } = settings;
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      // includeUsage: streamed usage is what usageLimits count.
      return createOpenAICompatible({ name: "openai-compatible", baseURL, includeUsage: true, ...(apiKey === undefined ? {} : { apiKey }) }).chatModel(model);
    }
    default: {
      const { model, apiKey, baseURL } = settings;
      const sdk = { apiKey, ...(baseURL === undefined ? {} : { baseURL }) };
      if (settings.kind === "openai") return (await import("@ai-sdk/openai")).createOpenAI(sdk)(model);
      if (settings.kind === "anthropic") return (await import("@ai-sdk/anthropic")).createAnthropic(sdk)(model);
      if (settings.kind === "google") return (await import("@ai-sdk/google")).createGoogleGenerativeAI(sdk)(model);
      return (await import("@ai-sdk/groq")).createGroq(sdk)(model);
    }
  }
}
