// The workflows both processes of the shared-database test declare (one deployment, one agent).
import { appendFileSync } from "node:fs";
import { Type } from "@sinclair/typebox";
import { workflow } from "../../../src/manifest/index.js";

/** Where steps leave `<k> <pid>` lines: the test reads which process ran each. */
export const MARKERS_ENV = "SB_SHARED_MARKERS";

export const sharedWorkflows = {
  relay: workflow({
    description: "Wait for a go, then six marker steps",
    input: Type.Object({ n: Type.Number() }),
    steps: {
      mark: (k: number) => {
        const markers = process.env[MARKERS_ENV];
        if (markers !== undefined) appendFileSync(markers, `${k} ${process.pid}\n`);
        return process.pid;
      },
    },
  }).body(async (input, ctx) => {
    const go = await ctx.waitFor<{ from: number }>(`relay:${input.n}`);
    const pids: number[] = [];
    for (let k = 1; k <= 6; k += 1) pids.push(await ctx.steps.mark(k));
    return { from: go.status === "received" ? go.payload.from : 0, pids };
  }),
};
