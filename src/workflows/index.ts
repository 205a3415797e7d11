/** Durable workflow runs: the engine interface, the embedded engine, its settings. */
export * from "./engine.js";
export { createWorkflowEngine, type WorkflowEngineOptions } from "./workflow-sdk.js";
export { DEFAULT_WORKFLOWS_DIR, ensureWritableDir, workflowSettings, type WorkflowSettings } from "./settings.js";
export { DEFAULT_RETENTION_DAYS } from "./retention.js";
