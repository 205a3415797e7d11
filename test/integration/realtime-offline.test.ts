// WS /v1/realtime in front of a pipeline agent on the offline stack (pocketsphinx, the scripted
// model, flite), driven by clients nobody here wrote: the Agents SDK's RealtimeSession and the
// `openai` package's Realtime client. Spoken input is flite's own voice (fixtures/audio), sent as a
// Realtime client sends a microphone: 24 kHz PCM16 appends in real time. Timeouts are generous and
// nothing is timed: pocketsphinx and flite share a loaded machine.
import { RealtimeAgent, RealtimeSession } from "@openai/agents-realtime";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, OFFLINE_PROVIDERS, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { POCKETSPHINX, POCKETSPHINX_MISSING, speak, spoken } from "../helpers/offline-speech.js";
import { countedLookupOrder } from "../helpers/order-tool.js";
import { RealtimeTestClient } from "../helpers/realtime-client.js";

if (!POCKETSPHINX) console.warn(`skipped: ${POCKETSPHINX_MISSING}`);

/** The scripted model's rules (docs/config.md "offline.json"): pocketsphinx hears order-status.wav as "where is my yard area one two three four". */
const SCRIPT = {
  fallback: "I did not catch that.",
  rules: [
    { when: "\\b(order|yard|where is my)\\b", call: { tool: "lookup_order", args: { orderId: "A1234" } }, then: "{result}" },
    { when: "\\bstop\\b", say: "All right, I will stop there." },
    { when: "\\bstory\\b", say: "Once upon a time a parcel left the warehouse on a Monday. It crossed three cities by truck, waited a night at a depot, and was loaded onto a small van at dawn. The driver sang along to the radio all the way down the coast road, and the parcel arrived on Friday." },
    { when: "\\bhello\\b", say: "Hello! Ask me where your order is." },
  ],
};

let counted = countedLookupOrder();

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

async function offlineGateway(): Promise<number> {
  counted = countedLookupOrder();
  const def = withTools(agent({ name: "offline-shop", greeting: "", ...OFFLINE_PROVIDERS }), { lookup_order: counted.lookupOrder });
  gateway = createGateway({ agent: def, script: SCRIPT, offline: true, logger: silentLogger, env: {}, processMetrics: false });
  return (await gateway.listen(0, "127.0.0.1")).port;
}

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
