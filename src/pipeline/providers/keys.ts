import { GatewayError, MissingKeyError } from "../../errors.js";
import type { ProviderDescriptor } from "../../manifest/index.js";

/** Where keys come from: the process environment, or a test's. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A string option of a descriptor, or undefined; anything else is a clear fatal error. */
export function stringOption(descriptor: ProviderDescriptor, name: string): string | undefined {
  const value = descriptor.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new GatewayError("internal", `${descriptor.kind} options.${name} must be a non-empty string.`, { fatal: true });
  }
  return value;
}

/** The key for a provider: `options.apiKeyEnv` first, then the provider's conventional variables. */
export function apiKeyFor(descriptor: ProviderDescriptor, env: Env, variables: readonly string[]): string {
  const named = stringOption(descriptor, "apiKeyEnv");
  const candidates = named === undefined ? variables : [named];
  for (const variable of candidates) {
    const value = env[variable];
    if (value !== undefined && value !== "") return value;
  }
  throw new MissingKeyError(descriptor.kind, candidates[0] ?? `${descriptor.kind.toUpperCase()}_API_KEY`);
}

