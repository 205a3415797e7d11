/**
 * Reading a provider descriptor's `options` (config.md "providers"): each reader validates one
 * option and reports a bad value as a fatal error naming it (`stt.options.model`, …), so a
 * misconfigured agent fails at start, not on the first call. Which options exist, and their
 * defaults, are each vendor's (see its adapter).
 */
import { GatewayError } from "../../errors.js";
import type { ProviderDescriptor } from "../../manifest/index.js";
import { apiKeyFor, type Env } from "./keys.js";

/** A query parameter's value (`options.params`). */
export type ParamValue = string | number | boolean;

/** Where the options sit in the agent config, for error messages. */
export type OptionSection = "stt" | "tts";

export interface OptionReader {
  /** A non-empty string, or undefined when absent. */
  string(name: string): string | undefined;
  /** A finite number in [min, max], or undefined when absent. */
  number(name: string, min: number, max: number): number | undefined;
  boolean(name: string): boolean | undefined;
  /** A plain object, or undefined when absent. */
  object(name: string): Record<string, unknown> | undefined;
  /** `options.url`, or `fallback`; either must be a ws:// or wss:// URL. */
  wsUrl(fallback: string): string;
  /** `options.params`: extra query parameters, each a string, number or boolean. */
  params(): Readonly<Record<string, ParamValue>>;
  /** `options.params` where a value may also be a list (the parameter is then repeated). */
  repeatedParams(): Readonly<Record<string, ParamValue | readonly ParamValue[]>>;
}

function isParamValue(value: unknown): value is ParamValue {
  return ["string", "number", "boolean"].includes(typeof value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The option reader for `descriptor`, naming options as `<section>.options.<name>`. */
export function optionsOf(descriptor: ProviderDescriptor, section: OptionSection): OptionReader {
  const fail = (message: string): never => {
    throw new GatewayError("internal", `${section}.options.${message}`, { fatal: true });
  };
  const reader: OptionReader = {
    string(name) {
      const value = descriptor.options[name];
      if (value === undefined) return undefined;
      if (typeof value !== "string" || value.trim() === "") return fail(`${name} must be a non-empty string.`);
      return value;
    },
    number(name, min, max) {
      const value = descriptor.options[name];
      if (value === undefined) return undefined;
      if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) return fail(`${name} must be a number from ${min} to ${max}.`);
      return value;
    },
    boolean(name) {
      const value = descriptor.options[name];
      if (value === undefined) return undefined;
      if (typeof value !== "boolean") return fail(`${name} must be true or false.`);
      return value;
    },
    object(name) {
      const value = descriptor.options[name];
      if (value === undefined) return undefined;
      if (!isPlainObject(value)) return fail(`${name} must be an object.`);
      return value;
    },
    wsUrl(fallback) {
      const url = reader.string("url") ?? fallback;
      if (!/^wss?:\/\//.test(url)) return fail(`url must be a ws:// or wss:// URL, got "${url}".`);
      return url;
    },
    params() {
      const value = descriptor.options.params;
      if (value === undefined) return {};
      if (!isPlainObject(value) || !Object.values(value).every(isParamValue)) return fail("params must be an object of string, number or boolean values.");
      return value as Record<string, ParamValue>;
    },
    repeatedParams() {
      const value = descriptor.options.params;
      if (value === undefined) return {};
      const ok = isPlainObject(value) && Object.values(value).every((v) => isParamValue(v) || (Array.isArray(v) && v.every(isParamValue)));
      if (!ok) return fail("params must be an object of string, number or boolean values (or arrays of them).");
      return value as Record<string, ParamValue | readonly ParamValue[]>;
    },
  };
  return reader;
}

/**
 * The provider's key (`apiKeyFor`: a MissingKeyError naming the variable when it is not set) and
 * the variable it came from, for "check <variable>" in refusal messages: `options.apiKeyEnv`, else
 * the first of `variables` that is set. With `checkedBy`, `options.apiKeyEnv` is validated by that
 * reader first, so a bad one is reported as `<section>.options.apiKeyEnv`.
 */
export function providerKey(descriptor: ProviderDescriptor, env: Env, variables: readonly string[], checkedBy?: OptionReader): { apiKey: string; keyVariable: string } {
  checkedBy?.string("apiKeyEnv");
  const apiKey = apiKeyFor(descriptor, env, variables);
  const named = descriptor.options.apiKeyEnv;
  if (typeof named === "string" && named !== "") return { apiKey, keyVariable: named };
  const keyVariable = variables.find((v) => (env[v] ?? "") !== "") ?? variables[0] ?? `${descriptor.kind.toUpperCase()}_API_KEY`;
  return { apiKey, keyVariable };
}
