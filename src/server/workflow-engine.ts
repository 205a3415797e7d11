/**
 * The one place the gateway opens its workflow engine (docs/workflows.md): the HTTP API
 * (workflow-routes.ts) and the sessions that start runs share the engine this returns, opened
 * once per process when the gateway starts listening. The SDK keeps one world per process, so a
 * second open before the first engine closes is refused.
 */
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { AnyWorkflowDef } from "../manifest/index.js";
import type { CallPlacer, WorkflowEngine } from "../workflows/engine.js";
import { workflowSettings } from "../workflows/settings.js";
import { spread } from "../spread.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface OpenWorkflowEngineOptions {
  /** The agent's workflows (`def.workflows`, after `withWorkflows`). */
  readonly workflows: Readonly<Record<string, AnyWorkflowDef>> | undefined;
  /** Where `SWITCHBOARD_WORKFLOWS_DIR` (or `_DATABASE_URL`) and `SWITCHBOARD_WORKFLOWS_RETENTION_DAYS` are read. */
  readonly env: Env;
  readonly clock: Clock;
  readonly log: Logger;
  /** What relative paths are read against (default: the working directory). */
  readonly cwd?: string;
  /** The gateway's placer for `ctx.calls.place` (its telephony, when it mounts a carrier that places calls). */
  readonly calls?: CallPlacer;
}

/** Whether an agent declares any workflow (and so gets an engine and the HTTP API). */
export function hasWorkflows(workflows: Readonly<Record<string, unknown>> | undefined): boolean {
  return workflows !== undefined && Object.keys(workflows).length > 0;
}

/**
 * The engine for the agent's workflows, where the environment keeps runs; undefined when
 * the agent declares none. Throws (naming the variable and the fix) on a bad setting or a
 * directory it cannot write; active runs a previous process left resume as it opens.
 */
export async function openWorkflowEngine(options: OpenWorkflowEngineOptions): Promise<WorkflowEngine | undefined> {
  if (!hasWorkflows(options.workflows)) return undefined;
  const settings = workflowSettings(options.env, options.cwd);
  // Loaded only for an agent with workflows: a gateway without any never holds the SDK in memory.
  const { createWorkflowEngine } = await import("../workflows/workflow-sdk.js");
  const engine = await createWorkflowEngine(spread(settings.runsIn, {
    workflows: options.workflows ?? {},
    retentionDays: settings.retentionDays,
    clock: options.clock,
    log: options.log,
    ...(options.calls === undefined ? {} : { calls: options.calls }),
  }));
  options.log.info(spread(engine.where, { workflows: [...engine.workflows.keys()] }), "workflow engine open");
  return engine;
}
