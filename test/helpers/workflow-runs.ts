import type { RunInfo, WorkflowEngine } from "../../src/workflows/index.js";

/**
 * Polls `engine.get` until `ready` says so, for states no event announces (a run reaching its
 * sleep or its wait). The engine runs in real time; the test's own timeout bounds the poll.
 */
export async function runUntil(engine: WorkflowEngine, runId: string, ready: (run: RunInfo) => boolean): Promise<RunInfo> {
  for (;;) {
    const run = await engine.get(runId);
    if (run !== undefined && ready(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
