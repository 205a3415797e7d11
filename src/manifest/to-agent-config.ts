import type { z } from "zod";
import {
  AGENT_CONFIG_FIELDS,
  AgentConfigSchema,
  HOST_ONLY_AGENT_FIELDS,
  UNHONOURED_HOST_FIELDS,
  type AgentConfig,
  type AgentConfigSource,
} from "./agent-config.js";
import { parseAgentRoutes } from "./agent-routes.js";
import { checkEventObservers } from "./agent-events.js";
import { resolveConfig } from "./resolve-config.js";
import { checkSpokenPhrases } from "./spoken-phrases.js";
import { dialogToolOf, isDialog } from "./dialog.js";
import { didYouMean, IssueList, kindOf } from "./errors.js";
import { isToolDef } from "./tool-def.js";
import { deriveMode, noEffect, type AgentMode } from "./mode.js";
import { CARRIERS, DEFAULT_PROVIDERS, PROVIDER_KINDS, parseLlmShorthand, type ProviderSlot } from "./providers.js";
import { VOICE_PRESET_NAMES, isVoicePreset } from "./voice-presets.js";
import { transferIssues } from "./transfer-config.js";
import { recordingIssues } from "./recording.js";
import { voicemailIssues } from "./voicemail-config.js";
import { spread } from "../spread.js";

/** What `toAgentConfig` may be told besides the source. */
export interface ToAgentConfigOptions {
  /** Where warnings go (unknown voice presets or carriers). Default `console.warn`. */
  readonly warn?: (message: string) => void;
  /** Provider kinds a host registers beyond the built-in ones, per slot. */
  readonly providerKinds?: Partial<Readonly<Record<ProviderSlot, readonly string[]>>>;
}

const HOST_ONLY = new Set<string>(HOST_ONLY_AGENT_FIELDS);
/** Accepted at the top level besides AgentConfig's own fields: authoring aliases. */
const AUTHORING_ALIASES = new Set(["text"]);
const KNOWN_TOP_LEVEL = new Set<string>([...AGENT_CONFIG_FIELDS, ...HOST_ONLY, ...AUTHORING_ALIASES]);

const SPEECH_SERVICE = "the speech-to-speech service runs it";
const NO_AUDIO = "it has no audio";

/** Fields each mode refuses, with the reason the message gives. Paths are dotted. */
const TEXT_REFUSED: readonly (readonly [string, string])[] = [
  ["turnTaking", NO_AUDIO],
  ["interruption", NO_AUDIO],
  ["silence", NO_AUDIO],
  ["sttPrompt", NO_AUDIO],
  ["telephony", NO_AUDIO],
  ["dtmf", NO_AUDIO],
  ["maxCallDurationMs", NO_AUDIO],
  ["errorPhrase", NO_AUDIO],
  ["startFailurePhrase", NO_AUDIO],
  ["clientInbox", NO_AUDIO],
  ["recording.audio", NO_AUDIO],
  ["waitingAudio", NO_AUDIO],
  ["voicemail", NO_AUDIO],
];

/** The top-level fields about speech: what a text session of a voice agent leaves out (`textSession`). */
export const VOICE_ONLY_FIELDS: readonly string[] = ["stt", "tts", "s2s", ...TEXT_REFUSED.map(([field]) => field).filter((field) => !field.includes("."))];

const REFUSED: Readonly<Record<AgentMode, readonly (readonly [string, string])[]>> = {
  s2s: [
    ["turnTaking", "the speech-to-speech service detects turns itself"],
    ["interruption.minWords", "the service decides barge-in"],
    ["interruption.minDurationMs", "the service decides barge-in"],
    ["interruption.continuationWindowMs", "the service decides barge-in"],
    ["interruption.resumeFalseInterruption", "the service decides barge-in"],
    ["interruption.acknowledgementPhrases", "the service decides barge-in and commits every caller turn itself"],
    ["interruption.interruptPhrases", "the service decides barge-in"],
    ["silence.deadAirCoverMs", "the service speaks while it works"],
    ["errorPhrase", "the service speaks for itself when a turn fails"],
    ["startFailurePhrase", "there is no separate TTS to speak it"],
    ["temperature", SPEECH_SERVICE],
    ["maxOutputTokens", SPEECH_SERVICE],
    ["maxRetries", SPEECH_SERVICE],
    ["resetToolChoice", SPEECH_SERVICE],
    ["usageLimits", SPEECH_SERVICE],
  ],
  text: TEXT_REFUSED,
  "workflow-app": TEXT_REFUSED,
  pipeline: [],
};

