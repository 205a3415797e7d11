/** Gemini Live: the endpoint, the key, and `s2s.options` read and validated (docs/vendors.md (Gemini Live)). */
import { GatewayError, MissingKeyError } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";


/**
 * The Gemini API version of the Live endpoint. `@google/genai` 2.32.0, dist/node/index.mjs:
 * `const GOOGLE_AI_API_DEFAULT_VERSION = 'v1beta';` (v1alpha only for ephemeral tokens, not used here).
 */
export const GEMINI_LIVE_API_VERSION = "v1beta";
/**
 * The Live endpoint as the SDK builds it (`Live.connect`, API-key path):
 * `${websocketBaseUrl}/ws/google.ai.generativelanguage.${apiVersion}.GenerativeService.${method}?${keyName}=${apiKey}`
 * with `method = 'BidiGenerateContent'`, `keyName = 'key'`, base `https://generativelanguage.googleapis.com/`
 * turned into `wss:`. The key is added per socket (`#dial`). Also docs/vendors.md (Gemini Live), "Endpoint".
 */
export const GEMINI_LIVE_URL = `wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.${GEMINI_LIVE_API_VERSION}.GenerativeService.BidiGenerateContent`;
/** docs/vendors.md (Gemini Live), "Setup": `model` is `models/<id>`. */
export const GEMINI_LIVE_DEFAULT_MODEL = "models/gemini-live-2.5-flash-preview";
/**
 * Where the key is read from, in this order; the first set to a non-empty value wins
 * (`options.apiKeyEnv` replaces the list). The SDK's order: `getApiKeyFromEnv()` returns
 * `envGoogleApiKey || envGeminiApiKey` and warns "Both GOOGLE_API_KEY and GEMINI_API_KEY are set.
 * Using GOOGLE_API_KEY." (dist/node/index.mjs).
 */
export const GEMINI_KEY_VARIABLES = ["GOOGLE_API_KEY", "GEMINI_API_KEY"] as const;
/** docs/vendors.md (Gemini Live), "Audio": input PCM16 at 16 kHz (stated in `mimeType`), output PCM16 at 24 kHz. */
export const GEMINI_INPUT_RATE = 16_000;
export const GEMINI_OUTPUT_RATE = 24_000;
export const INPUT_MIME = `audio/pcm;rate=${GEMINI_INPUT_RATE}`;

/** Where keys come from: the process environment, or a test's. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The descriptor's options (`s2s.options`), validated. */
export interface GeminiLiveSettings {
  readonly url: string;
  readonly apiKey: string;
  /** The variables the key is read from (`apiKeyEnv`, else GOOGLE_API_KEY then GEMINI_API_KEY): a refusal names them. */
  readonly keyVariables: readonly string[];
  readonly model: string;
  readonly voice?: string | undefined;
  readonly language?: string | undefined;
}

/** Read `s2s.options` (`model`, `voice`, `language`, `url`, `apiKeyEnv`) and the key; throws a fatal error at construction. */
export function geminiLiveSettings(descriptor: ProviderDescriptor, env: Env): GeminiLiveSettings {
  const string = (name: string): string | undefined => {
    const value = descriptor.options[name];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.trim() === "") {
      throw new GatewayError("internal", `s2s.options.${name} must be a non-empty string.`, { fatal: true });
    }
    return value;
  };
  const keyEnv = string("apiKeyEnv");
  const variables = keyEnv === undefined ? GEMINI_KEY_VARIABLES : [keyEnv];
  const apiKey = variables.map((name) => env[name]).find((value) => value !== undefined && value !== "");
  if (apiKey === undefined) throw new MissingKeyError(descriptor.kind, variables[0] ?? "GOOGLE_API_KEY");
  const url = string("url") ?? GEMINI_LIVE_URL;
  if (!/^wss?:\/\//.test(url)) throw new GatewayError("internal", `s2s.options.url must be a ws:// or wss:// URL, got "${url}".`, { fatal: true });
  const model = string("model") ?? GEMINI_LIVE_DEFAULT_MODEL;
  return { url, apiKey, keyVariables: variables, model: model.startsWith("models/") ? model : `models/${model}`, voice: string("voice"), language: string("language") };
}
