// The second process of the shared-database test: it opens the engine on the database given,
// prints `{"ready":pid}`, a line per run end it hears, and answers commands read from stdin as
// JSON lines: `{"deliver":token,"payload":…}` → `{"delivered":bool}`, `{"start":name,"input":…,
// "key":…}` → `{"started":runId}`, `{"close":true}` closes and exits.
// Run with: node --import tsx shared-child.ts <postgres://…>
import { createInterface } from "node:readline";
import type { JsonValue } from "../../../src/manifest/index.js";
import { createWorkflowEngine } from "../../../src/workflows/index.js";
import { sharedWorkflows } from "./shared-workflows.js";

const database = process.argv[2];
if (database === undefined) throw new Error("usage: shared-child.ts <postgres://…>");
const say = (line: unknown): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

const engine = await createWorkflowEngine({ database, workflows: sharedWorkflows });
engine.onRunEnd((end) => say({ ended: end.runId, status: end.status, key: end.key }));
say({ ready: process.pid });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { deliver?: string; payload?: JsonValue; start?: string; input?: unknown; key?: string; close?: boolean };
  if (command.deliver !== undefined) say({ delivered: await engine.deliver(command.deliver, command.payload ?? null) });
  if (command.start !== undefined) say({ started: (await engine.start(command.start, command.input, command.key === undefined ? {} : { key: command.key })).runId });
  if (command.close === true) {
    await engine.close();
    process.exit(0);
  }
}
