// Calls on each carrier against a simulator that frames and plays audio as that carrier documents
// it (fakes/carrier.ts), on an s2s agent (the OpenAI Realtime fake): the frames the
// gateway sends keep the carrier's rules, marks come every 250 ms of audio, Plivo's audio plays
// at the speed it was made for, and a goodbye on a carrier without marks is not cut short.
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { MARK_EVERY_MS } from "../../src/transport/carrier-playout.js";
import { FakeCarrier, type CarrierDialect } from "../../fakes/carrier.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A gateway answering `carrier` with an s2s agent on a Realtime fake that sends `chunkMs` audio deltas. */
async function line(carrier: CarrierDialect, chunkMs = 20): Promise<{ service: FakeOpenAiRealtime; url: string; gateway: Gateway }> {
  const service = await startFakeOpenAiRealtime({ chunkMs, paceMs: 2 });
  closers.push(() => service.close());
  const def = agent({ name: "line", greeting: "Hello.", s2s: { kind: "openai-realtime", options: { url: service.url } }, telephony: [carrier], builtinTools: ["end_call"] });
  const gateway = createGateway({ agent: def, logger: silentLogger, processMetrics: false, env: { OPENAI_API_KEY: "test-key" } });
  const { port } = await gateway.listen(0);
  closers.push(() => gateway.close());
  return { service, url: `ws://127.0.0.1:${port}/telephony/${carrier}`, gateway };
}

async function dial(url: string, dialect: CarrierDialect, playbackDelayMs = 0): Promise<FakeCarrier> {
  const carrier = await FakeCarrier.dial({ url, dialect, playbackDelayMs });
  closers.push(() => carrier.close());
  return carrier;
}

describe("calls against documented-behaviour carrier simulators", () => {
  it("Plivo: playAudio declares the stream's μ-law at 8 kHz, so a 1 s greeting plays as 1 s (declared L16 at 16 kHz it played in 250 ms, as noise)", async () => {
    const { service, url } = await line("plivo");
    service.enqueue({ say: "Hello.", audioMs: 1000 });
    const carrier = await dial(url, "plivo");
    await carrier.until(() => carrier.marksEchoed.length > 0 && carrier.bufferedMs === 0 && carrier.playedMs > 0, "the greeting played");
    expect(carrier.violations).toEqual([]);
    expect(carrier.playedMs).toBeGreaterThan(1000 - 25);
    expect(carrier.playedMs).toBeLessThan(1000 + 25);
  }, 20_000);

  it("Telnyx: no rtp payload under 20 ms, whatever deltas the service sends (260 ms deltas left 10 ms frames)", async () => {
    const { service, url } = await line("telnyx", 260);
    service.enqueue({ say: "Hello.", audioMs: 530 });
    const carrier = await dial(url, "telnyx");
    await carrier.until(() => carrier.marksEchoed.length > 0 && carrier.bufferedMs === 0 && carrier.playedMs > 500, "the greeting played");
    expect(carrier.violations).toEqual([]);
  }, 20_000);

  it("Exotel: every chunk is 3.2–100 KB and a multiple of 320 bytes (the bridge re-cut them at 4 000 bytes)", async () => {
    // 300 ms deltas: 4 800 bytes of 8 kHz slin each.
    const { service, url } = await line("exotel", 300);
    service.enqueue({ say: "Hello.", audioMs: 1500 });
    const carrier = await dial(url, "exotel");
    await carrier.until(() => carrier.marksEchoed.length > 0 && carrier.bufferedMs === 0 && carrier.playedMs > 1400, "the greeting played");
    expect(carrier.audio.length).toBeGreaterThan(3);
    expect(carrier.violations).toEqual([]);
  }, 20_000);

  it("Twilio: a mark every 250 ms of audio, wherever the service's deltas fall (they came every ~350 ms)", async () => {
    const { service, url } = await line("twilio", 70);
    service.enqueue({ say: "Hello.", audioMs: 2000 });
    const carrier = await dial(url, "twilio");
    await carrier.until(() => carrier.marksEchoed.length >= 8 && carrier.bufferedMs === 0, "the greeting played");
    const gaps = carrier.audioMsAtMarks.map((at, i) => at - (carrier.audioMsAtMarks[i - 1] ?? 0));
    // Every mark but the segment's last (which follows the final partial stretch) closes exactly 250 ms.
    for (const gap of gaps.slice(0, -1)) expect(gap).toBeCloseTo(MARK_EVERY_MS, 0);
    expect(gaps.at(-1)).toBeLessThanOrEqual(MARK_EVERY_MS);
    expect(carrier.violations).toEqual([]);
  }, 20_000);

  it("Vonage: with no marks, an end_call goodbye plays to its end before the stream closes (it was cut about 1 s short)", async () => {
    const { service, url } = await line("vonage");
    service.enqueue({ say: "Hello.", audioMs: 200 });
    // A jitter buffer of 300 ms, which nothing on the socket reports.
    const carrier = await dial(url, "vonage", 300);
    await carrier.until(() => carrier.playedMs >= 200, "the greeting played");
    service.enqueue({ toolCall: { name: "end_call", args: {} } }, { say: "Goodbye, and thanks for calling.", audioMs: 2500 });
    void service.userSays("that is all");
    expect((await carrier.closed).code).toBe(1000);
    expect(carrier.violations).toEqual([]);
    // What was still unplayed when the socket closed was cut off the call: at most the last frame.
    expect(carrier.unplayedAtCloseMs).toBeLessThanOrEqual(20);
    expect(carrier.playedMs).toBeGreaterThan(200 + 2500 - 40);
    await sleep(10);
  }, 20_000);
});

describe("what a carrier socket is sent as text", () => {
  it("a text frame that is not UTF-8 closes the stream 1007 before the bridge reads it (the bridge decodes text frames without checking again)", async () => {
    const { url } = await line("twilio");
    const socket = new WebSocket(url);
    closers.push(() => socket.terminate());
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    // `{"event":"connected"}` with a lone 0xff inside a string: sent as a text frame, unchecked by the sender.
    socket.send(Buffer.concat([Buffer.from('{"event":"conn'), Buffer.from([0xff]), Buffer.from('ected"}')]), { binary: false });
    expect(await closed).toBe(1007);
  }, 20_000);
});
