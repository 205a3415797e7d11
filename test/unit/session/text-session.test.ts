import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { agent, clientTool, tool, withTools } from "../../../src/manifest/index.js";
import { textSession } from "../../../src/testing/text-session.js";

const lookup = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: { start: "Let me check.", complete: [{ content: "Note the ETA.", role: "system" }] },
  execute: ({ orderId }) => `Order ${orderId} ships Friday.`,
});

const script = {
  rules: [
    { when: "order (?<orderId>\\w+)", say: "One moment.", call: { tool: "lookup", args: { orderId: "{orderId}" } }, then: "Found it: {result}" },
    { when: "hello", say: "Hello there!" },
  ],
};

describe("a text session", () => {
  it("greets, answers, runs a tool with its messages, and records the turn", async () => {
    const def = withTools(agent({ name: "shop", mode: "text", greeting: "Welcome!" }), { lookup });
    const { link, say } = textSession(def, { script });
    await say("where is order A17");
    expect(link.types().slice(0, 4)).toEqual(["session.configured", "agent-transcript.updated", "agent-transcript.committed", "reply.completed"]);
    expect(link.of("tool.called")).toMatchObject([{ toolName: "lookup", args: { orderId: "A17" } }]);
    expect(link.of("tool.message")).toMatchObject([{ kind: "start", text: "Let me check." }]);
    expect(link.of("tool.completed")[0]?.result).toBe("Order A17 ships Friday.\n[guidance] Note the ETA.");
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual([
      "Welcome!",
      // The scripted brain reads the guidance; it does not say it.
      "One moment. Found it: Order A17 ships Friday.",
    ]);
    expect(link.of("agent-transcript.updated").at(-1)?.text).toContain("Let me check.");
  });

  it("builds no reply snapshot for a link that shows none, and commits the same lines", async () => {
    const def = withTools(agent({ name: "shop", mode: "text", greeting: "Welcome!" }), { lookup });
    const { link, say } = textSession(def, { script });
    Object.assign(link, { shows: () => false });
    await say("where is order A17");
    expect(link.types()).not.toContain("agent-transcript.updated");
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome!", "One moment. Found it: Order A17 ships Friday."]);
  });

  it("takes a voice agent as it stands: its speech settings are left out, its tools, gate and greeting kept", async () => {
    const def = withTools(
      agent({
        name: "phone-shop",
        greeting: "Welcome!",
        stt: { kind: "deepgram", options: {} },
        tts: { kind: "cartesia", options: {} },
        interruption: { minWords: 2 },
        silence: { nudge: { afterMs: 20_000, prompt: "Still there?" } },
        telephony: true,
      }),
      { lookup },
    );
    const { link, say } = textSession(def, { script });
    await say("where is order A17");
    expect(link.of("session.configured")[0]?.mode).toBe("text");
    expect(link.of("tool.completed")[0]?.result).toContain("Order A17 ships Friday.");
    expect(link.of("agent-transcript.committed").map((e) => e.text)).toEqual(["Welcome!", "One moment. Found it: Order A17 ships Friday."]);
  });

  it("relays a client tool over tool.called / tool_result", async () => {
    const pick = clientTool({ description: "Pick a colour", parameters: Type.Object({ palette: Type.String() }) });
    const def = withTools(agent({ name: "paint", mode: "text", greeting: "" }), { pick });
    const { link, started } = textSession(def, {
      script: { rules: [{ when: "colour", call: { tool: "pick", args: { palette: "warm" } }, then: "You picked {result}." }] },
    });
    await started;
    link.send({ type: "user_text", text: "choose a colour" });
    const called = await link.next("tool.called", 0);
    link.send({ type: "tool_result", toolCallId: called.toolCallId, result: "amber" });
    await link.next("reply.completed", 0);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("You picked amber.");
    link.send({ type: "tool_result", toolCallId: "nope", result: "x" });
    expect(link.of("error.reported").at(-1)).toMatchObject({ code: "protocol", fatal: false });
  });
});
