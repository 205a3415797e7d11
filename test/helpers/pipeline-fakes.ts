// The three vendor fakes a pipeline gateway test runs on (OpenAI-compatible LLM, Deepgram STT,
// Cartesia TTS), the agent fields that point at them, and the env keys they accept.
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
