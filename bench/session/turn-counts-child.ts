/**
 * One counted process of `bench:turn-counts` (bench/session/turn-counts.ts), run by it under
 * cachegrind as plain JavaScript. Arguments: `sessions:rounds`, the URL of a build's `dist/`, the
 * mode (`s2s` or `pipeline`), and `alloc` to sample what the counted rounds allocate instead
 * (bench/shared/allocation.ts: printed as JSON, the last line of output; run outside cachegrind).
 *
 * `sessions` sessions, as a deployed gateway runs them (logs at info written nowhere, its
 * Prometheus metrics, one in-memory session store for all), each on a link that, like a
 * carrier's, takes events without stamping or keeping them (`CallLink`), under virtual time:
 * - s2s: the package's scripted service (testing/fake-s2s.ts). A round is three turns of every
 *   session, as bench:telephony's callers take them: the caller speaks (speech started and
 *   stopped, a final transcript), a reply of 1 s of audio (one chunk) starts; two replies play
 *   out, the third is barged in on 500 ms into it.
 * - pipeline: the package's STT and TTS fakes (testing/fake-speech.ts) and a model that streams
 *   its reply at once through the provider interface (testing/streaming-model.ts, the call the
 *   gateway makes to a vendor's model). The caller speaks 600 ms (speech started, a partial of
 *   three words, 300 ms later the whole utterance as a partial and a final); the reply is 1 s of
 *   TTS audio, paced to the link. Two replies play out; the caller speaks over the third 200 ms
 *   into it, and that speech (the next round's first turn) cuts it once it has lasted the
 *   default barge-in's 500 ms.
 * Warm-up rounds (the JIT's work), the heap collected, then `rounds` rounds. Imports only node
 * builtins, the allocation sampler and the build.
 */
import { sampleAllocations } from "../shared/allocation.js";
import type * as ClockModule from "../../src/clock.js";
import type * as LogModule from "../../src/log.js";
import type * as ManifestModule from "../../src/manifest/index.js";
import type * as MetricsModule from "../../src/server/metrics.js";
import type * as SessionModule from "../../src/session/session.js";
import type { SessionDeps } from "../../src/session/session-deps.js";
import type * as StoreModule from "../../src/session/store.js";
import type * as FakeModule from "../../src/testing/fake-s2s.js";
import type * as FakeSpeechModule from "../../src/testing/fake-speech.js";
import type * as StreamingModelModule from "../../src/testing/streaming-model.js";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { ClientLink, ConnectionHandler } from "../../src/transport/client-connection.js";

/** A reply's audio, and where in it the caller barges in (ms): bench/telephony/protocol.ts's script. */
const REPLY_MS = 1000;
const BARGE_AT_MS = 500;
/** The caller speaks this long; after a reply that played out, this long passes (past the 750 ms audible grace). */
const USER_MS = 300;
const GAP_MS = 1500;
/** Pipeline: the caller's words, half of them heard at each partial (ms apart); the reply, spoken at 25 ms a character (1 s). */
const CALLER_WORDS = ["where is my", "where is my order"] as const;
const PARTIAL_GAP_MS = 300;
const REPLY_TEXT = "It shipped on Friday and arrives Monday.";
/** Pipeline: into its third reply the caller starts speaking (ms); its speech cuts the reply at the default 500 ms barge-in. */
const SPEAK_OVER_AT_MS = 200;
/**
 * Rounds before the counted ones (12,000 turns at 50 sessions): the JIT optimizes a turn's code
 * over the first few thousand turns, and its work is not a turn's. Each session also passes the
 * points a long call passes once: its transcript at the cap (200 lines, turn 100) and the first
 * compaction of its list (turn 200, src/snapshot-list.ts), where V8 re-optimizes what inlined it.
 */
const WARM_UP_ROUNDS = 80;
/** A reply's audio as the scripted service speaks it (24 kHz PCM16), made once: what the harness allocates is not the gateway's. */
const REPLY_AUDIO = new Uint8Array(48 * REPLY_MS);

