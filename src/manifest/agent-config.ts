import { z } from "zod";
import { DEFAULTS } from "./defaults.js";
import type { AgentMode } from "./mode.js";
import { MAX_PHRASE_CHARS, MAX_PHRASES } from "./spoken-phrases.js";
import { parseLlmShorthand } from "./providers.js";
import { TransferSchema } from "./transfer-config.js";
import { RecordingSchema } from "./recording.js";
import { VoicemailSchema } from "./voicemail-config.js";

const TOOL_NAME = /^[a-z][a-z0-9_]*$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

const nonBlank = z.string().trim().min(1, { error: "must not be blank" });
const wholeMs = z.number().int({ error: "must be a whole number of milliseconds" }).min(0, { error: "must be ≥ 0 ms" });
const positiveInt = z.number().int({ error: "must be a whole number" }).min(1, { error: "must be ≥ 1" });

const ProviderDescriptorSchema = z.strictObject({
  kind: nonBlank,
  options: z.record(z.string(), z.unknown()).default({}),
});

/** `llm` also accepts the shorthand `"<provider>/<model>"`. */
const LlmDescriptorSchema = z.preprocess((value, ctx) => {
  if (typeof value !== "string") return value;
  const descriptor = parseLlmShorthand(value);
  if (descriptor === undefined) {
    ctx.addIssue({ code: "custom", message: 'must be { kind, options } or the shorthand "<provider>/<model>", e.g. "openai/gpt-4.1-mini"' });
  }
  return descriptor ?? {};
}, ProviderDescriptorSchema);

/** `interruption.acknowledgementPhrases` / `interruptPhrases`; what a phrase must be beyond this: spoken-phrases.ts `checkSpokenPhrases`. */
const phraseList = z
  .array(z.string({ error: 'must be a phrase, e.g. "uh-huh"' }).max(MAX_PHRASE_CHARS, { error: `must be at most ${MAX_PHRASE_CHARS} characters` }), {
    error: 'must be a list of phrases, e.g. ["uh-huh", "okay"] (an empty list turns it off)',
  })
  .max(MAX_PHRASES, { error: `must list at most ${MAX_PHRASES} phrases` });

const InterruptionSchema = z.union(
  [
    z.literal("off"),
    z.strictObject({
      backoffMs: wholeMs.optional(),
      continuationWindowMs: wholeMs.optional(),
      minDurationMs: wholeMs.optional(),
      minWords: positiveInt.optional(),
      resumeFalseInterruption: z.boolean().optional(),
      acknowledgementPhrases: phraseList.optional(),
      interruptPhrases: phraseList.optional(),
    }),
  ],
  { error: 'must be "off" or an object such as { minWords: 2, minDurationMs: 500 } or { acknowledgementPhrases: ["uh-huh", "okay"], interruptPhrases: ["stop"] } (phrase lists are lists of strings)' },
);

const TurnTakingSchema = z.strictObject({
  detection: z.enum(["auto", "manual"]).optional(),
  maxSilenceMs: wholeMs.optional(),
  minSilenceMs: wholeMs.optional(),
  preemptiveGeneration: z.boolean().optional(),
  startSpeakingFloorMs: wholeMs.optional(),
  userTurnLimit: z
    .strictObject({
      maxDurationMs: positiveInt.optional(),
      maxWords: positiveInt.optional(),
    })
    .optional(),
});

const SilenceSchema = z.strictObject({
  deadAirCoverMs: wholeMs.optional(),
  nudge: z
    .strictObject({
      afterMs: positiveInt,
      prompt: nonBlank.optional(),
    })
    .optional(),
});

/** A linear gain: 0 silent, 1 as recorded. */
const volume = z.number().min(0, { error: "must be between 0 and 1" }).max(1, { error: "must be between 0 and 1" });
/** A WAV file relative to the agent directory (read and decoded when the agent loads). */
const soundFile = nonBlank.refine((path) => !path.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(path), { error: "must be a path relative to the agent directory (e.g. sounds/typing.wav)" });

