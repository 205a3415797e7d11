import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { agentToolsToSchemas, agentToolsets } from "../../../src/manifest/index.js";
import type { Script } from "../../../src/pipeline/providers/llm/script.js";
import { loadAgent } from "../../../src/server/loader.js";
import { voiceSession } from "../../../src/testing/voice-session.js";

const dir = fileURLToPath(new URL("../../../examples/support", import.meta.url));

describe("examples/support (the agent npm start serves)", () => {
  it("loads from its directory: a pipeline agent with its tool files, builtins and offline script", async () => {
    const loaded = await loadAgent(dir);
    expect(loaded.config.mode).toBe("pipeline");
    expect(agentToolsToSchemas(agentToolsets(loaded.def)).map((s) => s.name)).toEqual(["confirm_return", "lookup_order", "start_return", "verify_caller"]);
    expect(Object.keys(loaded.def.dialogs ?? {})).toEqual(["returns"]);
    expect(loaded.config.builtinTools).toEqual(["current_time", "calculate", "end_call"]);
    expect(loaded.config.silence?.nudge?.afterMs).toBe(20_000);
    expect(loaded.script).toMatchObject({ rules: expect.any(Array) as unknown });
  });

  it("serves its opening hours at GET /support/hours, to anyone (auth: \"none\")", async () => {
    const { createGateway } = await import("../../../src/server/index.js");
    const { silentLogger } = await import("../../../src/log.js");
    const loaded = await loadAgent(dir);
    const gateway = createGateway({ agent: loaded.def, script: loaded.script, logger: silentLogger, env: {}, offline: true, processMetrics: false, apiKey: "sk-gateway" });
    try {
      const { url } = await gateway.listen(0);
      expect(await (await fetch(`${url}/support/hours`)).json()).toEqual({ days: "Monday to Friday", hours: "09:00–17:00", timeZone: "Europe/Berlin" });
    } finally {
      await gateway.close();
    }
  });

  it("on the offline brain: refuses the lookup until the PIN, then speaks the tool's lines and the status", async () => {
    const loaded = await loadAgent(dir);
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { link, stt, tts, clock, started, session } = voiceSession(loaded.def, { script: loaded.script as Script, msPerChar: 10 });
    await started;
    await clock.advance(3000);
    stt.current.final("where is my order", true);
    await clock.advance(5000);
    const refused = link.of("tool.completed").at(-1);
    expect(refused).toMatchObject({ isError: true, result: expect.stringContaining("the caller is not verified") as string });
    // Its event observer reported the failed call on the console.
    expect(warned.mock.calls).toEqual([[`support: tool call ${refused?.toolCallId} failed in session ${session.id}: ${refused?.result}`]]);
    warned.mockRestore();
    stt.current.final("my pin is four five six seven", true);
    await clock.advance(5000);
    expect(link.of("state.updated").at(-1)?.state).toEqual({ verified: true, returns: "choose_order" });
    stt.current.final("where is my order", true);
    await clock.advance(2000);
    // The lookup takes 2.5 s of real time (a real setTimeout in the tool).
    await new Promise((resolve) => setTimeout(resolve, 2700));
    await clock.advance(6000);
    const spoken = tts.spoken.join(" ");
    expect(spoken).toMatch(/Let me check that order\.|One moment while I look that up\./);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Order A1234 shipped on Friday and arrives Tuesday.");
    expect(spoken).not.toContain("[guidance]");
  }, 20_000);

  it("on the offline brain, a pipeline session: the return dialog refuses a step out of turn, then books the return step by step", async () => {
    const loaded = await loadAgent(dir);
    const { link, stt, tts, clock, started } = voiceSession(loaded.def, { script: loaded.script as Script, msPerChar: 10 });
    await started;
    await clock.advance(3000);
    const turn = async (text: string): Promise<string | undefined> => {
      stt.current.final(text, true);
      await clock.advance(8000);
      return link.of("tool.completed").at(-1)?.result;
    };
    expect(await turn("yes please")).toBe(
      "confirm_return cannot run now: the dialog returns is at choose_order. First: Ask which order the caller wants to return, then call start_return with its id.",
    );
    expect(await turn("I want to return my order")).toBe("start_return cannot run now: the caller is not verified. Ask for their four-digit PIN first.");
    await turn("my pin is four five six seven");
    expect(await turn("I want to return my order")).toBe(
      "Return started for order A1234. Shall I book it?\n[guidance] Dialog returns is now at confirm. Next: Read the order id back, ask the caller to confirm the return, and call confirm_return with their answer.",
    );
    expect(link.of("state.updated").at(-1)?.state).toEqual({ verified: true, returns: "confirm" });
    expect(await turn("yes")).toMatch(/^The return of order A1234 is booked, and a prepaid label is on its way by email\.\n\[guidance\] Dialog returns is done \(at booked\)\./);
    expect(link.of("state.updated").at(-1)?.state).toEqual({ verified: true, returns: "booked" });
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("The return of order A1234 is booked, and a prepaid label is on its way by email.");
    expect(tts.spoken.join(" ")).not.toContain("[guidance]");
  }, 20_000);

  it("never passes a card number the caller reads out to the model, nor speaks one the model writes", async () => {
    const loaded = await loadAgent(dir);
    // A script whose model would answer a card number, and read one back.
    const script: Script = { rules: [{ when: "card on file", say: "Sure. The card on file is 4111 1111 1111 1111. Anything else?" }, { when: "card", say: "Thanks for the card number." }] };
    const { link, stt, tts, clock, started } = voiceSession(loaded.def, { script, msPerChar: 10 });
    await started;
    await clock.advance(3000);
    stt.current.final("my card number is 4111 1111 1111 1111", true);
    await clock.advance(5000);
    expect(link.of("user-transcript.committed").at(-1)).toMatchObject({ refused: true });
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Please don't read me your card number: I never need it to help with an order.");
    stt.current.final("read me the card on file", true);
    await clock.advance(5000);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Sure. I can't read card numbers out loud.");
    const spoken = tts.spoken.join(" ");
    expect(spoken).not.toContain("4111");
    expect(spoken).not.toContain("Thanks for the card number");
  });
});
