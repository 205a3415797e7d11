import { describe, expect, it } from "vitest";
import { agent, withTools, type AgentOptions, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { voiceSession } from "../../../src/testing/voice-session.js";

// ≈ 5 s of the fake TTS (50 ms per character): the agent is audible for a while after "hello".
const talk = {
  rules: [
    { when: "hello", say: "Hello! I can help you track an order, check a delivery date, or answer questions about returns." },
    { when: "okay|yeah", say: "Great, what would you like to do?" },
  ],
};

function session(interruption?: AgentOptions["interruption"]) {
  const def = withTools(agent({ name: "v", greeting: "", ...(interruption === undefined ? {} : { interruption }) }), {}) as ResolvedAgentDef;
  return voiceSession(def, { script: talk });
}

/** "hello" committed and its reply audible (1.2 s in). */
async function speaking(h: ReturnType<typeof session>): Promise<void> {
  await h.started;
  h.stt.current.final("hello", true);
  await h.clock.advance(1200);
  expect(h.link.of("reply.cancelled")).toHaveLength(0);
}

describe("acknowledgements said while the agent is heard", () => {
  it("'Uh-huh.' over the agent neither interrupts nor becomes a turn: no speech.started, no caption, no commit", async () => {
    const h = session();
    await speaking(h);
    const from = h.link.events.length;
    h.stt.current.speechStarted();
    h.stt.current.partial("uh");
    await h.clock.advance(700); // past minDurationMs (500) and minWords (1)
    h.stt.current.partial("uh huh");
    h.stt.current.final("Uh-huh.", true);
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    await h.clock.advance(20_000);
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello"]);
    const after = h.link.events.slice(from).map((e) => e.type);
    expect(after).not.toContain("speech.started");
    expect(after).not.toContain("user-transcript.updated");
    expect(h.link.of("reply.completed")).toHaveLength(1);
    expect(h.link.of("agent-transcript.committed").at(-1)?.text).toMatch(/questions about returns\.$/);
  });

  it("any mix and repeat of them, in any spelling, is still only acknowledgement", async () => {
    const h = session();
    await speaking(h);
    for (const said of ["yeah yeah", "Mm-hmm.", "OK, got it.", "mhm right"]) {
      h.stt.current.speechStarted();
      h.stt.current.partial(said);
      await h.clock.advance(600);
      h.stt.current.final(said, true);
      await h.clock.advance(100);
    }
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    await h.clock.advance(20_000);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello"]);
  });

  it("an acknowledgement that goes on into real words is a barge-in by the usual thresholds", async () => {
    const h = session();
    await speaking(h);
    h.stt.current.speechStarted();
    h.stt.current.partial("okay");
    await h.clock.advance(600);
    h.stt.current.partial("okay");
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    h.stt.current.partial("okay but my order");
    expect(h.link.of("reply.cancelled")).toHaveLength(1);
    h.stt.current.final("okay but my order", true);
    await h.clock.advance(20_000);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello", "okay but my order"]);
  });

  it("said into silence, an acknowledgement is a turn like any other, and is answered", async () => {
    const h = session();
    await speaking(h);
    await h.clock.advance(20_000);
    expect(h.link.of("reply.completed")).toHaveLength(1);
    h.stt.current.speechStarted();
    h.stt.current.final("okay", true);
    await h.clock.advance(20_000);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello", "okay"]);
    expect(h.link.of("agent-transcript.committed").at(-1)?.text).toBe("Great, what would you like to do?");
  });

  it("begun over the agent but ending after it fell quiet, it is a turn (an answer to the reply's last words)", async () => {
    const h = session();
    await h.started;
    h.stt.current.final("hello", true);
    await h.clock.advance(4500); // the last words of the ≈ 5 s reply
    h.stt.current.speechStarted();
    h.stt.current.partial("yeah");
    await h.clock.advance(3000); // the reply has played out
    h.stt.current.final("yeah", true);
    await h.clock.advance(20_000);
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello", "yeah"]);
  });

  it('with interruption "off" an acknowledgement still is not a turn; other speech is answered after the reply', async () => {
    const h = session("off");
    await speaking(h);
    h.stt.current.speechStarted();
    h.stt.current.final("right", true);
    await h.clock.advance(300);
    h.stt.current.speechStarted();
    h.stt.current.final("stop", true);
    await h.clock.advance(20_000);
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello", "stop"]);
  });

  it("acknowledgementPhrases: [] turns the filter off: an 'okay' over the agent barges in and is a turn", async () => {
    const h = session({ acknowledgementPhrases: [] });
    await speaking(h);
    h.stt.current.speechStarted();
    h.stt.current.final("okay", true);
    expect(h.link.of("reply.cancelled")).toHaveLength(1);
    await h.clock.advance(20_000);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello", "okay"]);
  });
});

describe("interrupt phrases said while the agent is heard", () => {
  it("'stop' cuts at once, on its first interim, below minWords and minDurationMs", async () => {
    const h = session({ minWords: 3, minDurationMs: 2000 });
    await speaking(h);
    h.stt.current.speechStarted();
    h.stt.current.partial("Stop!");
    expect(h.link.of("reply.cancelled")).toHaveLength(1);
    const types = h.link.types();
    expect(types.slice(types.lastIndexOf("reply.cancelled"))).toEqual(["reply.cancelled", "speech.started", "user-transcript.updated"]);
    h.stt.current.final("Stop!", true);
    await h.clock.advance(20_000);
    expect(h.link.of("user-transcript.committed").map((e) => e.text)).toEqual(["hello", "Stop!"]);
  });

  it("anywhere in the utterance, and over an acknowledgement: 'okay, hold on' cuts", async () => {
    const h = session({ minWords: 5, minDurationMs: 2000 });
    await speaking(h);
    h.stt.current.speechStarted();
    h.stt.current.partial("okay");
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
    h.stt.current.partial("okay, hold on");
    expect(h.link.of("reply.cancelled")).toHaveLength(1);
  });

  it("without it (interruptPhrases: []) the same 'stop' waits for the thresholds", async () => {
    const h = session({ minWords: 3, minDurationMs: 2000, interruptPhrases: [] });
    await speaking(h);
    h.stt.current.speechStarted();
    h.stt.current.partial("stop");
    h.stt.current.final("stop", true);
    expect(h.link.of("reply.cancelled")).toHaveLength(0);
  });
});