function valueAt(value: unknown, parts: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of parts) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function pathOf(parts: readonly PropertyKey[]): string {
  return parts.reduce<string>((acc, part) => {
    if (typeof part === "number") return `${acc}[${part}]`;
    return acc === "" ? String(part) : `${acc}.${String(part)}`;
  }, "");
}

/** The field names of the object schema at `path` (through optionals, unions and records). */
function fieldsAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case "optional":
    case "default":
    case "readonly":
      return fieldsAt(def.innerType as z.core.$ZodType, path);
    case "pipe":
      return fieldsAt(def.out as z.core.$ZodType, path);
    case "union":
      return (def.options as z.core.$ZodType[]).flatMap((option) => fieldsAt(option, path));
    case "record":
      return path.length === 0 ? [] : fieldsAt(def.valueType as z.core.$ZodType, path.slice(1));
    case "object": {
      const shape = def.shape as Record<string, z.core.$ZodType>;
      if (path.length === 0) return Object.keys(shape);
      const child = shape[String(path[0])];
      return child === undefined ? [] : fieldsAt(child, path.slice(1));
    }
    default:
      return [];
  }
}

/** Zod issues → the author's words: the field, what is wrong, what to write instead. */
function addZodIssues(issues: IssueList, error: z.ZodError, source: Record<string, unknown>): void {
  for (const issue of error.issues) {
    const path = pathOf(issue.path);
    if (issue.code === "unrecognized_keys") {
      const group = path === "" ? "the agent" : `\`${path}\``;
      const known = fieldsAt(AgentConfigSchema, issue.path);
      for (const key of issue.keys) {
        const full = path === "" ? key : `${path}.${key}`;
        issues.add(full, `\`${key}\` is not a field of ${group}.${didYouMean(key, known)}`);
      }
      continue;
    }
    if (issue.code === "invalid_key") {
      const key = String(issue.path.at(-1));
      issues.add(path, `key ${JSON.stringify(key)}: ${issue.issues.map((i) => i.message).join("; ")}`);
      continue;
    }
    const got = valueAt(source, issue.path);
    const shown = got === undefined ? "nothing" : (JSON.stringify(got) ?? typeof got);
    const message = issue.code === "invalid_type" && got === undefined ? "is required" : `${issue.message} (got ${shown})`;
    issues.add(path === "" ? "agent" : path, message);
  }
}

/** Unknown provider kinds, checked on the raw descriptors so they join the schema's issues. */
function checkProviderKinds(issues: IssueList, wire: Record<string, unknown>, options: ToAgentConfigOptions): void {
  for (const slot of ["stt", "llm", "tts", "s2s"] as const) {
    const value = wire[slot];
    const descriptor = typeof value === "string" ? parseLlmShorthand(value) : value;
    const kind = typeof descriptor === "object" && descriptor !== null ? (descriptor as { kind?: unknown }).kind : undefined;
    if (typeof kind !== "string" || kind.trim() === "") continue;
    const known = [...PROVIDER_KINDS[slot], ...(options.providerKinds?.[slot] ?? [])];
    if (!known.includes(kind)) {
      issues.add(`${slot}.kind`, `unknown ${slot} provider ${JSON.stringify(kind)}.${didYouMean(kind, known)} Known: ${known.join(", ")}.`);
    }
  }
}

function checkCrossField(issues: IssueList, config: AgentConfig, source: Record<string, unknown>): void {
  const turn = config.turnTaking;
  const { minSilenceMs: min, maxSilenceMs: max } = resolveConfig(config).turnTaking;
  if (min > max) {
    issues.add(
      "turnTaking.minSilenceMs",
      `must be ≤ turnTaking.maxSilenceMs (${min} > ${max}${turn?.maxSilenceMs === undefined ? ", the default" : ""}): the pause after which end-of-turn is checked cannot exceed the pause that forces it.`,
    );
  }
  const limit = turn?.userTurnLimit;
  if (limit !== undefined && limit.maxWords === undefined && limit.maxDurationMs === undefined) {
    issues.add("turnTaking.userTurnLimit", "set maxWords, maxDurationMs or both — or remove the limit.");
  }
  for (const issue of transferIssues(config)) issues.add(issue.path, issue.message);
  for (const issue of voicemailIssues(config)) issues.add(issue.path, issue.message);
  const waiting = config.waitingAudio;
  if (waiting !== undefined && waiting.thinking === undefined && waiting.ambience === undefined) {
    issues.add("waitingAudio", "set thinking, ambience or both — or remove waitingAudio.");
  }
  const tools = source.tools;
  if (typeof tools === "object" && tools !== null) {
    for (const name of config.builtinTools ?? []) {
      if (Object.hasOwn(tools, name)) {
        issues.add("builtinTools", `\`${name}\` is both a builtin and a tool of this agent (tools/${name}). Rename the file or drop the builtin.`);
      }
    }
  }
  if (config.recording !== undefined) {
    for (const [path, message] of recordingIssues(config.recording)) issues.add(path === "" ? "recording" : `recording.${path}`, message);
  }
}

