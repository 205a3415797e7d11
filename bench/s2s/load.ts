/**
 * The callers of the s2s bench, run as their own process by bench/s2s/run.ts. Callers connect one at
 * a time — the next once the previous one's greeting audio arrives — so that the fake service's
 * connection k is client k + 1; the fake makes each turn (`userSays` on its connection), so the
 * mics stay silent (bench/shared/caller.ts).
 */
import { Caller } from "../shared/caller.js";
import { serveLoad } from "../shared/common.js";

serveLoad(async (plan, arrivals, errors, callers) => {
  for (let i = 1; i <= plan.sessions; i++) {
    const caller = new Caller(i, plan.url, arrivals, errors, { speech: false });
    callers.push(caller);
    await caller.heard;
  }
});