const WaitingAudioSchema = z.strictObject({
  ambience: z.strictObject({ file: soundFile, volume: volume.optional() }).optional(),
  thinking: z.strictObject({ afterMs: wholeMs.optional(), file: soundFile, volume: volume.optional() }).optional(),
});

const McpServerSchema = z.strictObject({
  allowedTools: z.array(z.string().regex(TOOL_NAME, { error: "tool names are lower_snake_case" })).readonly().optional(),
  pinnedTools: z.record(z.string(), nonBlank).optional(),
  tokenEnv: z.string().regex(ENV_NAME, { error: "must be an environment variable name such as MCP_TOKEN" }).optional(),
  url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
});

const ToolChoiceSchema = z.union(
  [
    z.enum(["auto", "required", "none"]),
    z.strictObject({ type: z.literal("tool"), toolName: z.string().regex(TOOL_NAME, { error: "tool names are lower_snake_case" }) }),
  ],
  { error: 'must be "auto", "required", "none" or { type: "tool", toolName }' },
);

/**
 * The JSON-safe subset of an agent definition — the canonical serializable config that flows
 * CLI → server → runtime unchanged. Groups are strict, so a typo one level down is refused by
 * name. Defaults beyond `greeting` and `systemPrompt` are not written in; read them from
 * `DEFAULTS`.
 */
export const AgentConfigSchema = z.strictObject({
  builtinTools: z.array(z.string().regex(TOOL_NAME, { error: "tool names are lower_snake_case" })).readonly().optional(),
  clientInbox: z
    .strictObject({
      sampleRate: z
        .number()
        .int({ error: "must be a whole number of Hz" })
        .min(8000, { error: "must be ≥ 8000 Hz" })
        .max(48000, { error: "must be ≤ 48000 Hz" })
        .optional(),
    })
    .optional(),
  dtmf: z
    .union([z.literal("text"), z.strictObject({ tool: z.string().regex(TOOL_NAME, { error: "tool names are lower_snake_case" }) })], {
      error: 'must be "text" or { tool: "<tool name>" }',
    })
    .optional(),
  errorPhrase: nonBlank.optional(),
  greeting: z.string().default(DEFAULTS.greeting),
  idleTimeoutMs: wholeMs.optional(),
  interruption: InterruptionSchema.optional(),
  listing: z.string().optional(),
  llm: LlmDescriptorSchema.optional(),
  maxCallDurationMs: wholeMs.optional(),
  maxOutputTokens: positiveInt.optional(),
  maxRetries: z.number().int({ error: "must be a whole number" }).min(0, { error: "must be ≥ 0" }).optional(),
  maxSteps: positiveInt.optional(),
  mcpServers: z
    .record(z.string().regex(/^[a-z][a-z0-9]*$/, { error: "server keys are lowercase letters and digits (tools are named mcp_<key>_<tool>)" }), McpServerSchema)
    .optional(),
  mode: z.enum(["s2s", "pipeline", "text", "workflow-app"]).optional(),
  name: nonBlank,
  promptContext: z.string().optional(),
  recording: RecordingSchema.optional(),
  requiredEnv: z.array(z.string().regex(ENV_NAME, { error: "must be an environment variable name such as OPENAI_API_KEY" })).readonly().optional(),
  resetToolChoice: z.boolean().optional(),
  s2s: ProviderDescriptorSchema.optional(),
  silence: SilenceSchema.optional(),
  startFailurePhrase: nonBlank.optional(),
  stt: ProviderDescriptorSchema.optional(),
  sttPrompt: z.string().optional(),
  systemPrompt: z.string().default(DEFAULTS.systemPrompt),
  telephony: z.union([z.boolean(), z.array(z.string()).readonly()], { error: "must be true or a list of carrier names" }).optional(),
  temperature: z.number().min(0, { error: "must be between 0 and 2" }).max(2, { error: "must be between 0 and 2" }).optional(),
  toolChoice: ToolChoiceSchema.optional(),
  transfer: TransferSchema.optional(),
  tts: ProviderDescriptorSchema.optional(),
  turnTaking: TurnTakingSchema.optional(),
  usageLimits: z.strictObject({ totalTokens: positiveInt.optional() }).optional(),
  voicePresets: z.array(z.string()).readonly().optional(),
  voicemail: VoicemailSchema.optional(),
  waitingAudio: WaitingAudioSchema.optional(),
});

