// Preemptive generation on its own: when a speculative reply starts, and which one a committed
// turn adopts. test/unit/pipeline/voice-loop.test.ts ("preemptive generation and continuation")
// drives it through a whole session.
import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { MAX_PREEMPTS_PER_UTTERANCE, Preemption, type PreemptionDeps } from "../../../src/pipeline/preemption.js";
import { UtteranceText } from "../../../src/pipeline/stt-port.js";
import type { Utterance } from "../../../src/pipeline/utterance.js";

function utterance(text: string): Utterance {
  const transcript = new UtteranceText();
  transcript.partial(text);
  return { transcript, startedAt: 0, lastActivityAt: 0, announced: true, held: false, speculations: 0 };
}

/** A Preemption whose model requests are recorded (prompt and signal), never answered. */
function preemption(overrides: Partial<PreemptionDeps> = {}) {
  const requests: { prompt: readonly ModelMessage[]; signal: AbortSignal }[] = [];
  const subject = new Preemption({
    enabled: true,
    history: () => [{ role: "assistant", content: "Hi." }],
    speculate: (prompt, signal) => {
      requests.push({ prompt, signal });
      return new Promise(() => undefined);
    },
    busy: () => false,
    ...overrides,
  });
  return { subject, requests };
}

describe("Preemption", () => {
  it("a confident interim starts one model request on the history plus its text; the commit with the same words adopts it", () => {
    const { subject, requests } = preemption();
    const heard = utterance("what time is it");
    subject.interim(heard, 0.95);
    subject.interim(heard, 0.97); // the same words: the one in flight stands
    expect(requests.map((r) => r.prompt)).toEqual([
      [
        { role: "assistant", content: "Hi." },
        { role: "user", content: "what time is it" },
      ],
    ]);
    const adopted = subject.adopt("What time is it?");
    expect(adopted?.forText).toBe("what time is it");
    expect(requests[0]?.signal.aborted).toBe(false);
    expect(subject.adopt("What time is it?")).toBeUndefined(); // adopted once
  });

  it("a commit with other words aborts it (discarded); new words abort the one in flight (superseded)", () => {
    const { subject, requests } = preemption();
    const heard = utterance("what time");
    subject.interim(heard, 0.95);
    heard.transcript.partial("what time is it");
    subject.interim(heard, 0.95);
    expect(requests.map((r) => (r.signal.reason as Error | undefined)?.message)).toEqual(["superseded", undefined]);
    expect(subject.adopt("what time is it in Paris")).toBeUndefined();
    expect((requests[1]?.signal.reason as Error).message).toBe("discarded");
  });

  it("nothing starts below 0.9, without a confidence, when off, while busy, or past the per-utterance limit", () => {
    const quiet = preemption();
    quiet.subject.interim(utterance("hello"), 0.89);
    quiet.subject.interim(utterance("hello"), undefined);
    expect(quiet.requests).toEqual([]);
    const off = preemption({ enabled: false });
    off.subject.interim(utterance("hello"), 0.99);
    expect(off.requests).toEqual([]);
    const busy = preemption({ busy: () => true });
    busy.subject.interim(utterance("hello"), 0.99);
    expect(busy.requests).toEqual([]);
    const limited = preemption();
    const heard = utterance("a");
    for (const text of ["a", "a b", "a b c", "a b c d"]) {
      heard.transcript.partial(text);
      limited.subject.interim(heard, 0.99);
    }
    expect(limited.requests).toHaveLength(MAX_PREEMPTS_PER_UTTERANCE);
    expect(heard.speculations).toBe(MAX_PREEMPTS_PER_UTTERANCE);
  });
});
