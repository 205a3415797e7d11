// WS /v1/realtime, the conversation's history from the client's side: conversation.item.truncate
// after a barge-in cuts the reply's record to what the client played (the next model request
// holds only that), and its refusals. A pipeline agent on the vendor fakes, the openai package's client.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agent } from "../../src/manifest/index.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { speakFor } from "../helpers/realtime-audio.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";

let served: PipelineGateway;
let client: RealtimeTestClient | undefined;

beforeEach(async () => {
  served = await startPipelineGateway((fakes) => agent({ name: "phone", greeting: "Welcome to the shop.", ...fakes.providers }));
});

afterEach(async () => {
  client?.close();
  client = undefined;
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
    await speakFor(client, 100);
    stt.final("where is my order", { speechFinal: true });
    const first = await client.next("response.output_audio.delta", after);
    await sleep(1200);
    stt.speechStarted();
    stt.partial("wait a moment");
    await speakFor(client, 400);
    stt.partial("wait a moment please");
    const cut = await client.next("response.done", after);
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