async function load(root: URL) {
  const at = (path: string): string => new URL(path, root).href;
  const [clock, session, fake, speech, model, store, metrics, manifest, log] = await Promise.all([
    import(at("clock.js")) as Promise<typeof ClockModule>,
    import(at("session/session.js")) as Promise<typeof SessionModule>,
    import(at("testing/fake-s2s.js")) as Promise<typeof FakeModule>,
    import(at("testing/fake-speech.js")) as Promise<typeof FakeSpeechModule>,
    import(at("testing/streaming-model.js")) as Promise<typeof StreamingModelModule>,
    import(at("session/store.js")) as Promise<typeof StoreModule>,
    import(at("server/metrics.js")) as Promise<typeof MetricsModule>,
    import(at("manifest/index.js")) as Promise<typeof ManifestModule>,
    import(at("log.js")) as Promise<typeof LogModule>,
  ]);
  return { ...clock, ...session, ...fake, ...speech, ...model, ...store, ...metrics, ...manifest, ...log };
}

/**
 * The session's link, as a carrier's is to it: it takes the events that move audio and returns
 * nothing (no event is stamped or kept), and counts the audio. The package's MemoryLink stamps
 * and keeps every event, work a carrier call does not do and this count should not hold.
 */
class CallLink implements ClientLink {
  readonly open = true;
  readonly ready = Promise.resolve({ audioFormat: "pcm16" as const, sampleRate: 16_000, ttsSampleRate: 24_000 });
  readonly hungUp = new Promise<void>(() => {});
  readonly playbackRate = 24_000;
  handler: ConnectionHandler | undefined;
  audioBytes = 0;
  /** Shows its caller no events, as a carrier's link (the session then builds no transcript snapshot). */
  shows(): boolean {
    return false;
  }
  emit(): undefined {
    return undefined;
  }
  audio(chunk: Uint8Array): void {
    this.audioBytes += chunk.byteLength;
  }
  close(): void {}
  attach(handler: ConnectionHandler): void {
    this.handler = handler;
  }
  useAudio(): void {}
}

type Loaded = Awaited<ReturnType<typeof load>>;

/** What every session of a process shares, as one gateway's do. */
interface Shared {
  readonly m: Loaded;
  readonly clock: ClockModule.VirtualClock;
  readonly metrics: MetricsModule.GatewayMetrics;
  readonly logger: LogModule.Logger;
  readonly store: StoreModule.MemorySessionStore;
}

/** A session as a gateway opens it for a carrier's call (`mode`: its providers), started. */
async function startSession(shared: Shared, index: number, mode: "s2s" | "pipeline", parts: Pick<SessionDeps, "agent" | "resolveModel" | "s2s" | "voice">): Promise<CallLink> {
  const link = new CallLink();
  const session = new shared.m.Session({
    ...parts,
    link,
    clock: shared.clock,
    log: shared.logger.child({ sessionId: `bench-${index}`, agent: parts.agent.def.name, mode }),
    metrics: shared.metrics,
    store: shared.store,
    transport: "twilio",
  });
  await session.start();
  return link;
}

/** s2s: `sessions` sessions on the scripted service; a round of three turns (module comment). */
async function s2sRound(shared: Shared, sessions: number): Promise<() => Promise<void>> {
  const { m, clock } = shared;
  const def = m.agent({ name: "bench-turns", greeting: "", s2s: { kind: "openai-realtime", options: {} } });
  const agent = { def, config: m.toAgentConfig(def) };
  const fakes: FakeModule.FakeS2s[] = [];
  for (let s = 0; s < sessions; s++) {
    const fake = new m.FakeS2s();
    await startSession(shared, s, "s2s", {
      agent,
      resolveModel: () => {
        throw new Error("an s2s session has no language model");
      },
      s2s: () => fake,
    });
    fakes.push(fake);
  }
  const turn = async (bargeIn: boolean): Promise<void> => {
    for (const fake of fakes) {
      fake.events.speechStarted();
      fake.events.speechStopped();
      fake.events.userTranscript("where is my order", { final: true });
    }
    await clock.advance(USER_MS);
    const replies = fakes.map((fake) => fake.start());
    fakes.forEach((fake, i) => {
      const info = { responseId: replies[i] ?? "", itemId: `item_${replies[i] ?? ""}` };
      fake.events.audio(REPLY_AUDIO, info);
      fake.events.agentTranscript("It shipped on Friday and arrives Monday.", info);
    });
    await clock.advance(BARGE_AT_MS);
    if (bargeIn) {
      for (const fake of fakes) fake.events.speechStarted();
      fakes.forEach((fake, i) => fake.done(replies[i] ?? "", "cancelled"));
      for (const fake of fakes) fake.events.speechStopped();
      await clock.advance(GAP_MS);
    } else {
      fakes.forEach((fake, i) => fake.done(replies[i] ?? ""));
      await clock.advance(REPLY_MS - BARGE_AT_MS + GAP_MS);
    }
  };
  return async () => {
    await turn(false);
    await turn(false);
    await turn(true);
  };
}

