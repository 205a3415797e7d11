import { LLM_KEY_VARIABLES, type Env } from "../pipeline/providers/llm/index.js";
import { OFFLINE_PROVIDERS, type AgentConfig, type ProviderDescriptor } from "../manifest/index.js";

/** Keys each network provider kind reads, by slot and kind (the offline kinds need none). */
const KEY_VARIABLES: Readonly<Record<string, readonly string[]>> = {
  ...LLM_KEY_VARIABLES,
  deepgram: ["DEEPGRAM_API_KEY"],
  assemblyai: ["ASSEMBLYAI_API_KEY"],
  cartesia: ["CARTESIA_API_KEY"],
  elevenlabs: ["ELEVENLABS_API_KEY"],
  "openai-realtime": ["OPENAI_API_KEY"],
  "gemini-live": ["GOOGLE_API_KEY", "GEMINI_API_KEY"],
};

/** The keys a descriptor needs that the environment lacks (one name per provider). */
export function missingKey(descriptor: ProviderDescriptor, env: Env): string | undefined {
  const named = descriptor.options.apiKeyEnv;
  const variables = typeof named === "string" ? [named] : KEY_VARIABLES[descriptor.kind];
  if (variables === undefined || variables.length === 0) return undefined;
  return variables.some((v) => (env[v] ?? "") !== "") ? undefined : variables[0];
}

export interface OfflineChoice {
  readonly config: AgentConfig;
  readonly offline: boolean;
  /** "OPENAI_API_KEY → llm openai" for each missing key, for the one log line. */
  readonly missing: readonly string[];
}

/**
 * Run the agent on the offline stack (local STT, the scripted model, local TTS) when told to,
 * or — in "auto" — when any provider it names lacks its key. A text agent swaps only its LLM.
 */
export function chooseProviders(config: AgentConfig, env: Env, offline: boolean | "auto"): OfflineChoice {
  const missing: string[] = [];
  for (const slot of ["stt", "llm", "tts", "s2s"] as const) {
    const descriptor = config[slot];
    if (descriptor === undefined) continue;
    const variable = missingKey(descriptor, env);
    if (variable !== undefined) missing.push(`${variable} → ${slot} ${descriptor.kind}`);
  }
  const goOffline = offline === true || (offline === "auto" && missing.length > 0);
  if (!goOffline) return { config, offline: false, missing };
  const swapped: AgentConfig =
    config.mode === "text"
      ? { ...config, llm: OFFLINE_PROVIDERS.llm }
      : { ...config, mode: "pipeline", stt: OFFLINE_PROVIDERS.stt, llm: OFFLINE_PROVIDERS.llm, tts: OFFLINE_PROVIDERS.tts };
  if (config.mode !== "text") delete (swapped as { s2s?: unknown }).s2s;
  return { config: swapped, offline: true, missing };
}
