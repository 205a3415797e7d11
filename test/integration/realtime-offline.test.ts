// WS /v1/realtime in front of a pipeline agent on the offline stack (pocketsphinx, the scripted
// model, flite), driven by clients nobody here wrote: the Agents SDK's RealtimeSession and the
// `openai` package's Realtime client. Spoken input is flite's own voice (fixtures/audio), sent as a
// Realtime client sends a microphone: 24 kHz PCM16 appends in real time. Timeouts are generous and
// nothing is timed: pocketsphinx and flite share a loaded machine.
import { setTimeout as sleep } from "node:timers/promises";
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import { Type } from "@sinclair/typebox";
import { RealtimeAgent, RealtimeSession, tool as sdkTool } from "@openai/agents-realtime";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { silentLogger } from "../../src/log.js";
import { agent, clientTool, OFFLINE_PROVIDERS, withTools } from "../../src/manifest/index.js";
import { scriptedModel } from "../../src/pipeline/providers/llm/scripted.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { POCKETSPHINX, POCKETSPHINX_MISSING, speak, spoken } from "../helpers/offline-speech.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";
import { sdkEvents } from "../helpers/realtime-sdk.js";

if (!POCKETSPHINX) console.warn(`skipped: ${POCKETSPHINX_MISSING}`);

/** The scripted model's long reply (about 15 s of flite's voice), for speech over it. */
const STORY = "Once upon a time a parcel left the warehouse on a Monday. It crossed three cities by truck, waited a night at a depot, and was loaded onto a small van at dawn. The driver sang along to the radio all the way down the coast road, and the parcel arrived on Friday.";

/**
 * The scripted model's rules (docs/config.md "offline.json"): pocketsphinx hears order-status.wav as
 * "where is my yard area one two three four", pin.wav as "nine ten is four five six seven".
 */
const SCRIPT = {
  fallback: "I did not catch that.",
  rules: [
    { when: "\\b(order|yard|where is my)\\b", call: { tool: "lookup_order", args: { orderId: "A1234" } }, then: "{result}" },
    { when: "\\bfive six seven\\b", call: { tool: "check_pin", args: { pin: "4567" } }, then: "{result}" },
    { when: "\\bstop\\b", say: "All right, I will stop there." },
    { when: "\\bstory\\b", say: STORY },
    { when: "\\bhello\\b", say: "Hello! Ask me where your order is." },
  ],
};

let counted = countedLookupOrder();

/** The agent's clientTool: a Realtime client that declares it runs it (docs/realtime.md "Client tools"). */
const checkPin = clientTool({ description: "Check the caller's PIN", parameters: Type.Object({ pin: Type.String() }) });

let gateway: Gateway | undefined;
let session: RealtimeSession | undefined;
let client: RealtimeTestClient | undefined;

afterEach(async () => {
  session?.close();
  session = undefined;
  client?.close();
  client = undefined;
  await gateway?.close();
  gateway = undefined;
});

/** How the barge-in tests watch the scripted model: each prompt it is called with, and a call held until `answers` says. */
interface Watch {
  readonly prompts: LanguageModelV4Prompt[];
  /** Resolves when the model may answer `prompt`. */
  readonly answers: (prompt: LanguageModelV4Prompt) => Promise<void>;
}

async function offlineGateway(watch?: Watch): Promise<number> {
  counted = countedLookupOrder();
  const def = withTools(agent({ name: "offline-shop", greeting: "", ...OFFLINE_PROVIDERS }), { lookup_order: counted.lookupOrder, check_pin: checkPin });
  const watched = watch === undefined ? {} : { resolveModel: () => watchedModel(watch) };
  gateway = createGateway({ agent: def, script: SCRIPT, offline: true, logger: silentLogger, env: {}, processMetrics: false, ...watched });
  return (await gateway.listen(0, "127.0.0.1")).port;
}

/** The scripted model on SCRIPT, watched: each call's prompt kept, its answer when `answers` resolves. */
function watchedModel({ prompts, answers }: Watch): ReturnType<typeof scriptedModel> {
  const model = scriptedModel(SCRIPT);
  return {
    ...model,
    doGenerate: async (call) => {
      prompts.push(call.prompt);
      await answers(call.prompt);
      return model.doGenerate(call);
    },
    doStream: async (call) => {
      prompts.push(call.prompt);
      await answers(call.prompt);
      return model.doStream(call);
    },
  };
}

