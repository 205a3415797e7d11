import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpusCodec, opusAvailable } from "../../src/audio/opus.js";
import { readWav } from "../../src/audio/wav.js";
import { agent, withTools } from "../../src/manifest/index.js";
import { serverEventSchema } from "../../src/transport/protocol.js";
import type { FakeDeepgram } from "../../fakes/deepgram.js";
import type { FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { connect, type TestClient } from "../helpers/ws-client.js";

const { lookupOrder } = countedLookupOrder();

let served: PipelineGateway;
let llm: FakeOpenAiServer;
let stt: FakeDeepgram;
let client: TestClient | undefined;

beforeEach(async () => {
  served = await startPipelineGateway((fakes) => withTools(agent({ name: "phone", greeting: "Welcome to the shop.", ...fakes.providers }), { lookup_order: lookupOrder }));
  ({ llm, stt } = served.fakes);
});

afterEach(async () => {
  client?.close();
  await served.close();
});

/** The caller's voice: a flite recording (fixtures/audio/order-status.wav, 16 kHz PCM16), looped. */
const voice = readWav(new Uint8Array(readFileSync(new URL("../../fixtures/audio/order-status.wav", import.meta.url))));
let voiceAt = 0;

/** Stream `ms` of the caller's voice in 20 ms frames, in real time. */
async function speakFor(ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 20) {
    if (voiceAt + 320 > voice.samples.length) voiceAt = 0;
    const frame = voice.samples.slice(voiceAt, voiceAt + 320);
    voiceAt += 320;
    client?.ws.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
    await sleep(20);
  }
}