/**
 * `dialogs`: dialogs keyed by their own id, and every dialog tool of the agent's `tools` belongs
 * to one of them — an unregistered dialog would run with no position in the session record and
 * none in `syncState`.
 */
function checkDialogs(issues: IssueList, source: Record<string, unknown>): void {
  const dialogs = source.dialogs;
  if (dialogs !== undefined && dialogs !== null && (typeof dialogs !== "object" || Array.isArray(dialogs))) {
    issues.add("dialogs", `must be an object of dialogs keyed by their id, such as dialogs: { verify } (got ${kindOf(dialogs)}).`);
    return;
  }
  const registered = (dialogs ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(registered)) {
    if (!isDialog(value)) issues.add(`dialogs.${key}`, `is ${kindOf(value)}, not a dialog; pass what dialog({ id, initial, states }) returns.`);
    else if (value.id !== key) issues.add(`dialogs.${key}`, `this dialog's id is "${value.id}": register it under its id, as dialogs: { ${value.id} }.`);
  }
  const tools = source.tools;
  if (typeof tools !== "object" || tools === null) return;
  for (const [name, def] of Object.entries(tools as Record<string, unknown>)) {
    const info = isToolDef(def) ? dialogToolOf(def) : undefined;
    if (info === undefined || registered[info.dialog.id] === info.dialog) continue;
    const { id } = info.dialog;
    const other = Object.hasOwn(registered, id) ? ` (the dialog registered as ${id} is another definition with the same id)` : "";
    issues.add(`tools.${name}`, `is a tool of dialog "${id}", which this agent does not register${other}: add dialogs: { ${id} } to agent({...}).`);
  }
}

/** Drop what the wire cannot carry: resolver functions, MCP url resolvers and headers. */
function serializable(source: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (HOST_ONLY.has(key) || AUTHORING_ALIASES.has(key) || value === undefined) continue;
    if ((key === "systemPrompt" || key === "promptContext") && typeof value === "function") continue;
    if (key === "mcpServers" && typeof value === "object" && value !== null) {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, server]) => {
          if (typeof server !== "object" || server === null) return [name, server];
          const { headers: _headers, url, ...rest } = server as Record<string, unknown>;
          return [name, typeof url === "function" || url === undefined ? rest : spread(rest, { url })];
        }),
      );
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** `inputGuardrails` / `outputGuardrails`: each a list of functions (docs/config.md "Guardrails"). */
function checkGuardrails(issues: IssueList, raw: Record<string, unknown>): void {
  const shape = "(text, { sessionId, session }) => ({ replacement, reason? }) | undefined, or a Promise of one";
  for (const field of ["inputGuardrails", "outputGuardrails"] as const) {
    const value = raw[field];
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      issues.add(field, `must be a list of guardrails, each ${shape} (got ${typeof value}). Wrap a single one: ${field}: [check].`);
      continue;
    }
    value.forEach((guardrail: unknown, i) => {
      if (typeof guardrail !== "function") issues.add(`${field}[${i}]`, `must be a guardrail function ${shape} (got ${guardrail === null ? "null" : typeof guardrail}).`);
    });
  }
  // In s2s an input guardrail reads the service's transcript of the caller: without one it would never run.
  if (isSet(raw.inputGuardrails) && valueAt(raw, ["s2s", "options", "transcription"]) === false) {
    issues.add("s2s.options.transcription", "`false` leaves the input guardrails nothing to read: in s2s they check the service's transcript of the caller. Remove it, or drop inputGuardrails.");
  }
}

