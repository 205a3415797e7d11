import { describe, expect, it } from "vitest";
import support, { type Caller } from "../../../examples/support/agent.js";
import lookupOrder from "../../../examples/support/tools/lookup_order.js";
import verifyCaller from "../../../examples/support/tools/verify_caller.js";
import { agentToolsToSchemas, agentToolsets, toAgentConfig, toolRegistry, withTools } from "../../../src/manifest/index.js";
import { callTool, toolContext } from "../../../src/testing/index.js";

describe("examples/support", () => {
  const def = withTools(
    support,
    toolRegistry({
      "examples/support/tools/lookup_order.ts": { default: lookupOrder },
      "examples/support/tools/verify_caller.ts": { default: verifyCaller },
    }),
  );

  it("is a valid pipeline agent advertising both tools", () => {
    expect(toAgentConfig(def).mode).toBe("pipeline");
    expect(agentToolsToSchemas(agentToolsets(def)).map((s) => s.name)).toEqual(["lookup_order", "verify_caller"]);
  });

  it("refuses the order lookup until the caller is verified", async () => {
    const caller: Caller = { verified: false };
    const ctx = toolContext({ session: caller });
    expect((await callTool(lookupOrder, { orderId: "A1234" }, ctx, "lookup_order")).status).toBe("refused");
    expect((await callTool(verifyCaller, { pin: "1234" }, ctx)).status).toBe("failed");
    expect((await callTool(verifyCaller, { pin: "4567" }, ctx)).status).toBe("ok");
    expect(await callTool(lookupOrder, { orderId: "A1234" }, ctx)).toEqual({
      status: "ok",
      result: { text: "Order A1234 shipped on Friday.", details: { orderId: "A1234", verified: true } },
    });
  });
});
