import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { agentToolsToSchemas, agentToolsets } from "../../../src/manifest/index.js";
import type { Script } from "../../../src/pipeline/providers/llm/scripted.js";
import { loadAgent } from "../../../src/server/loader.js";
import { textSession } from "../../../src/testing/text-session.js";

const dir = fileURLToPath(new URL("../../../examples/support", import.meta.url));

describe("examples/support (the agent npm start serves)", () => {
  it("loads from its directory: a text agent with its tool files and offline script", async () => {
    const loaded = await loadAgent(dir);
    expect(loaded.config.mode).toBe("text");
    expect(agentToolsToSchemas(agentToolsets(loaded.def)).map((s) => s.name)).toEqual(["lookup_order", "verify_caller"]);
    expect(loaded.config.builtinTools).toEqual(["current_time", "calculate", "end_call"]);
    expect(loaded.script).toMatchObject({ rules: expect.any(Array) as unknown });
  });

  it("refuses the order lookup until the caller is verified, on the offline script", async () => {
    const loaded = await loadAgent(dir);
    const { link, say } = textSession(loaded.def, { script: loaded.script as Script });
    await say("where is order A1234");
    expect(link.of("tool.completed").at(-1)).toMatchObject({ isError: true, result: expect.stringContaining("the caller is not verified") as string });
    await say("my PIN is 1234");
    expect(link.of("state.updated").at(-1)?.state).toEqual({ verified: false });
    await say("my PIN is 4567");
    expect(link.of("state.updated").at(-1)?.state).toEqual({ verified: true });
    await say("where is order A1234");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Order A1234 shipped on Friday and arrives Tuesday.");
    expect(link.of("tool.message").map((m) => m.kind)).toEqual(["start", "delayed"]);
  }, 15_000);
});
