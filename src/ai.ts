/** `switchboard/ai`: Switchboard tools as AI SDK tools. */
export { toAiTool, toAiTools, type AiToolOutput } from "./manifest/ai-tool.js";
export { ToolDefinitionError } from "./manifest/errors.js";
