// Audio while waiting (docs/telephony.md "Audio while waiting") through a whole pipeline gateway on
// the vendor fakes: the thinking sound while a slow tool runs, stopped when speech starts; the
// bed under speech and in the silences, cut with the agent's audio on a barge-in; and the bed
// never counting as the agent speaking (no barge-in on it, the idle timer runs through it).
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { bytesToSamples } from "../../src/audio/pcm.js";
import { agent, withTools } from "../../src/manifest/index.js";
import { startPipelineGateway, type PipelineFakes, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { sampleKind, slowLookup, SOUNDS, WAITING_AUDIO } from "../helpers/waiting-sounds.js";
import { connect, type TestClient } from "../helpers/ws-client.js";

function kindOf(frame: Buffer): string {
  return sampleKind(bytesToSamples(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength))[0] ?? 0);
}

let served: PipelineGateway | undefined;
let client: TestClient | undefined;

afterEach(async () => {
  client?.close();
  await served?.close();
});

/** A gateway whose agent plays SOUNDS; `stream` is what the client got, in order: event types and frame kinds (runs of one kind folded). */
async function start(extra: Record<string, unknown> = {}): Promise<{ stream: string[]; c: TestClient; f: PipelineFakes }> {
  served = await startPipelineGateway(
    (f) =>
      withTools(
        agent({ name: "shop", greeting: "Hello.", ...f.providers, waitingAudio: WAITING_AUDIO, ...extra }),
        { lookup_order: slowLookup },
      ),
    { waitingAudio: SOUNDS },
  );
  const f = served.fakes;
  const c = await connect(served.url);
  client = c;
  const stream: string[] = [];
  c.ws.on("message", (data, isBinary) => {
    const item = isBinary ? kindOf(data as Buffer) : (JSON.parse((data as Buffer).toString("utf8")) as { type: string }).type;
    if (stream.at(-1) !== item) stream.push(item);
  });
  return { stream, c, f };
}

describe("audio while waiting, in a pipeline session", () => {
  it("plays the thinking sound while a slow tool runs, stops it when speech starts, and keeps the bed under speech and in the silences", async () => {
    const { stream, c, f } = await start();
    await c.next("reply.completed", 0);
    await sleep(300);
    f.llm.enqueue({ toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] }, { text: "Your order shipped on Friday." });
    c.send({ type: "user_text", text: "where is my order" });
    await c.next("tool.completed");
    await c.next("reply.completed", c.events.findIndex((e) => e.type === "tool.completed"));
    await sleep(300);

    expect(stream.filter((s) => s.startsWith("other"))).toEqual([]);
    // The bed from the start, under the greeting's speech, then alone in the silence before the turn.
    expect(stream.indexOf("bed")).toBeLessThan(stream.indexOf("speech"));
    expect(stream.indexOf("bed", stream.indexOf("speech"))).toBeLessThan(stream.indexOf("user-transcript.committed"));
    const called = stream.indexOf("tool.called");
    const completed = stream.indexOf("tool.completed");
    // The thinking sound while the tool ran (it started ≥ 300 ms into the turn, on the bed).
    expect(stream.slice(called, completed)).toContain("thinking");
    // Once the answer's speech starts, no thinking sound: speech, then the bed again.
    const answer = stream.indexOf("speech", completed);
    expect(answer).toBeGreaterThan(completed);
    expect(stream.slice(answer)).not.toContain("thinking");
    expect(stream.at(-1)).toBe("bed");
  }, 20_000);

  it("cuts the bed with the agent's audio on a barge-in, and the bed alone never counts as the agent speaking", async () => {
    const { stream, c, f } = await start({ interruption: { minWords: 1, minDurationMs: 0, resumeFalseInterruption: false } });
    await c.next("reply.completed", 0);
    // A listener that reports what it holds, bed included: the session hears only the agent's part.
    const reports = setInterval(() => c.send({ type: "playback_progress", bufferedMs: 120 }), 50);
    try {
      await sleep(600);
      // The caller talks over the bed alone: nothing to barge in on.
      f.stt.speechStarted();
      f.stt.partial("well then");
      await sleep(300);
      expect(c.of("reply.cancelled")).toEqual([]);
      f.llm.enqueue({ text: "Our shop is open from nine in the morning until six in the evening, every day of the week except public holidays, when we close at noon." });
      f.stt.final("well then when are you open", { speechFinal: true });
      const spoke = await c.next("agent-transcript.updated");
      await sleep(400);
      // A barge-in over the reply's speech.
      f.stt.speechStarted();
      f.stt.partial("stop");
      await c.next("reply.cancelled", c.events.indexOf(spoke));
      await sleep(300);
    } finally {
      clearInterval(reports);
    }
    const cancelled = stream.lastIndexOf("reply.cancelled");
    expect(stream.slice(0, cancelled)).toContain("speech");
    // After the cut: no more of the reply's speech, the bed goes on.
    const after = stream.slice(cancelled + 1).filter((s) => !s.includes("."));
    expect(after).toContain("bed");
    expect(after).not.toContain("speech");
  }, 20_000);

  it("lets the idle timer run out while the bed plays", async () => {
    const { c } = await start({ idleTimeoutMs: 800 });
    await c.next("reply.completed", 0);
    const timedOut = await Promise.race([c.next("session.timed-out"), sleep(4000).then(() => undefined)]);
    expect(timedOut?.type).toBe("session.timed-out");
  }, 20_000);
});
