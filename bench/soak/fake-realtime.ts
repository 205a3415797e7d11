/**
 * The soak's speech-to-speech service: the loopback fake OpenAI Realtime service
 * (fakes/openai-realtime.ts) with no history kept, so it runs as long as the soak does, and audio
 * out in real time (a 20 ms delta every 20 ms). This file plays the service's VAD over the
 * caller's voice, on every connection at once:
 *
 * - Loud audio (PCM16 24 kHz or μ-law 8 kHz, as the session asked) starts speech
 *   (`speech_started`; an in-band response still running is cancelled, as `interrupt_response`
 *   asks — a barge-in), 120 ms of quiet ends it (`speech_stopped`, `committed`, the
 *   transcription, then a response).
 * - A turn with at least 350 ms of speech gets a `lookup_order` function call; the others a spoken
 *   reply of 800 ms, as does an in-band `response.create` (the reply after a tool result).
 *   Out-of-band responses (the greeting, tool lines) speak for 500 ms.
 *
 * What the real service would refuse is counted in `violations` (the fake's, first 50).
 */
import { decodeMulaw } from "../../src/audio/g711.js";
import { startFakeOpenAiRealtime, type FakeRealtimeConnection } from "../../fakes/openai-realtime.js";

const FRAME_MS = 20;
const QUIET_END_MS = 120;
const TOOL_SPEECH_MS = 350;
const REPLY_MS = 800;
const OUT_OF_BAND_MS = 500;
/** Mean absolute sample above this is speech. */
const LOUD = 1000;

/** The VAD's state on one connection. */
interface Voice {
  speaking: boolean;
  speechMs: number;
  quietMs: number;
}

export interface SoakRealtime {
  /** ws://127.0.0.1:PORT/v1/realtime */
  readonly url: string;
  readonly stats: { connections: number; turns: number; toolCalls: number; interrupted: number };
  /** Protocol mistakes by the gateway (the real service would answer with an error); at most 50 kept. */
  readonly violations: string[];
  open(): number;
  close(): Promise<void>;
}

/** `ms` of words for a spoken reply's transcript: one every 100 ms. */
const wordsFor = (ms: number): string => "word ".repeat(Math.ceil(ms / 100)).trim();

/** Is the session's input (or output) μ-law? From the merged session. */
function isMulaw(session: Record<string, unknown>, side: "input" | "output"): boolean {
  const audio = session.audio as Record<string, { format?: { type?: string } } | undefined> | undefined;
  return audio?.[side]?.format?.type === "audio/pcmu";
}

function loudness(audio: Buffer, mulaw: boolean): number {
  if (mulaw) {
    const samples = decodeMulaw(audio);
    let sum = 0;
    for (const s of samples) sum += Math.abs(s);
    return samples.length === 0 ? 0 : sum / samples.length;
  }
  let sum = 0;
  let n = 0;
  for (let i = 0; i + 1 < audio.length; i += 8, n++) sum += Math.abs(audio.readInt16LE(i));
  return n === 0 ? 0 : sum / n;
}

export async function startSoakRealtime(apiKey = "test-key"): Promise<SoakRealtime> {
  const stats = {
    get connections(): number {
      return fake.connections.length;
    },
    turns: 0,
    toolCalls: 0,
    interrupted: 0,
  };
  const voices = new Map<number, Voice>();
  /** Speech length of the turn each connection's automatic response answers. */
  const lastTurnMs = new Map<number, number>();

  const hear = (connection: FakeRealtimeConnection, audio: Buffer): void => {
    let voice = voices.get(connection.index);
    if (voice === undefined) {
      voice = { speaking: false, speechMs: 0, quietMs: 0 };
      voices.set(connection.index, voice);
    }
    const mulaw = isMulaw(connection.session, "input");
    const ms = mulaw ? audio.length / 8 : audio.length / 48;
    const loud = loudness(audio, mulaw) > LOUD;
    if (!voice.speaking) {
      if (!loud) return;
      Object.assign(voice, { speaking: true, speechMs: ms, quietMs: 0 });
      const interrupt = (connection.session.audio as { input?: { turn_detection?: { interrupt_response?: boolean } } } | undefined)?.input?.turn_detection?.interrupt_response !== false;
      if (connection.responding && interrupt) stats.interrupted += 1;
      fake.speechStarted(connection);
      return;
    }
    if (loud) {
      voice.speechMs += voice.quietMs + ms;
      voice.quietMs = 0;
      return;
    }
    voice.quietMs += ms;
    if (voice.quietMs < QUIET_END_MS) return;
    voice.speaking = false;
    stats.turns += 1;
    lastTurnMs.set(connection.index, voice.speechMs);
    fake.speechStopped("where is my order", connection).catch(() => undefined);
  };

  const fake = await startFakeOpenAiRealtime({
    apiKey,
    realTime: true,
    chunkMs: FRAME_MS,
    record: false,
    driver: {
      onAppend: hear,
      reply(connection, request) {
        if (request !== undefined) return { say: wordsFor(request.conversation === "none" ? OUT_OF_BAND_MS : REPLY_MS), audioMs: request.conversation === "none" ? OUT_OF_BAND_MS : REPLY_MS };
        // The service's own response to the caller's turn.
        const speechMs = lastTurnMs.get(connection.index) ?? 0;
        if (speechMs < TOOL_SPEECH_MS) return { say: wordsFor(REPLY_MS), audioMs: REPLY_MS };
        stats.toolCalls += 1;
        return { toolCall: { name: "lookup_order", args: { orderId: "A17" } } };
      },
    },
  });

  return {
    url: fake.url,
    stats,
    violations: fake.violations,
    open: () => fake.openSockets(),
    close: () => fake.close(),
  };
}
