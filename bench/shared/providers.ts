/**
 * Zero-latency speech and language providers for the bench, on the real clock. Each records
 * the moment the gateway handed it work (or the moment it handed work back), keyed by
 * (client, turn):
 *   t0  the fake STT's `final` is called (by the bench, on demand);
 *   t1  the model's `doStream` is called — the LLM request;
 *   t2  the fake TTS emits the first audio chunk of the reply.
 * Nothing waits: `final` is a function call, the model's whole reply is in its stream at once,
 * and the TTS answers `push` with PCM in the same call (20 ms per word, 24 kHz).
 */
import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { bytesForMs } from "../../src/audio/pcm.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import type { SttEvents, SttProvider, SttSession } from "../../src/pipeline/stt-port.js";
import { guardStream, type TtsProvider, type TtsSession, type TtsStream, type TtsStreamEvents } from "../../src/pipeline/tts-port.js";
import type { VoiceProviders } from "../../src/session/voice-runner.js";
import { parseUserLine, readMicFrame, replyLine, replyTag, userLine, type TurnMarks } from "./protocol.js";
import { lastUserText } from "../../src/pipeline/providers/llm/scripted.js";
import { streamingModel } from "../../src/testing/streaming-model.js";
import { gatewayModules, gatewaySource } from "./gateway-modules.js";
import { monoMs } from "./stats.js";

/** TTS output rate (Hz): the gateway's playback rate, so no resampling is measured. */
export const TTS_SAMPLE_RATE = 24000;
/** Audio per spoken word (ms). */
export const MS_PER_WORD = 20;
/** A partial transcript every this many speech frames (Deepgram sends interim results about every 100 ms). */
const FRAMES_PER_PARTIAL = 5;

/** Timestamps of every turn of one run, first write wins. */
export class Recorder {
  #marks = new Map<string, TurnMarks>();
  /** Replies whose text was not the one due for the session's turn (should stay 0). */
  mismatches = 0;

  mark(client: number, turn: number, field: "t0" | "t0Returned" | "t1" | "t2" | "t2Returned", at: number): void {
    const key = `${client}:${turn}`;
    let marks = this.#marks.get(key);
    if (marks === undefined) {
      marks = { client, turn };
      this.#marks.set(key, marks);
    }
    marks[field] ??= at;
  }

