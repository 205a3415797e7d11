import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { agent } from "../../../src/manifest/index.js";
import { DeferredStream } from "../../../src/pipeline/reply-gate.js";
import type { TtsStream } from "../../../src/pipeline/tts-port.js";
import { streamingModel } from "../../../src/testing/streaming-model.js";
import { voiceSession, type VoiceSessionHarness } from "../../../src/testing/voice-session.js";

/** A reply as a provider streams it. */
function replyStream(text: string): ReadableStream<LanguageModelV4StreamPart> {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: text },
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } } },
  ];
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** A stream that records what it was told. */
function recorded(log: string[]): TtsStream {
  return { push: (text) => log.push(`push ${text}`), end: () => log.push("end"), cancel: () => log.push("cancel") };
}

describe("a reply's TTS stream opens once its model request is out", () => {
  it("the model is asked before the reply's TTS stream opens, and the reply is spoken on it", async () => {
    const opensAtRequest: number[] = [];
    const model = streamingModel("m", () => {
      opensAtRequest.push(harness.tts.streamsOpened);
      return Promise.resolve({ stream: replyStream("It shipped on Friday.") });
    });
    const harness: VoiceSessionHarness = voiceSession(agent({ name: "a", greeting: "" }), { model });
    const { stt, tts, clock, link, started } = harness;
    await started;
    stt.current.speechStarted();
    stt.current.final("where is my order", true);
    await clock.advance(5000);
    expect(opensAtRequest).toEqual([0]);
    expect(tts.streamsOpened).toBe(1);
    expect(tts.spoken.join("").trim()).toBe("It shipped on Friday.");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("It shipped on Friday.");
  });

  it("a deferred stream opens at open() or its first text, once; ended or cancelled first, it never opens; refused by its opener, it drops what comes", () => {
    const log: string[] = [];
    let opens = 0;
    const opener = (): TtsStream => {
      opens += 1;
      return recorded(log);
    };
    const opened = new DeferredStream(opener);
    opened.open();
    opened.open();
    opened.push("Hello.");
    opened.end();
    expect({ opens, log }).toEqual({ opens: 1, log: ["push Hello.", "end"] });

    const lazy = new DeferredStream(opener);
    lazy.push("Hi.");
    expect(opens).toBe(2);

    for (const stop of ["end", "cancel"] as const) {
      const unused = new DeferredStream(opener);
      unused[stop]();
      unused.open();
      unused.push("never");
    }
    expect(opens).toBe(2);

    const refused = new DeferredStream(() => undefined);
    refused.push("dropped");
    refused.open();
    refused.end();
    expect(log).toEqual(["push Hello.", "end", "push Hi."]);
  });
});
