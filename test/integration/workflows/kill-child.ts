// The process the kill -9 test kills: it opens the engine on DIR (or the database, given a
// postgres:// URL instead), starts (phase "start") a run of
// five steps that each append "begin k" / "done k" to MARKERS, and prints one JSON line when a
// run ends. Phase "resume" only opens the engine: the SDK re-enqueues the run left active.
// Run with: node --import tsx kill-child.ts <start|resume> <dir | postgres://…> <markers file>
import { appendFileSync } from "node:fs";
import { workflow, type StepContext } from "../../../src/manifest/index.js";
import { createWorkflowEngine } from "../../../src/workflows/index.js";

const [phase, dir, markers] = process.argv.slice(2);
if (dir === undefined || markers === undefined) throw new Error("usage: kill-child.ts <start|resume> <dir | postgres://…> <markers>");

const slow = workflow({
  description: "Five steps that leave markers",
  steps: {
    // The default policy (4 tries): the try cut short by the kill counts as one (docs/workflows.md).
    work: async (k: number, ctx: StepContext) => {
      appendFileSync(markers, `begin ${k} pid ${process.pid} attempt ${ctx.attempt}\n`);
      await new Promise((resolve) => setTimeout(resolve, 400));
      appendFileSync(markers, `done ${k}\n`);
      return k;
    },
  },
}).body(async (_input, ctx) => {
  const done: number[] = [];
  for (let k = 1; k <= 5; k += 1) done.push(await ctx.steps.work(k));
  return done;
});

const engine = await createWorkflowEngine({ ...(dir.startsWith("postgres://") ? { database: dir } : { dir }), workflows: { slow } });
engine.onRunEnd((end) => {
  void engine.get(end.runId).then((run) => {
    process.stdout.write(`${JSON.stringify({ ended: end.runId, status: end.status, output: run?.output })}\n`);
    return engine.close().then(() => process.exit(0));
  });
});
if (phase === "start") {
  const { runId } = await engine.start("slow", {});
  process.stdout.write(`${JSON.stringify({ started: runId })}\n`);
}
