import { describe, expect, it } from "vitest";
import { agent, toAgentConfig, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { VOICE_PRESETS } from "../../../src/manifest/voice-presets.js";
import { sessionInstructions } from "../../../src/session/session-deps.js";

describe("a session's system prompt, asked for at every model request", () => {
  it("an agent's text prompt and context are built once, with its voice presets, and the same text is given every time", async () => {
    const def = agent({ name: "a", systemPrompt: "Be brief.", promptContext: "The caller is a member.", voicePresets: ["speechNormalization"] }) as ResolvedAgentDef;
    const instructions = sessionInstructions({ def, config: toAgentConfig(def) }, "s1");
    const first = instructions();
    expect(instructions()).toBe(first);
    expect(await first).toBe(`Be brief.\n\n${VOICE_PRESETS.speechNormalization}\n\nThe caller is a member.`);
  });

  it("an agent's prompt functions are called for the session at every request", async () => {
    let calls = 0;
    const def = agent({
      name: "a",
      systemPrompt: ({ sessionId }) => `Session ${sessionId}, request ${++calls}.`,
      promptContext: () => Promise.resolve("Context."),
    }) as ResolvedAgentDef;
    const instructions = sessionInstructions({ def, config: toAgentConfig(def) }, "s1");
    expect(await instructions()).toBe("Session s1, request 1.\n\nContext.");
    expect(await instructions()).toBe("Session s1, request 2.\n\nContext.");
  });
});
