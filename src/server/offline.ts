import { LLM_KEY_VARIABLES, type Env } from "../pipeline/providers/llm/index.js";
import { OFFLINE_PROVIDERS, resolveTeam, type AgentConfig, type ProviderDescriptor, type ResolvedAgentDef, type Team } from "../manifest/index.js";
import { spread } from "../spread.js";

/** Keys each network provider kind reads, by slot and kind (the offline kinds need none). */
const KEY_VARIABLES: Readonly<Record<string, readonly string[]>> = spread(LLM_KEY_VARIABLES, {
  deepgram: ["DEEPGRAM_API_KEY"],
  assemblyai: ["ASSEMBLYAI_API_KEY"],
  cartesia: ["CARTESIA_API_KEY"],
  elevenlabs: ["ELEVENLABS_API_KEY"],
  "openai-realtime": ["OPENAI_API_KEY"],
  "gemini-live": ["GOOGLE_API_KEY", "GEMINI_API_KEY"],
});

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

/** "OPENAI_API_KEY → llm openai" for each provider of `config` whose key `env` lacks; `where` prefixes the slot (a sub-agent's path). */
function missingKeys(config: AgentConfig, env: Env, where = ""): string[] {
  const missing: string[] = [];
  for (const slot of ["stt", "llm", "tts", "s2s"] as const) {
    const descriptor = config[slot];
    if (descriptor === undefined) continue;
    const variable = missingKey(descriptor, env);
    if (variable !== undefined) missing.push(`${variable} → ${where === "" ? "" : `${where} `}${slot} ${descriptor.kind}`);
  }
  return missing;
}

/**
 * `config` on the offline stack (local STT, the scripted model, local TTS). A text agent swaps
 * only its LLM; a `scripted` llm is kept as it is (it needs no key, and may carry its own script).
 */
function offlineConfig(config: AgentConfig): AgentConfig {
  const llm = config.llm?.kind === "scripted" ? config.llm : OFFLINE_PROVIDERS.llm;
  const swapped: AgentConfig =
    config.mode === "text" ? spread(config, { llm }) : spread(config, { mode: "pipeline", stt: OFFLINE_PROVIDERS.stt, llm, tts: OFFLINE_PROVIDERS.tts });
  if (config.mode !== "text") delete (swapped as { s2s?: unknown }).s2s;
  return swapped;
}

/**
 * Run the agent on the offline stack (local STT, the scripted model, local TTS) when told to,
 * or — in "auto" — when any provider it names lacks its key. A text agent swaps only its LLM.
 */
export function chooseProviders(config: AgentConfig, env: Env, offline: boolean | "auto"): OfflineChoice {
  const missing = missingKeys(config, env);
  const goOffline = offline === true || (offline === "auto" && missing.length > 0);
  return goOffline ? { config: offlineConfig(config), offline: true, missing } : { config, offline: false, missing };
}

export interface TeamChoice {
  readonly team: Team;
  readonly offline: boolean;
  /** Each missing key, with the sub-agent's path when it is one of theirs. */
  readonly missing: readonly string[];
}

/**
 * `chooseProviders` for a whole team: the agent and its sub-agents go offline together, when
 * told to or — in "auto" — when any of them lacks a key (a sub-agent on a network model the
 * gateway has no key for would fail at its first call).
 */
export function chooseTeamProviders(def: ResolvedAgentDef, config: AgentConfig, env: Env, offline: boolean | "auto", warn: (message: string) => void): TeamChoice {
  const team = resolveTeam(def, config, { warn });
  // A workflow app opens no providers: it runs no sessions, so no key is missing and nothing goes offline.
  if (config.mode === "workflow-app") return { team, offline: false, missing: [] };
  const missing = team.agents.flatMap((agent) => missingKeys(agent.config, env, agent.path));
  const goOffline = offline === true || (offline === "auto" && missing.length > 0);
  if (!goOffline) return { team, offline: false, missing };
  return { team: resolveTeam(def, config, { warn: () => {}, adapt: offlineConfig }), offline: true, missing };
}
