// Two processes, one PostgreSQL database (a private server: fakes/postgres-server.ts):
// the engines of one deployment share its runs. A run started in this process is resumed by a
// hook the other delivers; both hear it end (LISTEN/NOTIFY); its steps run in whichever process
// the queue hands them to; a run the other starts is found here by its key.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflowEngine, type RunEnd, type WorkflowEngine } from "../../../src/workflows/index.js";
import { POSTGRES_BIN, startPostgres, type PostgresServer } from "../../../fakes/postgres-server.js";
import { runUntil } from "../../helpers/workflow-runs.js";
import { MARKERS_ENV, sharedWorkflows } from "./shared-workflows.js";

const ROOT = new URL("../../../", import.meta.url).pathname;
const CHILD = new URL("./shared-child.ts", import.meta.url).pathname;
/** Why this file cannot run here, or undefined. */
const SKIPPED = POSTGRES_BIN === undefined ? "PostgreSQL is not installed (sudo apt-get install postgresql)" : undefined;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);

const dir = mkdtempSync(join(tmpdir(), "wf-shared-"));
const markers = join(dir, "markers.txt");
let postgres: PostgresServer | undefined;
let engine: WorkflowEngine | undefined;
let other: ChildProcess | undefined;
/** The other process's JSON lines, in order; `heard` wakes whoever waits for one. */
const lines: Array<Record<string, unknown>> = [];
let heard: () => void = () => undefined;
const ends: RunEnd[] = [];

/** The other process's first line after `from` that `match` accepts. */
async function line(match: (line: Record<string, unknown>) => boolean, from = 0): Promise<Record<string, unknown>> {
  for (;;) {
    const found = lines.slice(from).find(match);
    if (found !== undefined) return found;
    await new Promise<void>((resolve) => (heard = resolve));
  }
}

function tell(command: Record<string, unknown>): void {
  other?.stdin?.write(`${JSON.stringify(command)}\n`);
}

/** Resolves when this process hears `runId` end. */
async function ended(runId: string): Promise<RunEnd> {
  while (!ends.some((end) => end.runId === runId)) await new Promise((resolve) => setTimeout(resolve, 20));
  return ends.find((end) => end.runId === runId) as RunEnd;
}

beforeAll(async () => {
  if (SKIPPED !== undefined) return;
  postgres = await startPostgres();
  const database = postgres.database("shared");
  process.env[MARKERS_ENV] = markers;
  engine = await createWorkflowEngine({ database, workflows: sharedWorkflows });
  engine.onRunEnd((end) => ends.push(end));
  other = spawn(process.execPath, ["--import", "tsx", CHILD, database], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, [MARKERS_ENV]: markers } });
  other.stderr?.resume();
  void (async () => {
    for await (const text of createInterface({ input: other.stdout as NodeJS.ReadableStream })) {
      if (!text.startsWith("{")) continue;
      lines.push(JSON.parse(text) as Record<string, unknown>);
      heard();
    }
  })();
  await line((said) => "ready" in said);
}, 60_000);

afterAll(async () => {
  tell({ close: true });
  if (other !== undefined && other.exitCode === null) await new Promise((resolve) => other?.once("exit", resolve));
  await engine?.close();
  await postgres?.stop();
  delete process.env[MARKERS_ENV];
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(SKIPPED !== undefined)(`two engines on one database${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, () => {
  it("resumes a run here with a hook the other process delivers; both hear it end; its steps ran in the deployment's processes", async () => {
    const live = engine as WorkflowEngine;
    const { runId } = await live.start("relay", { n: 1 }, { key: "+15550100" });
    await runUntil(live, runId, (run) => run.status === "waiting");
    const mark = lines.length;
    tell({ deliver: "relay:1", payload: { from: other?.pid ?? 0 } });
    expect(await line((said) => "delivered" in said, mark)).toEqual({ delivered: true });

    expect(await ended(runId)).toEqual({ runId, status: "completed", workflow: "relay", key: "+15550100" });
    expect(await line((said) => said.ended === runId)).toEqual({ ended: runId, status: "completed", key: "+15550100" });
    const output = (await live.get(runId))?.output as { from: number; pids: number[] };
    expect(output.from).toBe(other?.pid);
    expect(output.pids).toHaveLength(6);
    for (const pid of output.pids) expect([process.pid, other?.pid]).toContain(pid);
    // Each step ran once (its completion journalled), in one process or the other.
    const ran = existsSync(markers) ? readFileSync(markers, "utf8").trim().split("\n") : [];
    expect(ran.map((entry) => entry.split(" ")[0]).sort()).toEqual(["1", "2", "3", "4", "5", "6"]);
  });

  it("finds here, by its key, a run the other process started; and hears it end", async () => {
    const live = engine as WorkflowEngine;
    const mark = lines.length;
    tell({ start: "relay", input: { n: 2 }, key: "+15550199" });
    const { started } = (await line((said) => "started" in said, mark)) as { started: string };
    expect((await live.find("+15550199")).map((run) => run.runId)).toEqual([started]);
    await runUntil(live, started, (run) => run.status === "waiting");
    expect(await live.deliver("relay:2", { from: process.pid })).toBe(true);
    expect(await ended(started)).toMatchObject({ runId: started, status: "completed", key: "+15550199" });
  });
});
