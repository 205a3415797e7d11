/**
 * Switchboard's public surface: define agents and tools, and run them behind a gateway.
 */
export { createGateway } from "./server/index.js";
export type { Gateway, GatewayOptions, ReloadedAgent } from "./server/gateway-types.js";
export { loadAgent, type LoadedAgent } from "./server/loader.js";
export { loadWaitingSounds } from "./server/waiting-sounds.js";
export type { WaitingSounds } from "./audio/waiting-sound.js";
export { GatewayError, ERROR_CODES, CLOSE, type ErrorCode } from "./errors.js";
export {
  agent,
  clientTool,
  dialog,
  DialogStore,
  subagent,
  tool,
  workflow,
  step,
  PermanentStepError,
  withTools,
  toAgentConfig,
  ConfigError,
  ToolDefinitionError,
  DEFAULTS,
  VOICE_PRESET_NAMES,
  type AgentConfig,
  type AgentDef,
  type AgentOptions,
  type ObservedEvent,
  type Dialog,
  type DialogPosition,
  type Guardrail,
  type GuardrailVerdict,
  type SessionMode,
  type SyncStateContext,
  type ToolContext,
  type ToolWorkflows,
  type WorkflowRunView,
  type WorkflowStartOptions,
  type ToolDef,
  type ToolMessagesInput,
  type ToolRefusal,
  type ToolResult,
  type ProviderDescriptor,
  type SubagentDef,
  type SubagentOptions,
  type StepContext,
  type WaitResult,
  type WorkflowContext,
  type CallOutcome,
  type CallRequest,
  type OutboundCall,
  type PhoneLine,
  type PlacedCall,
} from "./manifest/index.js";
export { safeFetch, isPublicAddress, BlockedUrlError, type SafeFetchOptions } from "./session/safe-fetch.js";
