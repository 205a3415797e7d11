// WS /v1/realtime, the conversation's history from the client's side: conversation.item.truncate
// after a barge-in cuts the reply's record to what the client played (the next model request
// holds only that), and its refusals. A pipeline agent on the vendor fakes, the openai package's
// client; and the Agents SDK's RealtimeSession, which sends the truncate on its own at a barge-in.
import { setTimeout as sleep } from "node:timers/promises";
import { RealtimeAgent, RealtimeSession } from "@openai/agents-realtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agent } from "../../src/manifest/index.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { bargeInOnAnswer, speakFor } from "../helpers/realtime-audio.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";
import { sdkEvents } from "../helpers/realtime-sdk.js";

let served: PipelineGateway;
let client: RealtimeTestClient | undefined;
let session: RealtimeSession | undefined;

beforeEach(async () => {
  served = await startPipelineGateway((fakes) => agent({ name: "phone", greeting: "Welcome to the shop.", ...fakes.providers }));
});

afterEach(async () => {
  client?.close();
  client = undefined;
  session?.close();
  session = undefined;
  await served.close();
});

/** The assistant text of a chat request's messages, in order. */
function assistantText(messages: readonly { readonly role: string; readonly content?: unknown }[]): string[] {
  return messages.filter((m) => m.role === "assistant" && typeof m.content === "string").map((m) => m.content as string);
}

const LONG = "Your order shipped on Friday, it is on the truck now, and it should reach you by Tuesday afternoon at the latest, weather permitting.";

describe("/v1/realtime conversation.item.truncate with a pipeline agent", () => {
  it("cuts the barged-in reply's record to the audio the client played: the next model request holds only that", async () => {
    const { stt, llm } = served.fakes;
    client = new RealtimeTestClient(served.port, "k");
    await client.next("response.done");

    llm.enqueue({ text: LONG });
    let after = client.events.length;
    const { first, cut } = await bargeInOnAnswer(client, stt, 1200, after);
    expect(cut.response.status).toBe("cancelled");

    // The client played the first 400 ms (the fake TTS speaks 20 ms a character: about "Your order shipped").
    client.rt.send({ type: "conversation.item.truncate", item_id: first.item_id, content_index: 0, audio_end_ms: 400 });
    const truncated = await client.next("conversation.item.truncated", after);
    expect(truncated).toMatchObject({ item_id: first.item_id, content_index: 0, audio_end_ms: 400 });

    llm.enqueue({ text: "Sure, take your time." });
    after = client.events.length;
    stt.final("wait a moment please", { speechFinal: true });
    await client.next("response.done", after);
    const request = llm.requests.at(-1);
    const said = assistantText(request?.messages ?? []);
    const interrupted = said.find((text) => text.endsWith("[interrupted]")) ?? "";
    expect(interrupted.startsWith("Your order")).toBe(true);
    // At most the words of 400 ms of audio: far less than the gateway's own estimate after 1.2 s.
    expect(interrupted.replace(" [interrupted]", "").length).toBeLessThanOrEqual(20);
    expect(client.errors).toEqual([]);
  }, 30_000);

  it("refuses a truncate of an unknown item, of a user item, and beyond the item's audio", async () => {
    const { stt, llm } = served.fakes;
    client = new RealtimeTestClient(served.port, "k");
    const greeting = await client.next("response.done");
    const greetingItem = greeting.response.output?.[0]?.id ?? "";

    client.rt.send({ type: "conversation.item.truncate", item_id: "item_nope", content_index: 0, audio_end_ms: 0 });
    client.rt.send({ type: "conversation.item.truncate", item_id: greetingItem, content_index: 0, audio_end_ms: 3_600_000 });
    client.rt.send({ type: "conversation.item.truncate", item_id: greetingItem, content_index: 1, audio_end_ms: 0 });
    llm.enqueue({ text: "Hello there." });
    const after = client.events.length;
    await speakFor(client, 100);
    stt.final("hi", { speechFinal: true });
    const committed = await client.next("input_audio_buffer.committed", after);
    client.rt.send({ type: "conversation.item.truncate", item_id: committed.item_id, content_index: 0, audio_end_ms: 0 });
    await client.next("response.done", after);
    // The greeting is no longer the latest reply.
    client.rt.send({ type: "conversation.item.truncate", item_id: greetingItem, content_index: 0, audio_end_ms: 0 });
    await sleep(200);
    expect(client.of("error").map((e) => [e.error.code, e.error.param])).toEqual([
      ["item_not_found", "item_id"],
      ["invalid_value", "audio_end_ms"],
      ["invalid_value", "content_index"],
      ["invalid_value", "item_id"],
      ["unsupported_value", "item_id"],
    ]);
    expect(client.of("conversation.item.truncated")).toEqual([]);
  }, 30_000);
});

