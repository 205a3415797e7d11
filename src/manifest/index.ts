/**
 * `switchboard/manifest`: what an agent is, which mode it runs in, which tools it advertises
 * and what they say while they run. Pure: no I/O.
 */
export {
  AgentConfigSchema,
  AGENT_CONFIG_FIELDS,
  HOST_ONLY_AGENT_FIELDS,
  type AgentConfig,
  type AgentConfigSource,
  type AgentPromptContext,
  type AgentSystemPrompt,
  type HostOnlyAgentField,
  type McpServerConfig,
  type McpServers,
  type SystemPromptResolver,
} from "./agent-config.js";
export {
  agent,
  type AgentDef,
  type AgentHostFields,
  type AgentOptions,
  type Guardrail,
  type GuardrailVerdict,
  type PhoneLine,
  type ResolvedAgentDef,
  type SessionInfo,
  type SyncStateContext,
  type TeamMemberDef,
} from "./agent.js";
export {
  parseAgentRoutes,
  ROUTE_METHODS,
  routePath,
  type AgentRoute,
  type AgentRouteEntry,
  type AgentRouteHandler,
  type RouteAuth,
  type RouteMethod,
} from "./agent-routes.js";
export { EVERY_EVENT, OBSERVABLE_KEYS, observedKeys, type AgentEvents, type EventObserver, type ObservedEvent } from "./agent-events.js";
export {
  dialog,
  dialogPositions,
  dialogToolOf,
  isDialog,
  type AnyDialog,
  type Dialog,
  type DialogDetails,
  type DialogOptions,
  type DialogPosition,
  type DialogStateOptions,
  type DialogToolInfo,
  type DialogToolOptions,
} from "./dialog.js";
export { DialogStore } from "./dialog-store.js";
export { DEFAULTS } from "./defaults.js";
export { MAX_PHRASE_WORDS, phraseKey, spokenWords } from "./spoken-phrases.js";
export { resolveConfig, type ResolvedConfig, type ResolvedRecording } from "./resolve-config.js";
export {
  DEFAULT_MAX_AUDIO_MINUTES,
  REDACTION_RULES,
  type CustomRedactionRule,
  type RecordingConfig,
  type RecordingDestination,
  type RecordOutcome,
  type RedactionRule,
  type RedactionRuleName,
} from "./recording.js";
export { ConfigError, ToolDefinitionError, closest, didYouMean, type ConfigIssue } from "./errors.js";
export { assertProviderTriple, deriveMode, noEffect, type AgentMode, type ProviderFields, type SessionMode } from "./mode.js";
export {
  CARRIERS,
  DEFAULT_PROVIDERS,
  OFFLINE_PROVIDERS,
  PROVIDER_KINDS,
  parseLlmShorthand,
  type Carrier,
  type ProviderDescriptor,
  type ProviderSlot,
} from "./providers.js";
export {
  toolNameOf,
  toolRegistry,
  withTools,
  withWorkflows,
  workflowRegistry,
  type ToolModules,
  type ToolRegistry,
  type WithWorkflowsOptions,
  type WorkflowModules,
  type WorkflowRegistry,
} from "./registry.js";
export { compileJsonSchema, compileParameters, type CompiledSchema, type InferParameters, type ParameterSchema, type Validation } from "./schema.js";
export { toAgentConfig, type ToAgentConfigOptions } from "./to-agent-config.js";
export {
  DEFAULT_RING_TIMEOUT_S,
  E164,
  SIP_URI,
  transferTarget,
  type TransferConfig,
  type TransferDestination,
  type TransferMode,
  type TransferTarget,
} from "./transfer-config.js";
export {
  DEFAULT_BEEP_WAIT_MS,
  DEFAULT_VOICEMAIL_WINDOW_MS,
  resolveVoicemail,
  type ResolvedVoicemail,
  type VoicemailConfig,
  type VoicemailDetection,
} from "./voicemail-config.js";
export { isSubagentDef, subagent, subagentPrompt, type SubagentDef, type SubagentOptions } from "./subagent.js";
export { HAND_OFF_TOOL, MAX_DELEGATION_DEPTH, resolveTeam, type Delegation, type Team, type TeamAgent, type TeamOptions } from "./team.js";
export {
  CLIENT_TOOL_TIMEOUT_MS,
  clientTool,
  invokeTool,
  isClientTool,
  isToolDef,
  refusalText,
  resultText,
  tool,
  toToolResult,
  type AnyToolDef,
  type ArgsOf,
  type ClientToolOptions,
  type JsonValue,
  type ToolContext,
  type ToolWorkflows,
  type WorkflowRunView,
  type WorkflowStartOptions,
  type ToolDef,
  type ToolDefGate,
  type ToolEffect,
  type ToolMap,
  type ToolOptions,
  type ToolRefusal,
  type ToolResult,
  type ToolReturn,
  type ToolUi,
} from "./tool-def.js";
export {
  DEFAULT_START_LINES,
  MAX_BLOCKING_START_MS,
  SPOKEN_CHARS_PER_SECOND,
  matchesWhen,
  normalizeToolMessages,
  pickVariant,
  planDelayedLadder,
  sameJson,
  seededRandom,
  spokenDurationMs,
  type LadderStep,
  type RandomSource,
  type ToolCompletionMessage,
  type ToolDelayedMessage,
  type ToolMessageCondition,
  type ToolMessages,
  type ToolMessagesInput,
  type ToolMessageWhen,
  type ToolStartMessage,
} from "./tool-messages.js";
export {
  agentToolsets,
  agentToolsToSchemas,
  composeToolsets,
  gateToolset,
  toolEntry,
  toolSchema,
  toolset,
  type ResolvedTool,
  type ToolBearingDef,
  type ToolExecutor,
  type ToolGate,
  type ToolSchema,
  type Toolset,
  type ToolsetEntry,
  type ToolSource,
  type ToolTable,
} from "./toolset.js";
export { buildSystemPrompt, isVoicePreset, VOICE_PRESET_NAMES, VOICE_PRESETS, type SystemPromptParts, type VoicePresetName } from "./voice-presets.js";
export { parseDuration, type Duration } from "./duration.js";
export {
  isStepDef,
  isWorkflowDef,
  PermanentStepError,
  retryDelayMs,
  step,
  workflow,
  WORKFLOW_NAME,
  type AnyWorkflowDef,
  type ResolvedRetry,
  type RetryPolicy,
  type RunContextData,
  type StepCaller,
  type StepContext,
  type StepDef,
  type StepFunction,
  type WaitResult,
  type WorkflowBody,
  type WorkflowContext,
  type WorkflowDeclaration,
  type WorkflowDef,
} from "./workflow.js";
export type { CallOutcome, CallRequest, OutboundCall, PlacedCall, WorkflowCalls } from "./workflow-calls.js";
