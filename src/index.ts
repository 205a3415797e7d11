/**
 * Switchboard's public surface: define agents and tools. The gateway (`createGateway`) joins
 * this surface when the server lands.
 */
export {
  agent,
  clientTool,
  tool,
  workflow,
  withTools,
  toAgentConfig,
  ConfigError,
  ToolDefinitionError,
  DEFAULTS,
  VOICE_PRESET_NAMES,
  type AgentConfig,
  type AgentDef,
  type AgentOptions,
  type SessionMode,
  type ToolContext,
  type ToolDef,
  type ToolMessagesInput,
  type ToolRefusal,
  type ToolResult,
  type ProviderDescriptor,
} from "./manifest/index.js";
