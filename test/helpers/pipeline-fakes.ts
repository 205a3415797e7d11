// The three vendor fakes a pipeline gateway test runs on (OpenAI-compatible LLM, Deepgram STT,
// Cartesia TTS), the agent fields that point at them, and the env keys they accept.
import { silentLogger } from "../../src/log.js";
import type { Gateway, GatewayOptions } from "../../src/server/gateway-types.js";
import { createGateway } from "../../src/server/index.js";
import { startFakeCartesia, type FakeCartesia } from "../../fakes/cartesia.js";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "../../fakes/deepgram.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";

export interface PipelineFakes {
  readonly llm: FakeOpenAiServer;
  readonly stt: FakeDeepgram;
  readonly tts: FakeCartesia;
  /** `stt`, `tts`, `llm` for `agent({...})`, plus the test-friendly settings the suites share. */
  readonly providers: Record<string, unknown>;
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

export async function startPipelineFakes(): Promise<PipelineFakes> {
  const [llm, stt, tts] = await Promise.all([startFakeOpenAiServer(), startFakeDeepgram(), startFakeCartesia({ msPerChar: 20, chunkDelayMs: 5 })]);
  return {
    llm,
    stt,
    tts,
    providers: {
      stt: { kind: "deepgram", options: { url: stt.url } },
      tts: { kind: "cartesia", options: { url: tts.url, voice: "test-voice" } },
      llm: { kind: "openai-compatible", options: { baseURL: llm.url, model: "fake-model" } },
      maxRetries: 0,
      interruption: { minWords: 1, minDurationMs: 300 },
    },
    env: { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, CARTESIA_API_KEY: "test-key" },
    close: async () => {
      await Promise.all([llm.close(), stt.close(), tts.close()]);
    },
  };
}

/** A gateway serving a pipeline agent on the fakes, listening on loopback. */
export interface PipelineGateway {
  readonly fakes: PipelineFakes;
  readonly gateway: Gateway;
  /** The gateway's port on 127.0.0.1. */
  readonly port: number;
  /** The gateway's client socket: ws://127.0.0.1:PORT/websocket */
  readonly url: string;
  /** Closes the gateway, then the fakes. */
  close(): Promise<void>;
}

/**
 * The fakes, and a gateway on them (silent logs, no process metrics, the fakes' keys) serving the
 * agent `define` builds from the fakes' provider fields; `options` adds gateway options.
 */
export async function startPipelineGateway(define: (fakes: PipelineFakes) => GatewayOptions["agent"], options: Partial<GatewayOptions> = {}): Promise<PipelineGateway> {
  const fakes = await startPipelineFakes();
  const gateway = createGateway({ agent: define(fakes), logger: silentLogger, env: fakes.env, processMetrics: false, ...options });
  const { port } = await gateway.listen(0, "127.0.0.1");
  return {
    fakes,
    gateway,
    port,
    url: `ws://127.0.0.1:${port}/websocket`,
    close: async () => {
      await gateway.close();
      await fakes.close();
    },
  };
}