/** The reply as a vendor's model streams it: word-sized deltas, then `finish` (made once: the harness's work is not the gateway's). */
function replyParts(): LanguageModelV4StreamPart[] {
  const id = "text_0";
  const words = REPLY_TEXT.match(/\S+\s*/g) ?? [REPLY_TEXT];
  return [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id },
    ...words.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id, delta })),
    { type: "text-end", id },
    {
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: words.length, text: words.length, reasoning: undefined } },
    },
  ];
}

/** pipeline: `sessions` sessions on the STT and TTS fakes and a streaming model; a round of three turns (module comment). */
async function pipelineRound(shared: Shared, sessions: number): Promise<() => Promise<void>> {
  const { m, clock } = shared;
  const def = m.agent({ name: "bench-turns", greeting: "", stt: { kind: "deepgram", options: {} }, llm: { kind: "openai", options: { model: "gpt-4o-mini" } }, tts: { kind: "cartesia", options: {} } });
  const agent = { def, config: m.toAgentConfig(def) };
  const parts = replyParts();
  const model = m.streamingModel("bench", () =>
    Promise.resolve({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  );
  const tts = new m.FakeTts(clock, { msPerChar: REPLY_MS / REPLY_TEXT.length });
  const stts: FakeSpeechModule.FakeSttSession[] = [];
  for (let s = 0; s < sessions; s++) {
    const stt = new m.FakeStt();
    await startSession(shared, s, "pipeline", { agent, resolveModel: () => model, voice: { stt: () => stt, tts: () => tts, vad: (rate: number) => Promise.resolve(m.fakeVad(rate)) } });
    stts.push(stt.current);
  }
  const speak = async (): Promise<void> => {
    for (const stt of stts) stt.speechStarted();
    await clock.advance(PARTIAL_GAP_MS);
    for (const stt of stts) stt.partial(CALLER_WORDS[0]);
    await clock.advance(PARTIAL_GAP_MS);
    for (const stt of stts) {
      stt.partial(CALLER_WORDS[1]);
      stt.final(CALLER_WORDS[1]);
    }
  };
  return async () => {
    await speak();
    await clock.advance(REPLY_MS + GAP_MS);
    await speak();
    await clock.advance(REPLY_MS + GAP_MS);
    await speak();
    await clock.advance(SPEAK_OVER_AT_MS);
  };
}

const ROUNDS_OF = { s2s: s2sRound, pipeline: pipelineRound } as const;

async function main(spec: string, root: string | undefined, mode: string | undefined, sample: string | undefined): Promise<void> {
  const [sessionsText, roundsText] = spec.split(":");
  const sessions = Number(sessionsText);
  const rounds = Number(roundsText);
  if (root === undefined || !(sessions > 0) || !(rounds >= 0) || (mode !== "s2s" && mode !== "pipeline") || (sample !== undefined && sample !== "alloc")) throw new Error("usage: turn-counts-child sessions:rounds DIST_URL s2s|pipeline [alloc]");
  const m = await load(new URL(root));
  const clock = m.virtualClock(0);
  // One store for every session, as a gateway keeps (src/server/index.ts).
  const shared: Shared = { m, clock, metrics: new m.GatewayMetrics({ processMetrics: false }), logger: m.createLogger({ level: "info", destination: { write: () => {} } }), store: new m.MemorySessionStore(clock) };
  const round = await ROUNDS_OF[mode](shared, sessions);
  for (let r = 0; r < WARM_UP_ROUNDS; r++) await round();
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc");
  gc();
  const counted = async (): Promise<void> => {
    for (let r = 0; r < rounds; r++) await round();
  };
  if (sample === "alloc") console.log(JSON.stringify(await sampleAllocations(counted)));
  else await counted();
}

await main(process.argv[2] ?? "", process.argv[3], process.argv[4], process.argv[5]);
