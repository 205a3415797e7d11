/**
 * The callers of the pipeline bench, run as their own process by bench/pipeline/run.ts (so the
 * server's CPU and memory figures are the server's alone): every caller connects at once and
 * speaks real frames for the VAD (bench/shared/caller.ts).
 */
import { Caller } from "../shared/caller.js";
import { serveLoad } from "../shared/common.js";

serveLoad(async (plan, arrivals, errors, callers) => {
  const created = Array.from({ length: plan.sessions }, (_, i) => new Caller(i + 1, plan.url, arrivals, errors, { speech: true }));
  callers.push(...created);
  await Promise.all(created.map((caller) => caller.opened));
});
