import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { DEFAULTS, agent, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import type { CallRef } from "../../src/server/telephony/carrier-client.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { answerTwilio, FakeCarrier, type FakeCarrierOptions } from "../../fakes/carrier.js";
import { rampG711, startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";

let counted = countedLookupOrder();

let service: FakeOpenAiRealtime;
let gateway: Gateway;
let carrier: FakeCarrier | undefined;
let hangUps: CallRef[];
/** Twilio is signed here: its calls come through the signed webhook, so the gateway may hang them up. */
const TWILIO_TOKEN = "twilio-auth-token-s2s";

async function start(extra: Record<string, unknown> = {}): Promise<void> {
  const def = withTools(
    agent({
      name: "phone",
      greeting: "Thanks for calling.",
      s2s: { kind: "openai-realtime", options: { url: service.url } },
      telephony: ["twilio", "telnyx"],
      builtinTools: ["end_call"],
      ...extra,
    }),
    { lookup_order: counted.lookupOrder },
  );
  gateway = createGateway({
    agent: def,
    logger: silentLogger,
    env: { OPENAI_API_KEY: "test-key", TWILIO_AUTH_TOKEN: TWILIO_TOKEN },
    processMetrics: false,
    carrierClient: {
      hangUp: (call) => {
        hangUps.push(call);
        return Promise.resolve();
      },
    },
  });
  await gateway.listen(0);
}

function streamUrl(carrierName: string): string {
  const address = gateway.server.address() as { port: number };
  return `ws://127.0.0.1:${address.port}/telephony/${carrierName}`;
}

/** A Twilio call the gateway answered: the signed webhook, then its stream with the minted ticket. */
async function dialTwilio(options: Omit<FakeCarrierOptions, "url"> = {}): Promise<FakeCarrier> {
  const address = gateway.server.address() as { port: number };
  const callId = `CA${Math.random().toString(16).slice(2, 14)}`;
  const answered = await answerTwilio(`http://127.0.0.1:${address.port}`, TWILIO_TOKEN, callId);
  return FakeCarrier.dial({ ...options, url: answered.url, headers: answered.headers, callId });
}

beforeEach(async () => {
  counted = countedLookupOrder();
  hangUps = [];
  service = await startFakeOpenAiRealtime({ paceMs: 5 });
});

afterEach(async () => {
  carrier?.close();
  carrier = undefined;
  await gateway.close();
  await service.close();
});

describe("a phone call to an s2s agent (Twilio media stream → OpenAI Realtime)", () => {
  it("passes μ-law through untouched both ways: the service hears the caller's bytes and the caller hears the service's", async () => {
    await start();
    service.enqueue({ say: "Thanks for calling.", audioMs: 300 });
    carrier = await dialTwilio();
    await carrier.until(() => carrier!.marksEchoed.length > 0 && carrier!.bufferedMs === 0, "the greeting played");

    const update = service.messages.find((m) => m.message.type === "session.update")?.message.session as { audio: { input: { format: unknown }; output: { format: unknown } } };
    expect(update.audio.input.format).toEqual({ type: "audio/pcmu" });
    expect(update.audio.output.format).toEqual({ type: "audio/pcmu" });
    // The greeting's audio, byte for byte as the service produced it.
    expect(carrier.audioBytes().equals(rampG711(300))).toBe(true);
    expect(carrier.unstamped).toEqual([]);

    // The caller's voice: a byte ramp the service must receive unchanged, in order.
    carrier.say(Buffer.from(Array.from({ length: 1600 }, (_, i) => i % 251)));
    await carrier.said();
    await sleep(100);
    const heard = service.connections[0]!.audioIn();
    const sent = Buffer.concat(carrier.sent);
    expect(heard.byteLength).toBeGreaterThan(1600);
    expect(heard.equals(sent.subarray(0, heard.byteLength))).toBe(true);
    expect(service.violations).toEqual([]);
  }, 20_000);

  it("on barge-in clears the carrier and truncates the model's memory at what the carrier played, not what was sent", async () => {
    await start();
    service.enqueue({ say: "Thanks for calling.", audioMs: 200 });
    // The carrier plays 800 ms behind what it receives (its jitter buffer and the network).
    carrier = await dialTwilio({ playbackDelayMs: 800 });
    await carrier.until(() => carrier!.marksEchoed.length > 0 && carrier!.bufferedMs === 0, "the greeting played");

    service.enqueue(
      { toolCall: { name: "lookup_order", args: { orderId: "A17" } } },
      { say: "Let me check that order.", audioMs: 200 },
      { say: "Your order A17 shipped on Friday and will reach you by Tuesday afternoon at the latest.", audioMs: 5000 },
    );
    void service.userSays("where is my order A17");
    await carrier.until(() => carrier!.playedMs > 1200 + 200, "part of the answer played", 15_000);
    const audioBefore = carrier.audio.length;
    const clearsBefore = carrier.clears;
    service.speechStarted();
    await carrier.until(() => carrier!.clears > clearsBefore, "clear");
    await sleep(300);

    const truncate = service.messages.find((m) => m.message.type === "conversation.item.truncate")?.message;
    expect(truncate).toBeDefined();
    // Of the answer: the greeting and the tool's start line (200 ms each) played before it.
    const played = (carrier.playedAtClears.at(-1) ?? 0) - 400;
    const cut = Number(truncate?.audio_end_ms);
    // What was sent ran ~1.5 s ahead of what was played; the cut follows the marks, within a mark's spacing.
    expect(carrier.audio.length - audioBefore).toBeLessThanOrEqual(1);
    const sentMs = carrier.audioBytes().byteLength / 8 - 400;
    expect(played).toBeGreaterThan(700);
    // The carrier had received far more than it played; the cut follows what it played (marks ≤ 250 ms apart).
    expect(sentMs - played).toBeGreaterThan(1000);
    expect(Math.abs(cut - played)).toBeLessThan(200);
    expect(counted.runs()).toBe(1);
    expect(service.violations).toEqual([]);
  }, 30_000);

  it("turns keypad digits into one typed turn, '#' ending the entry", async () => {
    await start();
    service.enqueue({ say: "Thanks for calling.", audioMs: 100 });
    carrier = await dialTwilio();
    await carrier.until(() => carrier!.marksEchoed.length > 0, "the greeting played");
    for (const digit of ["4", "5", "6", "7", "#"]) carrier.dtmf(digit);
    await carrier.until(() => service.messages.some((m) => m.message.type === "conversation.item.create"), "the typed turn");
    const item = service.messages.find((m) => m.message.type === "conversation.item.create")?.message.item as { role: string; content: { type: string; text: string }[] };
    expect(item).toMatchObject({ role: "user", content: [{ type: "input_text", text: "The caller pressed 4567" }] });
  }, 20_000);

  it("end_call hangs up after the goodbye was played: last mark echoed, stream closed 1000, the carrier asked to hang up", async () => {
    await start();
    service.enqueue({ say: "Thanks for calling.", audioMs: 100 });
    carrier = await dialTwilio({ playbackDelayMs: 300 });
    await carrier.until(() => carrier!.marksEchoed.length > 0 && carrier!.bufferedMs === 0, "the greeting played");
    service.enqueue({ toolCall: { name: "end_call", args: {} } }, { say: "Goodbye, have a nice day.", audioMs: 1200 });
    void service.userSays("that is all, bye");
    const closed = await carrier.closed;
    expect(closed.code).toBe(1000);
    expect(carrier.bufferedMs).toBe(0);
    expect(carrier.playedMs).toBeGreaterThanOrEqual(1200 + 100 - 40);
    const lastMark = carrier.marksReceived.at(-1);
    expect(carrier.marksEchoed.map((m) => m.name)).toContain(lastMark);
    await sleep(50);
    expect(hangUps).toMatchObject([{ carrier: "twilio", callId: carrier.callId }]);
  }, 20_000);

  it("a drain that reaches its deadline tells the caller in the model's voice, then hangs up once that was heard", async () => {
    await start();
    service.enqueue({ say: "Thanks for calling.", audioMs: 100 });
    carrier = await dialTwilio({ playbackDelayMs: 200 });
    await carrier.until(() => carrier!.marksEchoed.length > 0 && carrier!.bufferedMs === 0, "the greeting played");
    service.enqueue({ say: "Sorry, we have to end this call now.", audioMs: 800 });
    const draining = gateway.drain(100);
    const closed = await carrier.closed;
    await draining;
    expect(closed.code).toBe(1000);
    const notice = service.messages.filter((m) => m.message.type === "response.create").at(-1)?.message.response as { instructions?: string };
    expect(notice.instructions).toContain(DEFAULTS.shutdownPhrase);
    expect(carrier.playedMs).toBeGreaterThanOrEqual(100 + 800 - 40);
    expect(hangUps).toMatchObject([{ carrier: "twilio" }]);
  }, 20_000);

  it("a hang-up (stop) ends the session cleanly, with no error and no hang-up request", async () => {
    await start();
    service.enqueue({ say: "Thanks for calling.", audioMs: 100 });
    carrier = await FakeCarrier.dial({ url: streamUrl("telnyx"), dialect: "telnyx" });
    await carrier.until(() => gateway.sessions === 1 && carrier!.audio.length > 0, "the call started");
    carrier.hangUp();
    await carrier.until(() => gateway.sessions === 0, "the session ended");
    await sleep(50);
    expect(hangUps).toEqual([]);
    expect(service.openSockets()).toBe(0);
  }, 20_000);

  it("keeps the call going through malformed, unknown and oversized frames", async () => {
    await start();
    service.enqueue({ say: "Thanks for calling.", audioMs: 300 });
    carrier = await dialTwilio();
    carrier.sendRaw("{not json");
    carrier.sendRaw(Buffer.from([0, 1, 2, 3]), true);
    carrier.sendJson({ event: "media", streamSid: carrier.streamId, media: { track: "inbound", payload: "@@@@" } });
    carrier.sendJson({ event: "media", streamSid: carrier.streamId, media: { track: "inbound", payload: "A".repeat(2_000_000) } });
    carrier.sendJson({ event: "mark", streamSid: carrier.streamId, mark: { name: "not-ours" } });
    carrier.sendJson({ event: "gossip", streamSid: carrier.streamId });
    carrier.sendJson([1, 2, 3]);
    await carrier.until(() => carrier!.marksEchoed.length > 0 && carrier!.bufferedMs === 0, "the greeting played");
    expect(carrier.audioBytes().equals(rampG711(300))).toBe(true);
    expect(gateway.sessions).toBe(1);
  }, 20_000);
});
