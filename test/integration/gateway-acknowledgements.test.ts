// Acknowledgements and interrupt phrases (docs/config.md `interruption`) in a pipeline session over
// real sockets: the vendors' fakes (Deepgram STT, Cartesia TTS, an OpenAI-compatible LLM).
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agent } from "../../src/manifest/index.js";
import { startPipelineGateway, type PipelineGateway } from "../helpers/pipeline-fakes.js";
import { connect, type TestClient } from "../helpers/ws-client.js";

/** ≈ 5 s at the fake Cartesia's 20 ms per character. */
const LONG_REPLY =
  "Your order A17 left our warehouse on Friday morning, it was handed to the courier that afternoon, it is on a truck heading to your city now, and the courier expects to deliver it by Tuesday afternoon, so please keep an eye out for a text message.";

let served: PipelineGateway;
let client: TestClient | undefined;

beforeEach(async () => {
  // minWords 3: a lone "stop" can only cut the agent as an interrupt phrase.
  served = await startPipelineGateway((fakes) => agent({ name: "phone", greeting: "", ...fakes.providers, interruption: { minWords: 3, minDurationMs: 300 } }));
});

afterEach(async () => {
  client?.close();
  await served.close();
});

/** A 20 ms frame of the caller's (silent) mic. */
const FRAME = Buffer.alloc(640);

describe("speech over an audible reply, through the gateway", () => {
  it("'Uh-huh.' neither interrupts nor becomes a turn; 'stop' then cuts the reply at once, below minWords", async () => {
    const { llm, stt } = served.fakes;
    const { port } = served;
    client = await connect(`ws://127.0.0.1:${port}/websocket`);
    const mic = setInterval(() => client?.ws.send(FRAME), 20);
    try {
      llm.enqueue({ text: LONG_REPLY });
      // The session's STT socket is open (a loaded machine may take longer than the greeting does).
      await stt.waitForConnection(1, 10_000);
      await sleep(200);
      stt.speechStarted();
      stt.final("where is my order A17", { speechFinal: true });
      await client.next("agent-transcript.updated");
      await sleep(900); // the reply is being heard

      const ackFrom = client.events.length;
      stt.speechStarted();
      stt.partial("uh huh");
      await sleep(400); // past minDurationMs
      stt.final("Uh-huh.", { speechFinal: true });
      await sleep(600);
      const afterAck = client.events.slice(ackFrom).map((e) => e.type);
      expect(afterAck).not.toContain("reply.cancelled");
      expect(afterAck).not.toContain("speech.started");
      expect(afterAck).not.toContain("user-transcript.updated");
      expect(afterAck).not.toContain("user-transcript.committed");

      stt.speechStarted();
      stt.partial("stop");
      const cancelled = await client.next("reply.cancelled");
      expect(cancelled.type).toBe("reply.cancelled");
      llm.enqueue({ text: "Sure, I'll stop there." });
      stt.final("stop", { speechFinal: true });
      await client.next("reply.completed", client.events.indexOf(cancelled));

      expect(client.of("user-transcript.committed").map((e) => e.text)).toEqual(["where is my order A17", "stop"]);
      // The model never saw the acknowledgement: its history has the two turns only.
      const users = llm.requests.at(-1)?.messages.filter((m) => m.role === "user").map((m) => String(m.content));
      expect(users).toEqual(["where is my order A17", "stop"]);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/^switchboard_acknowledgements_total\{mode="pipeline"\} 1$/m);
      expect(metrics).toMatch(/^switchboard_barge_ins_total\{mode="pipeline"\} 1$/m);
    } finally {
      clearInterval(mic);
    }
  }, 30_000);
});
