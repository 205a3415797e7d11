/** A provider choice: which implementation, and its options. */
export interface ProviderDescriptor<K extends string = string, O extends Record<string, unknown> = Record<string, unknown>> {
  readonly kind: K;
  readonly options: O;
}

/** The provider slots of an agent. */
export type ProviderSlot = "stt" | "llm" | "tts" | "s2s";

/**
 * Built-in provider kinds per slot (config.md). A host that registers more passes them to
 * `toAgentConfig` through `providerKinds`.
 */
export const PROVIDER_KINDS: Readonly<Record<ProviderSlot, readonly string[]>> = {
  stt: ["deepgram", "assemblyai", "local"],
  llm: ["openai", "anthropic", "google", "groq", "openai-compatible", "scripted"],
  tts: ["cartesia", "elevenlabs", "openai", "local"],
  s2s: ["openai-realtime", "gemini-live"],
};

/**
 * The providers injected for a pipeline agent that names none. Fixed descriptors, not
 * environment look-ups: `toAgentConfig` is pure, and the host reports missing keys.
 */
export const DEFAULT_PROVIDERS = {
  stt: { kind: "deepgram", options: { model: "nova-3" } },
  llm: { kind: "openai", options: { model: "gpt-4.1-mini" } },
  tts: { kind: "cartesia", options: { model: "sonic-3" } },
} as const satisfies Record<"stt" | "llm" | "tts", ProviderDescriptor>;

/** The offline stack: no keys, no network (local STT, the scripted model, local TTS). */
export const OFFLINE_PROVIDERS = {
  stt: { kind: "local", options: {} },
  llm: { kind: "scripted", options: {} },
  tts: { kind: "local", options: {} },
} as const satisfies Record<"stt" | "llm" | "tts", ProviderDescriptor>;

/** `"<provider>/<model>"` → a descriptor; `undefined` when the string is not of that form. */
export function parseLlmShorthand(value: string): ProviderDescriptor | undefined {
  const slash = value.indexOf("/");
  if (slash <= 0 || slash === value.length - 1) return undefined;
  return { kind: value.slice(0, slash), options: { model: value.slice(slash + 1) } };
}

/** Carriers an agent may accept calls from (`telephony`). */
export const CARRIERS = ["twilio", "telnyx", "plivo", "exotel", "vonage"] as const;
export type Carrier = (typeof CARRIERS)[number];
