// A workflow-app agent as operators run it: `switchboard serve <dir>` opens the workflow engine on
// SWITCHBOARD_WORKFLOWS_DIR, says it serves the workflows API (not the demo page), answers
// GET /workflows and runs a workflow to completion, and refuses a WebSocket session.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { serve, type Served } from "../helpers/serve.js";
import { TestClient } from "../helpers/ws-client.js";

const MANIFEST = JSON.stringify(new URL("../../src/manifest/index.ts", import.meta.url).href);

let served: Served | undefined;
const dirs: string[] = [];
afterEach(async () => {
  served?.kill();
  served = undefined;
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function workflowApp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "switchboard-wf-app-"));
  dirs.push(dir);
  await mkdir(join(dir, "workflows"));
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  await writeFile(join(dir, "agent.ts"), `import { agent } from ${MANIFEST};\nexport default agent({ name: "ops", mode: "workflow-app" });\n`);
  await writeFile(
    join(dir, "workflows", "report.ts"),
    `import { workflow } from ${MANIFEST};\nexport default workflow({ description: "Nightly report", steps: { total: () => 42 } }).body(async (_input, ctx) => ({ total: await ctx.steps.total() }));\n`,
  );
  return dir;
}

describe("switchboard serve: a workflow-app agent", () => {
  it("serves GET /workflows and runs a workflow; refuses a WebSocket session (404)", async () => {
    const dir = await workflowApp();
    served = await serve([dir], { SWITCHBOARD_API_KEY: "k", SWITCHBOARD_WORKFLOWS_DIR: join(dir, ".runs") });
    expect(served.output()).toMatch(/serving "ops" \(workflow-app\)\n {2}http:\/\/127\.0\.0\.1:\d+\/workflows {6}the workflows API\n/);
    expect(served.output()).not.toMatch(/the demo page/);
    const auth = { authorization: "Bearer k" };
    const listed = (await (await fetch(`${served.url}/workflows`, { headers: auth })).json()) as { workflows: { name: string; steps: string[] }[] };
    expect(listed.workflows.map((w) => [w.name, w.steps])).toEqual([["report", ["total"]]]);
    const started = await fetch(`${served.url}/workflows/report/runs`, { method: "POST", headers: auth, body: "{}" });
    const { runId } = (await started.json()) as { runId: string };
    expect(started.status).toBe(201);
    const run = (await (await fetch(`${served.url}/workflows/runs/${runId}?wait=30`, { headers: auth })).json()) as { status: string; output: unknown };
    expect(run).toMatchObject({ status: "completed", output: { total: 42 } });

    const client = new TestClient(`${served.url.replace(/^http/, "ws")}/websocket`);
    await expect(client.opened).rejects.toThrow(/Unexpected server response: 404/);
  }, 60_000);
});