  /** Everything recorded so far; the recorder starts empty again. */
  take(): { readonly marks: TurnMarks[]; readonly mismatches: number } {
    const taken = { marks: [...this.#marks.values()], mismatches: this.mismatches };
    this.#marks = new Map();
    this.mismatches = 0;
    return taken;
  }
}

/** One session as the fakes see it: which client it serves, and which turn's reply is due. */
export class Line {
  readonly recorder: Recorder;
  client: number | undefined;
  /** The turn whose reply has not produced audio yet. */
  due: number | undefined;

  constructor(recorder: Recorder) {
    this.recorder = recorder;
  }
}

// ── TTS ─────────────────────────────────────────────────────────────────────────────────

/**
 * A TTS that speaks `MS_PER_WORD` of PCM per word, synchronously inside `push`. The first chunk
 * after a final is the reply's first audio: t2 is taken just before the audio callback, and
 * `t2Returned` when the callback returns (in the gateway that callback runs all the way to
 * `ws.send` when the pacer has nothing queued).
 */
export function benchTtsSession(line: Line): TtsSession {
  return {
    sampleRate: TTS_SAMPLE_RATE,
    stream: (events) => benchTtsStream(line, events),
    close: () => Promise.resolve(),
  };
}

function benchTtsStream(line: Line, events: TtsStreamEvents): TtsStream {
  const guard = guardStream(events);
  let offsetMs = 0;
  let text = "";
  let turn: number | undefined;
  return {
    push(piece) {
      text += piece;
      for (const word of piece.split(/\s+/)) {
        if (word === "" || !guard.open) continue;
        const pcm = new Uint8Array(bytesForMs(MS_PER_WORD, TTS_SAMPLE_RATE));
        guard.events.words([{ word, startMs: offsetMs, endMs: offsetMs + MS_PER_WORD }]);
        offsetMs += MS_PER_WORD;
        const client = line.client;
        if (line.due !== undefined && client !== undefined) {
          turn = line.due;
          line.due = undefined;
          line.recorder.mark(client, turn, "t2", monoMs());
          guard.events.audio(pcm);
          line.recorder.mark(client, turn, "t2Returned", monoMs());
        } else {
          guard.events.audio(pcm);
        }
      }
    },
    end() {
      if (turn !== undefined && line.client !== undefined && !text.trimStart().startsWith(replyTag(line.client, turn))) line.recorder.mismatches += 1;
      guard.events.done();
    },
    cancel() {
      guard.cancel();
    },
  };
}

// ── STT ─────────────────────────────────────────────────────────────────────────────────

/**
 * An STT with endpointing that "hears" the bench's tagged mic frames: it learns its client from
 * the first frame, reports speech start and a partial every 100 ms of speech frames, and says
 * `final` only when the bench calls `final(turn)`.
 */
class BenchSttSession implements SttSession {
  readonly endpointing = true;
  readonly droppedBytes = 0;
  readonly #line: Line;
  readonly #events: SttEvents;
  readonly #known: (line: Line, session: BenchSttSession) => void;
  readonly #forget: (line: Line) => void;
  #speechFrames = 0;
  #finalized = false;

  constructor(line: Line, events: SttEvents, known: (line: Line, session: BenchSttSession) => void, forget: (line: Line) => void) {
    this.#line = line;
    this.#events = events;
    this.#known = known;
    this.#forget = forget;
  }

  sendAudio(pcm: Uint8Array): void {
    const frame = readMicFrame(pcm);
    if (frame === undefined) return;
    if (this.#line.client === undefined) {
      this.#line.client = frame.client;
      this.#known(this.#line, this);
    }
    if (!frame.speech) {
      this.#finalized = false;
      return;
    }
    // The final comes over IPC, the audio over the socket: speech frames of the finalized utterance
    // can arrive after its final under load. They belong to it until the mic has gone quiet.
    if (this.#finalized) return;
    this.#speechFrames += 1;
    if (this.#speechFrames === 1) this.#events.speechStarted();
    if (this.#speechFrames % FRAMES_PER_PARTIAL === 0) this.#events.partial("where is my", {});
  }

  finalize(): void {}

  close(): Promise<void> {
    this.#forget(this.#line);
    return Promise.resolve();
  }

  /** The test hook: the vendor's end-of-turn final, now. Records t0, and when the call returned. */
  final(turn: number): void {
    const client = this.#line.client;
    if (client === undefined) throw new Error("final before the session heard any audio");
    this.#speechFrames = 0;
    this.#finalized = true;
    this.#line.due = turn;
    this.#line.recorder.mark(client, turn, "t0", monoMs());
    this.#events.final(userLine(client, turn), { endOfTurn: true });
    this.#line.recorder.mark(client, turn, "t0Returned", monoMs());
  }
}

/**
 * The gateway's `voice` option: a fake STT and TTS per session, paired. `VoiceRunner.open`
 * asks for the STT provider and then the TTS provider of one session in the same synchronous
 * step, so the TTS joins the line the STT just opened (the reply-text check in the TTS would
 * count any mix-up as a mismatch).
 */
export class BenchVoice implements VoiceProviders {
  readonly recorder: Recorder;
  readonly #sessions = new Map<number, BenchSttSession>();
  #opening: Line | undefined;

  constructor(recorder: Recorder) {
    this.recorder = recorder;
  }

  stt(): SttProvider {
    const line = new Line(this.recorder);
    this.#opening = line;
    return {
      kind: "bench-stt",
      open: (_options, events) =>
        Promise.resolve(
          new BenchSttSession(
            line,
            events,
            (known, session) => this.#sessions.set(known.client as number, session),
            (gone) => {
              if (gone.client !== undefined) this.#sessions.delete(gone.client);
            },
          ),
        ),
    };
  }

  tts(): TtsProvider {
    const line = this.#opening;
    this.#opening = undefined;
    if (line === undefined) throw new Error("the bench TTS must be asked for right after the STT of the same session");
    return { kind: "bench-tts", open: () => Promise.resolve(benchTtsSession(line)) };
  }

  /** Say the final of `turn` on the session serving `client`; false when none does (yet). */
  final(client: number, turn: number): boolean {
    const session = this.#sessions.get(client);
    if (session === undefined) return false;
    session.final(turn);
    return true;
  }
}

// ── LLM ─────────────────────────────────────────────────────────────────────────────────

/** A LanguageModelV4 that records t1 when `doStream` is called and streams its reply at once. */
export function benchModel(recorder: Recorder): LanguageModelV4 {
  return streamingModel("zero-latency", (call) => {
    const t1 = monoMs();
    const tag = parseUserLine(lastUserText(call.prompt));
    if (tag !== undefined) recorder.mark(tag.client, tag.turn, "t1", t1);
    const text = tag === undefined ? "Okay." : replyLine(tag.client, tag.turn);
    const parts = replyParts(text);
    return Promise.resolve({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    });
  });
}

/** A text reply as a provider streams it: word-sized deltas, then `finish`. */
function replyParts(text: string): LanguageModelV4StreamPart[] {
  const words = text.match(/\S+\s*/g) ?? [text];
  const id = "text_0";
  return [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", modelId: "zero-latency" },
    { type: "text-start", id },
    ...words.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id, delta })),
    { type: "text-end", id },
    {
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: words.length, text: words.length, reasoning: undefined },
      },
    },
  ];
}


// ── the gateway on these fakes ──────────────────────────────────────────────────────────

/**
 * A pipeline gateway (createGateway, on 127.0.0.1:0) whose STT, LLM and TTS are the fakes above,
 * logging at info as deployed but written nowhere (their formatting cost is the gateway's); the
 * gateway from `root` (its sources by default, or a build: bench/shared/gateway-modules.ts).
 */
export async function benchGateway(name: string, greeting: string, root = gatewaySource([]).gatewayRoot): Promise<{ readonly gateway: Gateway; readonly port: number; readonly voice: BenchVoice; readonly recorder: Recorder }> {
  const { agent, createLogger, createGateway } = await gatewayModules(root);
  const recorder = new Recorder();
  const voice = new BenchVoice(recorder);
  const model = benchModel(recorder);
  const def = agent({
    name,
    greeting,
    // Descriptors only: `voice` and `resolveModel` below replace what they would resolve to.
    stt: { kind: "deepgram", options: {} },
    tts: { kind: "cartesia", options: { voice: "bench" } },
    llm: { kind: "openai-compatible", options: { baseURL: "http://127.0.0.1:9/v1", model: "bench" } },
    maxRetries: 0,
  });
  const logger = createLogger({ level: "info", destination: { write: () => true } });
  const gateway = createGateway({ agent: def, logger, env: { DEEPGRAM_API_KEY: "bench", CARTESIA_API_KEY: "bench" }, voice, resolveModel: () => model });
  const { port } = await gateway.listen(0, "127.0.0.1");
  return { gateway, port, voice, recorder };
}
