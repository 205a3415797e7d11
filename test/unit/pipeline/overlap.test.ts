// Speech over the agent, judged on its own (overlap.ts): barge-in evidence and acknowledgements.
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { Overlap } from "../../../src/pipeline/overlap.js";
import { UtteranceText } from "../../../src/pipeline/stt-port.js";
import type { Utterance } from "../../../src/pipeline/utterance.js";
import type { VoiceSettings } from "../../../src/pipeline/voice-settings.js";

const interruption: VoiceSettings["interruption"] = {
  enabled: true,
  minWords: 2,
  minDurationMs: 600,
  backoffMs: 0,
  resumeFalseInterruption: false,
  acknowledgementPhrases: ["uh-huh", "yeah", "okay"],
  interruptPhrases: ["stop", "wait"],
};

function utterance(text: string, startedAt: number): Utterance {
  const transcript = new UtteranceText();
  transcript.partial(text);
  return { transcript, startedAt, lastActivityAt: startedAt, announced: true, held: true, speculations: 0 };
}

describe("Overlap", () => {
  it("interrupts on an interrupt phrase at once, on other speech with minWords and a final or minDurationMs, never on acknowledgements or while the agent is not heard", async () => {
    const clock = virtualClock();
    const overlap = new Overlap({ interruption, detection: "auto" }, clock);
    const start = clock.now();
    await clock.advance(100);
    expect(overlap.interrupts(utterance("stop", start), false, true)).toBe(true);
    expect(overlap.interrupts(utterance("one two", start), false, true)).toBe(false); // 100 ms, not final
    expect(overlap.interrupts(utterance("one two", start), true, true)).toBe(true);
    expect(overlap.interrupts(utterance("yeah okay yeah", start), true, true)).toBe(false);
    expect(overlap.interrupts(utterance("stop", start), true, false)).toBe(false);
    await clock.advance(600);
    expect(overlap.interrupts(utterance("one two", start), false, true)).toBe(true);
  });

  it("an acknowledgement only while the agent is heard, and never in push-to-talk", () => {
    const clock = virtualClock();
    expect(new Overlap({ interruption, detection: "auto" }, clock).acknowledgement("uh-huh yeah", true)).toBe(true);
    expect(new Overlap({ interruption, detection: "auto" }, clock).acknowledgement("uh-huh yeah", false)).toBe(false);
    expect(new Overlap({ interruption, detection: "auto" }, clock).acknowledgement("yeah I want a refund", true)).toBe(false);
    expect(new Overlap({ interruption, detection: "manual" }, clock).acknowledgement("okay", true)).toBe(false);
  });
});