describe("a pipeline session over real sockets and the vendors' wire protocols", () => {
  it("greets, answers with a spoken tool message, is barged in on, and resumes after a false interruption", async () => {
    const { port } = served;
    client = await connect(`ws://127.0.0.1:${port}/websocket`);
    const binary: number[] = [];
    client.ws.on("message", (data, isBinary) => {
      if (isBinary) binary.push((data as Buffer).byteLength);
    });
    await client.next("reply.completed", 0);
    expect(binary.length).toBeGreaterThan(0);

    llm.enqueue(
      { toolCalls: [{ name: "lookup_order", args: { orderId: "A17" }, id: "call_1" }] },
      { text: "Your order A17 shipped on Friday, it is on the truck now, and it should reach you by Tuesday afternoon at the latest." },
    );
    await speakFor(200);
    stt.final("where is my order A17", { speechFinal: true });
    await client.next("tool.message");
    await client.next("agent-transcript.updated");
    await sleep(900);

    // A false interruption: speech that never becomes a final.
    stt.speechStarted();
    stt.partial("hmm");
    await speakFor(400);
    stt.partial("hmm");
    await client.next("reply.cancelled");

    llm.enqueue({ text: "As I was saying, it should reach you by Tuesday." });
    await client.next("reply.completed", client.events.findIndex((e) => e.type === "reply.cancelled"));
    const log = client.events.map((e) => `${e.type}${"kind" in e ? ` ${e.kind}` : ""}${"text" in e ? ` ${JSON.stringify(e.text)}` : ""}`);

    expect(log).toContain('tool.message start "Let me check that order."');
    expect(log.indexOf("reply.cancelled")).toBeGreaterThan(log.indexOf("tool.completed"));
    expect(client.of("agent-transcript.committed").at(-1)?.text).toBe("As I was saying, it should reach you by Tuesday.");
    const resumePrompt = llm.requests.at(-1)?.messages.at(-1);
    expect(String(resumePrompt?.content)).toMatch(/The caller interrupted you but said nothing/);
    const interrupted = llm.requests.at(-1)?.messages.find((m) => m.role === "assistant" && String(m.content).includes("[interrupted]"));
    expect(interrupted).toBeDefined();
    expect(String(interrupted?.content)).not.toContain("Tuesday afternoon");
    expect(llm.violations).toEqual([]);
    // The STT heard the caller's recorded voice, byte for byte as sent (16 kHz PCM16 passes through).
    expect(stt.audioBytes).toBeGreaterThanOrEqual(30 * 640);
    for (const event of client.events) expect(serverEventSchema().safeParse(event).success, JSON.stringify(event)).toBe(true);
    console.log(log.filter((l) => !l.startsWith("agent-transcript.updated")).join("\n"));

    // The session's story, as Prometheus sees it.
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const value = (series: string): number => Number(new RegExp(`^${series.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(metrics)?.[1] ?? "0");
    expect(value('switchboard_sessions_total{mode="pipeline",transport="websocket"}')).toBe(1);
    expect(value('switchboard_barge_ins_total{mode="pipeline"}')).toBeGreaterThanOrEqual(1);
    expect(value('switchboard_false_interruption_resumes_total{mode="pipeline"}')).toBe(1);
    expect(value('switchboard_replies_cancelled_total{mode="pipeline",transport="websocket"}')).toBeGreaterThanOrEqual(1);
    expect(value('switchboard_tool_calls_total{outcome="ok"}')).toBe(1);
    for (const stage of ["endpoint", "llm_first_token", "tts_first_audio", "voice_to_voice"]) {
      expect(value(`switchboard_turn_stage_seconds_count{mode="pipeline",stage="${stage}"}`), stage).toBeGreaterThanOrEqual(1);
    }
  }, 30_000);
});

describe("a pipeline session's STT link", () => {
  it("is replaced after a drop, and the reconnect is counted in the metrics", async () => {
    const { port } = served;
    client = await connect(`ws://127.0.0.1:${port}/websocket`);
    await client.next("reply.completed", 0);
    await speakFor(100);
    stt.drop();
    const deadline = Date.now() + 10_000;
    while (stt.connections.length < 2 && Date.now() < deadline) await speakFor(40);
    expect(stt.connections.length).toBe(2);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^switchboard_provider_reconnects_total\{mode="pipeline"\} 1$/m);
  }, 20_000);
});

describe.skipIf(!(await opusAvailable()))("Opus at the socket edge", () => {
  it("announces opus, decodes the mic to PCM for the STT, and speaks in 20 ms Opus packets", async () => {
    const { port } = served;
    client = await connect(`ws://127.0.0.1:${port}/websocket?codec=opus&sampleRate=48000`);
    expect(client.events[0]).toMatchObject({ type: "session.configured", audioFormat: "opus", sampleRate: 48000, ttsSampleRate: 24000 });
    const packets: Buffer[] = [];
    client.ws.on("message", (data, isBinary) => {
      if (isBinary) packets.push(data as Buffer);
    });
    await client.next("reply.completed", 0);
    const player = await createOpusCodec({ sampleRate: 24000, channels: 1 });
    expect(packets.length).toBeGreaterThan(3);
    for (const packet of packets) expect(player.decode(packet).byteLength).toBe(960);

    const mic = await createOpusCodec({ sampleRate: 48000, channels: 1 });
    const tone = Int16Array.from({ length: 960 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 48000)));
    const before = stt.audioBytes;
    for (let i = 0; i < 10; i++) {
      client.ws.send(mic.encode(tone));
      await sleep(20);
    }
    await sleep(100);
    expect(stt.audioBytes - before).toBe(10 * 640);
  }, 20_000);

  it("refuses an unknown codec with a protocol error naming the parameter, then 1008", async () => {
    const { port } = served;
    const { TestClient } = await import("../helpers/ws-client.js");
    const refused = new TestClient(`ws://127.0.0.1:${port}/websocket?codec=mp3`);
    expect(await refused.next("error.reported", 0)).toMatchObject({ code: "protocol", fatal: true, message: 'codec must be pcm16 or opus (got "mp3")' });
    expect((await refused.closed).code).toBe(1008);
  });
});