/** JSON-safe subset of the agent definition — see `AgentConfigSchema`. */
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/** The top-level field names of `AgentConfig`. */
export const AGENT_CONFIG_FIELDS = Object.keys(AgentConfigSchema.shape) as readonly (keyof AgentConfig)[];

/**
 * AgentDef fields that must never cross the serialization boundary — the single deny-list
 * `toAgentConfig` strips. Everything else on the definition flows into AgentConfig, so a new
 * serializable field works CLI → server → runtime without touching a mapper. An entry here
 * is a claim that AgentDef has that field (a type test keeps both directions honest).
 */
export const HOST_ONLY_AGENT_FIELDS = [
  "tools",
  "syncState",
  "workflows",
  "roster",
  "subagents",
  "toolsets",
  "dialogs",
  "events",
  "inputGuardrails",
  "outputGuardrails",
  "sessionContext",
  "onSessionEnd",
  "routes",
] as const;

/** A host-only AgentDef field name stripped by `toAgentConfig`. */
export type HostOnlyAgentField = (typeof HOST_ONLY_AGENT_FIELDS)[number];

/**
 * Host-only fields this build accepts but does not act on yet (later issues build them): an agent
 * that sets one is warned by `check` and `serve`, and docs/config.md §5 says so. Remove a name
 * here in the change that makes it work.
 */
export const UNHONOURED_HOST_FIELDS: readonly HostOnlyAgentField[] = [];

/** A system prompt computed per request by the host; dropped from the wire. */
export type SystemPromptResolver = (ctx: { readonly sessionId?: string }) => string | Promise<string>;

/** See `AgentDef.systemPrompt`: a string, or a resolver the host calls per request. */
export type AgentSystemPrompt = string | SystemPromptResolver;

/** See `AgentDef.promptContext`: a string, or a resolver the host calls per request. */
export type AgentPromptContext = string | SystemPromptResolver;

/** An MCP server as authored: the url may be a resolver and headers may be set (both host-only). */
export interface McpServerConfig {
  readonly url?: string | (() => string | Promise<string>);
  readonly headers?: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>);
  readonly tokenEnv?: string;
  readonly allowedTools?: readonly string[];
  readonly pinnedTools?: Readonly<Record<string, string>>;
}

/** Authored MCP servers, keyed by the name used in `mcp_<key>_<tool>`. */
export type McpServers = Readonly<Record<string, McpServerConfig>>;

/**
 * What `toAgentConfig` accepts: every serializable AgentConfig field plus the host-only fields
 * the deny-list strips. The explicit `| undefined` on the host-only members keeps spread call
 * sites (`{...agent, stt: maybeUndefined}`) legal under exactOptionalPropertyTypes.
 */
export type AgentConfigSource = Omit<z.input<typeof AgentConfigSchema>, "mode" | "systemPrompt" | "promptContext" | "mcpServers"> & {
  /** Wider than the wire's record: a server's url may be a resolver, and headers may be set. */
  mcpServers?: McpServers | undefined;
  /** Derived from the providers; an authored value must agree. Undefined means derive. */
  mode?: AgentMode | undefined;
  /** Authoring alias for `mode: "text"`. */
  text?: boolean | undefined;
  promptContext?: AgentPromptContext | undefined;
  systemPrompt?: AgentSystemPrompt | undefined;
} & { [K in HostOnlyAgentField]?: unknown };