/** A host-only field set to something (an empty list or record sets nothing). */
export function isSet(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** Say which fields the agent sets that this build accepts but does nothing with yet. */
function warnUnhonoured(raw: Record<string, unknown>, name: string, warn: (message: string) => void): void {
  for (const field of UNHONOURED_HOST_FIELDS) {
    if (isSet(raw[field])) warn(`${name}: \`${field}\` is not honoured yet in this build: it is accepted, and the gateway does nothing with it (docs/config.md §5).`);
  }
}

/**
 * Convert an agent definition into its serializable AgentConfig: strip host-only fields,
 * inject the default providers, derive the session mode and run every cross-field rule.
 * Throws a `ConfigError` listing every problem with its field path.
 */
export function toAgentConfig(source: AgentConfigSource, options: ToAgentConfigOptions = {}): AgentConfig {
  const warn = options.warn ?? ((message: string) => console.warn(message));
  const raw = source as Record<string, unknown>;
  const name = typeof raw.name === "string" && raw.name.trim() !== "" ? `agent "${raw.name}"` : "agent";
  const issues = new IssueList();

  if (typeof source !== "object" || source === null) {
    issues.add("agent", "an agent definition is an object such as { name: \"support\", systemPrompt: \"…\" }.");
    issues.throwIfAny(`Invalid ${name}`);
  }

  // A misspelled top-level key is reported as itself, before any cross-field rule.
  const candidates = [...AGENT_CONFIG_FIELDS, ...HOST_ONLY];
  for (const key of Object.keys(raw)) {
    if (!KNOWN_TOP_LEVEL.has(key)) issues.add(key, `\`${key}\` is not an agent field.${didYouMean(key, candidates)}`);
  }

  checkEventObservers(issues, raw.events);
  checkGuardrails(issues, raw);

  const derived = deriveMode(raw);
  for (const issue of derived.issues) issues.add(issue.path, issue.message);
  for (const [path, reason] of REFUSED[derived.mode]) {
    if (valueAt(raw, path.split(".")) !== undefined) issues.add(path, noEffect(path, derived.mode, reason));
  }
  // Host-only, so never on the wire, but a bad route key is the author's to fix here like any field.
  for (const issue of parseAgentRoutes(raw.routes).issues) issues.add(issue.path, issue.message);

  checkDialogs(issues, raw);

  const wire = serializable(raw);
  for (const key of Object.keys(wire)) if (!AGENT_CONFIG_FIELDS.includes(key as keyof AgentConfig)) delete wire[key];
  if (derived.mode === "pipeline") {
    for (const slot of ["stt", "llm", "tts"] as const) wire[slot] ??= DEFAULT_PROVIDERS[slot];
  } else if (derived.mode === "text" || derived.mode === "workflow-app") {
    wire.llm ??= DEFAULT_PROVIDERS.llm;
  }
  wire.mode = derived.mode;

  checkProviderKinds(issues, wire, options);
  const parsed = AgentConfigSchema.safeParse(wire);
  if (!parsed.success) {
    addZodIssues(issues, parsed.error, wire);
    issues.throwIfAny(`Invalid ${name}`);
  }
  const config = parsed.data as AgentConfig;
  checkCrossField(issues, config, raw);
  if (typeof config.interruption === "object") checkSpokenPhrases(issues, config.interruption);
  issues.throwIfAny(`Invalid ${name}`);

  if (config.voicePresets !== undefined) {
    const unknown = config.voicePresets.filter((p) => !isVoicePreset(p));
    for (const preset of unknown) {
      warn(`${name}: unknown voice preset "${preset}" ignored.${didYouMean(preset, VOICE_PRESET_NAMES)} Known: ${VOICE_PRESET_NAMES.join(", ")}.`);
    }
    if (unknown.length > 0) config.voicePresets = config.voicePresets.filter(isVoicePreset);
  }
  warnUnhonoured(raw, name, warn);
  const telephony = config.telephony;
  if (typeof telephony === "object") {
    const carriers: readonly string[] = CARRIERS;
    for (const carrier of telephony.filter((c) => !carriers.includes(c))) {
      warn(`${name}: unknown carrier "${carrier}" in telephony ignored.${didYouMean(carrier, CARRIERS)} Known: ${CARRIERS.join(", ")}.`);
    }
    config.telephony = telephony.filter((c) => carriers.includes(c));
  }
  return config;
}