/** The assistant texts of a prompt, in order. */
function assistantTexts(prompt: LanguageModelV4Prompt | undefined): string[] {
  return (prompt ?? []).flatMap((m) => (m.role === "assistant" ? m.content.flatMap((part) => (part.type === "text" ? [part.text] : [])) : []));
}

/** The barged-in story's record in a prompt: the words recorded as heard (`[interrupted]` after them), if the prompt holds one. */
function storyHeard(prompt: LanguageModelV4Prompt | undefined): string | undefined {
  return assistantTexts(prompt)
    .find((text) => text.endsWith("[interrupted]"))
    ?.replace(/\s*\[interrupted\]$/, "");
}

/**
 * Letters and digits a reply's record may hold for `ms` of flite's audio: the local TTS times a
 * sentence's words in proportion to their letters (src/pipeline/providers/tts/local-worker.ts), and
 * flite speaks well under 25 a second. A bound, not a measure: the whole story is over 200.
 */
const lettersWithin = (ms: number): number => ms / 40;
const letters = (text: string): number => text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;

describe.skipIf(!POCKETSPHINX)(`/v1/realtime with a pipeline agent on the offline stack${POCKETSPHINX ? "" : ` — skipped: ${POCKETSPHINX_MISSING}`}`, () => {
  it("from the Agents SDK: a spoken question answered through a server tool with its spoken start line, then a typed turn", async () => {
    const port = await offlineGateway();
    session = new RealtimeSession(new RealtimeAgent({ name: "front", instructions: "" }), { transport: "websocket" });
    const errors: unknown[] = [];
    session.on("error", (e) => errors.push(e));
    let audioBytes = 0;
    session.on("audio", (event) => {
      audioBytes += event.data.byteLength;
    });
    const raw: { type: string; response?: { status?: string } }[] = [];
    session.transport.on("*", (e: { type: string }) => raw.push(e));
    const responsesDone = (n: number) => raw.filter((e) => e.type === "response.done").length >= n;
    const until = async (done: () => boolean, what: string, ms: number): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await session.connect({ apiKey: "unused-with-auth-off", url: `ws://127.0.0.1:${port}/v1/realtime` });

    const messages = () => session?.history.flatMap((item) => (item.type === "message" ? [item] : [])) ?? [];
    /** The transcript of the `n`-th message (the SDK's history: it retrieves spoken items once transcribed). */
    const transcript = (n: number): string => {
      const part = messages()[n]?.content[0];
      return part?.type === "input_audio" || part?.type === "output_audio" ? (part.transcript ?? "") : part?.type === "input_text" ? part.text : "";
    };

    await speak(spoken("order-status.wav"), (pcm) => session?.sendAudio(pcm));
    await until(() => responsesDone(1) && transcript(1).includes("shipped on Friday"), "the spoken answer", 60_000);
    expect(messages().map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(transcript(0)).toMatch(/where is my/);
    expect(transcript(1)).toContain("Let me check that order.");
    expect(transcript(1)).toContain("Order A1234 shipped on Friday.");
    expect(counted.runs()).toBe(1);
    expect(raw.some((e) => e.type === "input_audio_buffer.speech_started")).toBe(true);
    expect(raw.filter((e) => e.type.includes("function_call"))).toEqual([]);
    const spokenBytes = audioBytes;
    expect(spokenBytes).toBeGreaterThan(24_000 * 2); // more than a second of 24 kHz PCM16: both lines, in flite's voice

    session.sendMessage("hello");
    await until(() => responsesDone(2) && transcript(3) !== "", "the typed turn's answer", 60_000);
    expect(messages().slice(2).map((m) => [m.role, transcript(messages().indexOf(m))])).toEqual([
      ["user", "hello"],
      ["assistant", "Hello! Ask me where your order is."],
    ]);
    expect(audioBytes).toBeGreaterThan(spokenBytes);
    expect(errors).toEqual([]);
  }, 150_000);

  it("from the openai client: a typed turn, and speech over its reply that barges in (turn_detected) and is answered, with its usage", async () => {
    const port = await offlineGateway();
    client = new RealtimeTestClient(port, "k");
    await client.next("session.created");
    client.rt.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "tell me a story" }] } });
    client.rt.send({ type: "response.create" });
    const firstAudio = await client.next("response.output_audio.delta");
    const storyId = firstAudio.response_id;
    // Speak over the story while it plays (about 15 s of flite's voice).
    await speak(spoken("stop.wav"), (pcm) => client?.rt.send({ type: "input_audio_buffer.append", audio: Buffer.from(pcm).toString("base64") }));
    const cut = await waitFor(client, (e) => e.type === "response.done" && e.response.id === storyId, 60_000);
    expect(cut.type === "response.done" && cut.response).toMatchObject({ status: "cancelled", status_details: { type: "cancelled", reason: "turn_detected" } });
    // The session held the utterance's start while the story was audible, and releases it at the barge-in (docs/protocol.md):
    // speech_started comes before the cut response's done events, as the API sends them (docs/realtime.md "Barge-in").
    const started = client.events.findIndex((e) => e.type === "input_audio_buffer.speech_started");
    const audioDone = client.events.findIndex((e) => e.type === "response.output_audio.done" && e.response_id === storyId);
    expect(started).toBeGreaterThan(-1);
    expect(started).toBeLessThan(audioDone);

    // The interruption is the user's next turn: heard, committed, and answered.
    const heard = await waitFor(client, (e) => e.type === "conversation.item.input_audio_transcription.completed", 60_000);
    expect(heard.type === "conversation.item.input_audio_transcription.completed" && heard.transcript).toMatch(/\bstop\b/);
    const answered = await waitFor(client, (e) => e.type === "response.done" && e.response.id !== storyId, 60_000);
    expect(answered.type === "response.done" && answered.response).toMatchObject({ status: "completed", output: [{ content: [{ type: "output_audio", transcript: "All right, I will stop there." }] }] });
    // The scripted model reports its usage (words as tokens): response.done carries it.
    const usage = answered.type === "response.done" ? answered.response.usage : undefined;
    expect(usage?.total_tokens).toBeGreaterThan(0);
    expect(usage?.total_tokens).toBe((usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0));
    expect(client.errors).toEqual([]);
  }, 150_000);

  it("from the Agents SDK: a spoken question the scripted model answers through a clientTool the SDK's agent declares; the SDK runs it, and the spoken reply uses its result", async () => {
    const port = await offlineGateway();
    const runs: string[] = [];
    const pin = sdkTool({
      name: "check_pin",
      description: "Check the caller's PIN",
      parameters: z.object({ pin: z.string() }),
      execute: ({ pin: value }) => {
        runs.push(value);
        return "Your pin is correct.";
      },
    });
    session = new RealtimeSession(new RealtimeAgent({ name: "front", instructions: "", tools: [pin] }), { transport: "websocket" });
    const seen = sdkEvents(session);
    await session.connect({ apiKey: "unused-with-auth-off", url: `ws://127.0.0.1:${port}/v1/realtime` });
    // The SDK declares its tools in its first session.update: the gateway shows the agent's check_pin.
    await seen.until(() => seen.of("session.updated").some((e) => JSON.stringify(e.session).includes("check_pin")), "the SDK's tools declared", 30_000);

    await speak(spoken("pin.wav"), (pcm) => session?.sendAudio(pcm));
    const said = (): string => seen.of("response.output_audio_transcript.done").map((e) => e.transcript).join(" ");
    await seen.until(() => said().includes("Your pin is correct."), "the spoken reply", 90_000);
    expect(runs).toEqual(["4567"]);
    expect(seen.of("response.function_call_arguments.done")).toMatchObject([{ name: "check_pin", arguments: JSON.stringify({ pin: "4567" }) }]);
    const items = session.history.map((item) => (item.type === "message" ? item.role : item.type));
    expect(items).toEqual(["user", "function_call", "assistant"]);
    expect(session.history[1]).toMatchObject({ type: "function_call", name: "check_pin", output: "Your pin is correct." });
    // The reply is spoken in flite's voice: its own response's audio.
    const reply = seen.of("response.output_audio_transcript.done").find((e) => e.transcript === "Your pin is correct.");
    expect(seen.audioBytes(reply?.response_id)).toBeGreaterThan(24_000); // over half a second of 24 kHz PCM16
    expect(seen.of("error")).toEqual([]);
    expect(seen.errors).toEqual([]);
  }, 150_000);

  it("from the Agents SDK: speech over a typed turn's reply barges in, the SDK truncates the item it plays on its own, and the next model request holds only what it played", async () => {
    const prompts: LanguageModelV4Prompt[] = [];
    // The model answers at once: the interruption's answer starts before the SDK's truncate arrives, and the truncate still cuts the story
    // (the latest reply is the latest heard: docs/realtime.md "Truncating a reply"), not the answer.
    const port = await offlineGateway({ prompts, answers: () => Promise.resolve() });
    session = new RealtimeSession(new RealtimeAgent({ name: "front", instructions: "" }), { transport: "websocket" });
    const seen = sdkEvents(session);
    let interrupted = 0;
    session.on("audio_interrupted", () => interrupted++);
    await session.connect({ apiKey: "unused-with-auth-off", url: `ws://127.0.0.1:${port}/v1/realtime` });

    session.sendMessage("tell me a story");
    await seen.until(() => seen.of("response.output_audio.delta").length > 0, "the story's audio", 60_000);
    const story = seen.of("response.output_audio.delta")[0];
    // The SDK plays the story from its first audio; speech over it a second and a half in.
    await sleep(1500);
    await speak(spoken("stop.wav"), (pcm) => session?.sendAudio(pcm));
    await seen.until(() => seen.of("conversation.item.truncated").length > 0, "the SDK's truncate answered", 60_000);

    // Realtime's order at a barge-in: speech_started while the SDK has the item it plays, then the cut response.
    const types = seen.types();
    expect(types.indexOf("input_audio_buffer.speech_started")).toBeLessThan(types.indexOf("response.output_audio.done"));
    expect(seen.of("response.done")[0]?.response).toMatchObject({ id: story?.response_id, status: "cancelled", status_details: { reason: "turn_detected" } });
    expect(interrupted).toBe(1);
    const truncated = seen.of("conversation.item.truncated")[0];
    expect(truncated).toMatchObject({ item_id: story?.item_id, content_index: 0 });
    // The SDK's audio_end_ms: the time since the story's first audio, at most the audio it was handed.
    const playedMs = truncated?.audio_end_ms ?? 0;
    expect(playedMs).toBeGreaterThanOrEqual(1500);
    expect(playedMs).toBeLessThanOrEqual((seen.audioBytes(story?.response_id) / 48_000) * 1000);

    // The interruption is answered; then a typed turn, whose model request holds the story as the SDK played it.
    const answer = (): boolean => seen.of("response.done").some((e) => e.response.status === "completed");
    await seen.until(answer, "the interruption answered", 60_000);
    expect(seen.of("response.output_audio_transcript.done").at(-1)?.transcript).toBe("All right, I will stop there.");
    const estimate = storyHeard(prompts.at(-1));
    session.sendMessage("hello");
    await seen.until(() => seen.of("response.done").filter((e) => e.response.status === "completed").length === 2, "the typed turn's answer", 60_000);
    const heard = storyHeard(prompts.at(-1));
    expect(estimate).toBeDefined();
    expect(heard).toBeDefined();
    expect(STORY.startsWith(heard ?? "-")).toBe(true);
    expect(letters(heard ?? "")).toBeLessThanOrEqual(Math.min(letters(estimate ?? ""), lettersWithin(playedMs)));
    expect(letters(heard ?? "")).toBeLessThan(letters(STORY));
    // The answer to the interruption, heard whole, is recorded whole: the truncate did not land on it.
    expect(assistantTexts(prompts.at(-1))).toContain("All right, I will stop there.");
    // The SDK's response.cancel at speech_started (the response the barge-in ended) is no error.
    expect(seen.of("error")).toEqual([]);
    expect(seen.errors).toEqual([]);
  }, 150_000);
});

/** The first event (seen or to come) that `match` accepts; fails after `ms`. */
async function waitFor(rt: RealtimeTestClient, match: (e: RealtimeTestClient["events"][number]) => boolean, ms: number): Promise<RealtimeTestClient["events"][number]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const seen = rt.events.find(match);
    if (seen !== undefined) return seen;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms; events: ${rt.types().join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
