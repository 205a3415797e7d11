// The PostgreSQL world's queue delivers to this listener (loopback-delivery.ts): only on
// 127.0.0.1, only under its secret path prefix, only POSTs to flow/step, bodies bounded.
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { listenForDeliveries, MAX_DELIVERY_BYTES, type LoopbackDelivery } from "../../../src/workflows/loopback-delivery.js";

let delivery: LoopbackDelivery | undefined;
afterEach(async () => {
  await delivery?.close();
  delivery = undefined;
});

async function listening(): Promise<{ base: string; seen: Array<{ route: string; body: string; queue: string | null }> }> {
  const seen: Array<{ route: string; body: string; queue: string | null }> = [];
  const entry = (route: string) => async (request: Request) => {
    seen.push({ route, body: await request.text(), queue: request.headers.get("x-vqs-queue-name") });
    return Response.json({ ok: route });
  };
  delivery = await listenForDeliveries({ workflow: entry("flow"), step: entry("step") }, silentLogger);
  return { base: delivery.baseUrl, seen };
}

describe("listenForDeliveries", () => {
  it("hands a POST under its secret prefix to the workflow or step entrypoint, headers and body intact", async () => {
    const { base, seen } = await listening();
    expect(new URL(base).hostname).toBe("127.0.0.1");
    const answer = await fetch(`${base}/.well-known/workflow/v1/step`, { method: "POST", headers: { "x-vqs-queue-name": "__wkf_step_x" }, body: '{"runId":"wrun_1"}' });
    expect(await answer.json()).toEqual({ ok: "step" });
    await fetch(`${base}/.well-known/workflow/v1/flow`, { method: "POST", body: "{}" });
    expect(seen).toEqual([
      { route: "step", body: '{"runId":"wrun_1"}', queue: "__wkf_step_x" },
      { route: "flow", body: "{}", queue: null },
    ]);
  });

  it("answers 404 without the secret, to another path or method, and 413 past the body bound; nothing reaches the entrypoints", async () => {
    const { base, seen } = await listening();
    const origin = new URL(base).origin;
    const forged = `${origin}/${"A".repeat(43)}/.well-known/workflow/v1/flow`;
    expect((await fetch(forged, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await fetch(`${origin}/.well-known/workflow/v1/flow`, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await fetch(`${base}/.well-known/workflow/v1/flow`)).status).toBe(404);
    expect((await fetch(`${base}/.well-known/workflow/v1/other`, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await fetch(`${base}/.well-known/workflow/v1/step`, { method: "POST", body: "x".repeat(MAX_DELIVERY_BYTES + 1) })).status).toBe(413);
    expect(seen).toEqual([]);
  });
});
