// A workflow-app agent as operators run it: `switchboard serve <dir>` opens the workflow engine on
// SWITCHBOARD_WORKFLOWS_DIR, says it serves the workflows API (not the demo page), answers
// GET /workflows and runs a workflow to completion, and refuses a WebSocket session. With
// SWITCHBOARD_WORKFLOWS_DATABASE_URL (a private PostgreSQL server) it serves on several workers,
// which share the runs; without it, `--workers 2` is refused with the fix.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { POSTGRES_BIN, startPostgres, type PostgresServer } from "../../fakes/postgres-server.js";
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

/** Why the PostgreSQL case cannot run here, or undefined. */
const SKIPPED = POSTGRES_BIN === undefined ? "PostgreSQL is not installed (sudo apt-get install postgresql)" : undefined;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);
let postgres: PostgresServer | undefined;
afterAll(async () => {
  await postgres?.stop();
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

  it(`runs on several workers when runs live in PostgreSQL; refuses --workers 2 on a directory${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, async () => {
    if (SKIPPED !== undefined) return;
    const dir = await workflowApp();
    await expect(serve([dir, "--workers", "2"], { SWITCHBOARD_API_KEY: "k", SWITCHBOARD_WORKFLOWS_DIR: join(dir, ".runs") })).rejects.toThrow(/kept in a directory one process owns: serve it with --workers 1, or keep runs in PostgreSQL \(SWITCHBOARD_WORKFLOWS_DATABASE_URL\)/);

    postgres = await startPostgres();
    served = await serve([dir, "--workers", "2"], { SWITCHBOARD_API_KEY: "k", SWITCHBOARD_WORKFLOWS_DATABASE_URL: postgres.database("app") }, 60_000);
    expect(served.output()).toMatch(/serving "ops" \(workflow-app\), 2 worker processes\n {2}http:\/\/127\.0\.0\.1:\d+\/workflows {6}the workflows API\n/);
    const auth = { authorization: "Bearer k" };
    const runIds = await Promise.all(
      [1, 2, 3, 4].map(async () => ((await (await fetch(`${served?.url}/workflows/report/runs`, { method: "POST", headers: auth, body: "{}" })).json()) as { runId: string }).runId),
    );
    for (const runId of runIds) {
      const run = (await (await fetch(`${served.url}/workflows/runs/${runId}?wait=30`, { headers: auth })).json()) as { status: string; output: unknown };
      expect(run).toMatchObject({ status: "completed", output: { total: 42 } });
    }
  }, 120_000);
});
