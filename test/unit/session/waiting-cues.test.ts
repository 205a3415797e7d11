import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { decodeWaitingSound, type WaitingSounds } from "../../../src/audio/waiting-sound.js";
import { silentLogger } from "../../../src/log.js";
import { agent, toAgentConfig, tool, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { Session } from "../../../src/session/session.js";
import { MemorySessionStore } from "../../../src/session/store.js";
import { FakeS2s } from "../../../src/testing/fake-s2s.js";
import { MemoryLink } from "../../../src/testing/memory-link.js";
import type { WaitingCues } from "../../../src/transport/waiting-mix.js";
import { constantWav } from "../../helpers/tone.js";

/** A link that records what the session asks of its waiting audio. */
class CueLink extends MemoryLink {
  readonly cues: boolean[] = [];
  played: WaitingSounds | undefined;
  playWaiting(sounds: WaitingSounds): WaitingCues {
    this.played = sounds;
    return { thinking: (on) => this.cues.push(on) };
  }
}

const SOUNDS: WaitingSounds = { thinking: { sound: decodeWaitingSound(constantWav({ ms: 100, value: 1 })), gain: 1, afterMs: 500 } };

const lookup = tool({ description: "Look up an order", parameters: Type.Object({ orderId: Type.String() }), execute: ({ orderId }) => `Order ${orderId} shipped.` });

async function s2s(waitingAudio: WaitingSounds | undefined) {
  const clock = virtualClock(0);
  const link = new CueLink(clock);
  const fake = new FakeS2s();
  const def = withTools(agent({ name: "rt", greeting: "", s2s: { kind: "openai-realtime", options: {} }, waitingAudio: { thinking: { file: "t.wav" } } }), { lookup }) as ResolvedAgentDef;
  const session = new Session({
    agent: { def, config: toAgentConfig(def), waitingAudio },
    link,
    clock,
    log: silentLogger,
    store: new MemorySessionStore(clock),
    resolveModel: () => {
      throw new Error("no model");
    },
    s2s: () => fake,
  });
  await session.start();
  return { link, fake, clock };
}

describe("the s2s runner's thinking cues", () => {
  it("plays the agent's sounds on the link once the mode has opened", async () => {
    const { link } = await s2s(SOUNDS);
    expect(link.played).toBe(SOUNDS);
  });

  it("thinking from a response's start, through its tool step, until its first audio; off when the caller speaks", async () => {
    const { link, fake, clock } = await s2s(SOUNDS);
    const step = fake.start();
    expect(link.cues).toEqual([true]);
    fake.events.toolCall({ callId: "c1", name: "lookup", args: { orderId: "A1" }, responseId: step });
    fake.done(step);
    await clock.advance(10);
    // A step that only called tools: still thinking while its results go back.
    expect(link.cues.at(-1)).toBe(true);
    const answer = fake.start();
    fake.speak(answer, "It shipped.", 400);
    expect(link.cues.at(-1)).toBe(false);
    const falses = link.cues.length;
    fake.speak(answer, " Anything else?", 400);
    // Once per reply, not per chunk.
    expect(link.cues.length).toBe(falses);
    fake.done(answer);
    await clock.advance(2000);
    expect(link.cues.at(-1)).toBe(false);
    fake.start();
    expect(link.cues.at(-1)).toBe(true);
    fake.events.speechStarted();
    expect(link.cues.at(-1)).toBe(false);
  });

  it("asks nothing of a link when the agent has no waiting sounds", async () => {
    const { link, fake } = await s2s(undefined);
    fake.start();
    expect(link.played).toBeUndefined();
    expect(link.cues).toEqual([]);
  });
});