describe("/v1/realtime barge-in from the Agents SDK's RealtimeSession (its own truncate)", () => {
  it("at speech_started the SDK truncates the item it plays, unasked: truncated, and the next model request holds only the words of the audio it played", async () => {
    const { stt, llm } = served.fakes;
    session = new RealtimeSession(new RealtimeAgent({ name: "front", instructions: "" }), { transport: "websocket" });
    const seen = sdkEvents(session);
    let interrupted = 0;
    session.on("audio_interrupted", () => interrupted++);
    await session.connect({ apiKey: "unused-with-auth-off", url: `ws://127.0.0.1:${served.port}/v1/realtime` });
    await seen.until(() => seen.of("response.done").length === 1, "the greeting", 20_000);

    llm.enqueue({ text: LONG });
    const frame = (): ArrayBuffer => new Int16Array(480).fill(2000).buffer;
    for (let i = 0; i < 5; i++) {
      session.sendAudio(frame());
      await sleep(20);
    }
    stt.final("where is my order", { speechFinal: true });
    await seen.until(() => seen.of("response.created").length === 2, "the reply", 20_000);
    const reply = seen.of("response.created")[1]?.response.id ?? "";
    // The SDK plays the reply from its first audio (the gateway sends up to 1.5 s ahead: its clock is the SDK's own).
    await seen.until(() => seen.audioBytes(reply) > 0, "the reply's audio", 20_000);
    await sleep(1200);
    stt.speechStarted();
    stt.partial("wait a moment");
    for (let i = 0; i < 20; i++) {
      session.sendAudio(frame());
      await sleep(20);
    }
    stt.partial("wait a moment please");
    await seen.until(() => seen.of("conversation.item.truncated").length === 1, "the SDK's truncate answered", 20_000);

    // Realtime's order at a barge-in: speech_started while the SDK still has the item it plays, then the cut response.
    const types = seen.types();
    const started = types.lastIndexOf("input_audio_buffer.speech_started");
    expect(started).toBeLessThan(types.lastIndexOf("response.output_audio.done"));
    const cut = seen.of("response.done").find((e) => e.response.id === reply);
    expect(cut?.response).toMatchObject({ status: "cancelled", status_details: { reason: "turn_detected" } });
    expect(interrupted).toBe(1);
    const truncated = seen.of("conversation.item.truncated")[0];
    const item = seen.of("response.output_audio.delta").find((e) => e.response_id === reply)?.item_id;
    expect(truncated).toMatchObject({ item_id: item, content_index: 0 });
    // The SDK's audio_end_ms: the time since the reply's first audio, at most the audio it was handed.
    const heardMs = truncated?.audio_end_ms ?? 0;
    expect(heardMs).toBeGreaterThanOrEqual(1000);
    expect(heardMs).toBeLessThanOrEqual((seen.audioBytes(reply) / 48_000) * 1000);

    llm.enqueue({ text: "Sure, take your time." });
    stt.final("wait a moment please", { speechFinal: true });
    await seen.until(() => seen.of("response.done").length === 3, "the answer to the interruption", 20_000);
    const said = assistantText(llm.requests.at(-1)?.messages ?? []);
    const record = said.find((text) => text.endsWith("[interrupted]")) ?? "";
    const heard = record.replace(" [interrupted]", "");
    expect(heard.startsWith("Your order")).toBe(true);
    expect(LONG.startsWith(heard)).toBe(true);
    // The fake TTS speaks 20 ms a character: no word past the audio_end_ms the SDK sent.
    expect(heard.length).toBeLessThanOrEqual(heardMs / 20);
    // The SDK's response.cancel at speech_started (the response the barge-in ended) is no error.
    expect(seen.of("error")).toEqual([]);
    expect(seen.errors).toEqual([]);
  }, 60_000);
});
