// ctx.calls.place on the gateway's side: a retried step never dials twice (the placing journal),
// the request is checked before anything is claimed, and refusals map onto the step's retries.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log.js";
import { PermanentStepError } from "../../../../src/manifest/index.js";
import type { CallPlacing, Placing } from "../../../../src/server/telephony/outbound-calls.js";
import { WorkflowCalls } from "../../../../src/server/telephony/workflow-calls.js";
import { PlacingJournal } from "../../../../src/workflows/placing-journal.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function calls(answers: Placing[]): { calls: WorkflowCalls; asked: unknown[] } {
  const dir = mkdtempSync(join(tmpdir(), "wf-placing-"));
  dirs.push(dir);
  const asked: unknown[] = [];
  const place: CallPlacing = (fields, options) => {
    asked.push({ fields, options });
    return Promise.resolve(answers.shift() ?? { ok: false, status: 500, error: "no answer scripted" });
  };
  const placer = new WorkflowCalls({ log: silentLogger, place, mounted: ["twilio"], publicUrl: new URL("https://gw.example.com/"), from: "+14155550100" });
  placer.attach({ deliver: () => Promise.resolve(false), placings: new PlacingJournal(dir, () => 0) });
  return { calls: placer, asked };
}

const placement = { runId: "wrun_1", workflow: "callback", context: { orderId: "o-1" }, token: "call:wrun_1:1", idempotencyKey: "wrun_1:call:1" };
const placed: Placing = { ok: true, carrier: "twilio", to: "+14155550123", from: "+14155550100", callId: "CA1", answeringMachineDetection: "off" };

describe("WorkflowCalls.place", () => {
  it("places once per key: a try after a placed one answers the same call, and the carrier is asked once", async () => {
    const { calls: placer, asked } = calls([placed]);
    const first = await placer.place({ to: "+14155550123", why: "shipped" }, placement);
    expect(first).toEqual({ token: "call:wrun_1:1", carrier: "twilio", to: "+14155550123", from: "+14155550100", callId: "CA1" });
    expect(await placer.place({ to: "+14155550123", why: "shipped" }, placement)).toEqual(first);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toEqual({
      fields: { carrier: "twilio", to: "+14155550123", from: "+14155550100" },
      options: {
        httpBase: "https://gw.example.com",
        reportTo: "call:wrun_1:1",
        outbound: { runId: "wrun_1", workflow: "callback", carrier: "twilio", to: "+14155550123", from: "+14155550100", why: "shipped", context: { orderId: "o-1" } },
      },
    });
  });

  it("never dials again after a try the carrier's API did not answer: the retry is `uncertain`", async () => {
    const { calls: placer, asked } = calls([{ ok: false, status: 502, error: "twilio did not place the call: timeout", carrier: "unreachable" }, placed]);
    await expect(placer.place({ to: "+14155550123" }, placement)).rejects.toThrow(/timeout/);
    expect(await placer.place({ to: "+14155550123" }, placement)).toEqual({ token: "call:wrun_1:1", carrier: "twilio", to: "+14155550123", from: "+14155550100", uncertain: true });
    expect(asked).toHaveLength(1);
  });

  it("dials again after a refusal (nothing was dialled); a 4xx is permanent, a budget or 5xx is retried", async () => {
    const { calls: placer, asked } = calls([
      { ok: false, status: 429, error: "more than 30 calls placed a minute", retryable: true },
      { ok: false, status: 502, error: "twilio did not place the call: 400", carrier: "refused" },
    ]);
    const retried = placer.place({ to: "+14155550123" }, placement);
    await expect(retried).rejects.toThrow(/more than 30 calls/);
    await expect(retried).rejects.not.toBeInstanceOf(PermanentStepError);
    await expect(placer.place({ to: "+14155550123" }, placement)).rejects.toBeInstanceOf(PermanentStepError);
    expect(asked).toHaveLength(2);
  });

  it("refuses a bad request before claiming anything, naming the field", async () => {
    const { calls: placer, asked } = calls([]);
    const refusal = (request: unknown): Promise<unknown> => placer.place(request as never, placement);
    await expect(refusal({ to: "4155550123" })).rejects.toThrow(/^ctx\.calls\.place: to: must be an E\.164 number/);
    await expect(refusal({ to: "+14155550123", carrier: "vonage" })).rejects.toThrow(/carrier: must be twilio or telnyx/);
    await expect(refusal({ to: "+14155550123", url: "https://evil.example" })).rejects.toThrow(/url: not a field of a call/);
    await expect(refusal({ to: "+14155550123", why: "x".repeat(501) })).rejects.toThrow(/why: must be a sentence of at most 500/);
    await expect(refusal({ to: "+14155550123", context: { blob: "x".repeat(9000) } })).rejects.toThrow(/context: is \d+ bytes as JSON; at most 8192/);
    expect(asked).toEqual([]);
    const noUrl = new WorkflowCalls({ log: silentLogger, place: () => Promise.resolve(placed), mounted: ["twilio"], publicUrl: undefined, from: undefined });
    await expect(noUrl.place({ to: "+14155550123" }, placement)).rejects.toThrow(/SWITCHBOARD_PUBLIC_URL: not set/);
  });
});
