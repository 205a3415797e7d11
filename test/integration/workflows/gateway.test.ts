// The gateway owns the engine for the agent's workflows: opened by `listen` on
// SWITCHBOARD_WORKFLOWS_DIR, handed to sessions, closed by `close` (so another may open after it).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { agent, workflow } from "../../../src/manifest/index.js";
import { createGateway } from "../../../src/server/index.js";
import { createWorkflowEngine } from "../../../src/workflows/index.js";

const dir = mkdtempSync(join(tmpdir(), "wf-gateway-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const nightly = workflow({ description: "A nightly job" }).body(() => Promise.resolve("done"));

describe("the gateway's workflow engine", () => {
  it("is opened at listen for an agent with workflows, on SWITCHBOARD_WORKFLOWS_DIR, and closed with the gateway", async () => {
    const gateway = createGateway({ agent: agent({ name: "ops", mode: "text", workflows: { nightly } }), logger: silentLogger, env: { SWITCHBOARD_WORKFLOWS_DIR: dir }, processMetrics: false });
    expect(gateway.workflows).toBeUndefined();
    await gateway.listen(0);
    expect([...(gateway.workflows?.workflows.keys() ?? [])]).toEqual(["nightly"]);
    expect(existsSync(join(dir, "world"))).toBe(true);
    const engine = gateway.workflows;
    const ended = new Promise<string>((resolve) => engine?.onRunEnd((end) => resolve(end.status)));
    const { runId } = (await engine?.start("nightly", {})) ?? { runId: "" };
    expect(await ended).toBe("completed");
    await gateway.close();
    // Closed: the process may open one again (the SDK keeps one per process).
    const again = await createWorkflowEngine({ dir, workflows: { nightly } });
    expect(await again.get(runId)).toMatchObject({ workflow: "nightly", status: "completed", output: "done" });
    await again.close();
  });

  it("is not opened for an agent without workflows", async () => {
    const gateway = createGateway({ agent: agent({ name: "plain", mode: "text" }), logger: silentLogger, env: { SWITCHBOARD_WORKFLOWS_DIR: join(dir, "unused") }, processMetrics: false });
    await gateway.listen(0);
    expect(gateway.workflows).toBeUndefined();
    expect(existsSync(join(dir, "unused"))).toBe(false);
    await gateway.close();
  });
});
