// A fake ElevenLabs multi-stream-input TTS WebSocket on loopback, for adapter tests. It models the
// service as documented, not as the adapter would like it to be. Sources (SDK
// @elevenlabs/elevenlabs-js 2.73.0, api/types/*.d.ts) and what the fake does with each:
//
// - Route /v1/text-to-speech/{voice_id}/multi-stream-input?model_id=…&output_format=pcm_<rate>; the
//   `xi-api-key` handshake header (401 when wrong); `eleven_v3` refused on multi-stream-input.
// - InitializeConnectionMulti: a context is opened by its first message, whose text "Must be a single
//   space character"; `generation_config.chunk_length_schedule` may ride on it.
// - GenerationConfig: "All text sent to the WebSocket endpoint is added to this buffer and only when
//   that buffer reaches a certain size is an audio generation attempted" … "automatically emptied with
//   a final audio generation either when the stream is closed, or upon sending a `flush` command";
//   default schedule [120, 160, 250, 290] (the first generation waits for 120 buffered characters, the
//   next for 160 more, …, then 290 each). Here: buffered text is generated when it reaches the
//   schedule's next step (which then advances) or when a `flush: true` message arrives (text and
//   flush may share one message: SendTextMulti).
// - WebsocketTtsServerMessageMulti.isFinal: "the final message for the specified contextId. This is
//   sent when a context is closed." So `isFinal` follows `close_context` only, never a flush alone
//   (bolna-ai/bolna#790, verified live: "`flush` alone yields no `isFinal`").
// - CloseContext: "If it has already been set to flush it will continue flushing"; the client message
//   doc: "No further audio will be generated for this context". Here: on `close_context` the text
//   already handed to generation is still spoken, unflushed buffered text is dropped, then `isFinal`.
//   A context holds its slot until its `isFinal` has been sent.
// - CloseSocket: "closes all contexts … Any context that was previously set to flush will wait to
//   flush before closing."
// - At most 5 contexts per socket. The SDK does not declare the refusal; its shape is the one reported
//   from the live service (livekit/agents-js#1985, pipecat-ai/pipecat#4114): a JSON
//   `{"message":"Maximum simultaneous contexts per WebSocket connection exceeded (5). Please close an
//   existing context before opening a new one.","error":"max_active_conversations","code":1008}`, then
//   the socket is closed with 1008 (the close reason is cut to its first sentence: a close reason
//   holds at most 123 bytes).
//
// Audio: per word, an audio frame (base64 PCM16 LE) with its `alignment` (chars, start times and
// durations in ms, relative to the chunk). Synthesis is deterministic: every character (spaces too)
// becomes `msPerChar` ms of samples whose value is the character code.
import type { IncomingMessage } from "node:http";
import { loopbackServer } from "./loopback.js";
import { pcmForText, samplesPerChar } from "./tts-pcm.js";
import { ChunkPacer, nextWordGroup, readJsonFrame } from "./tts-socket.js";

export const ELEVENLABS_RATES = [8000, 16000, 22050, 24000, 44100, 48000];
/** GenerationConfig.chunkLengthSchedule: "The default value … is: [120, 160, 250, 290]". */
export const DEFAULT_CHUNK_LENGTH_SCHEDULE = [120, 160, 250, 290] as const;
/** Contexts one socket may hold at once (livekit/agents-js#1985: "exceeded (5)"). */
export const MAX_CONTEXTS = 5;
/** The refusal of a 6th context, as reported from the live service. */
export const MAX_CONTEXTS_MESSAGE = "Maximum simultaneous contexts per WebSocket connection exceeded (5). Please close an existing context before opening a new one.";

export interface FakeElevenLabsOptions {
  /** The accepted key (default "test-key"). */
  apiKey?: string;
  /** Audio per character, spaces included (default 10 ms). */
  msPerChar?: number;
  /** Pause after each word's chunk (default 0). */
  chunkDelayMs?: number;
  /** Answer with snake_case keys (`is_final`, `context_id`, `normalized_alignment`, `char_start_times_ms`). */
  snakeCase?: boolean;
  /** Accept the TCP connection but never answer the handshake (open timeout tests). */
  hangHandshake?: boolean;
  /**
   * A closed context never reports `isFinal` and keeps its slot (the failure reported in
   * pipecat-ai/pipecat#4681: "no audio frames, no error, no isFinal" after an early close_context).
   */
  neverFinal?: boolean;
}

export interface FakeElevenLabsConnection {
  readonly voiceId: string;
  readonly query: Record<string, string>;
  readonly headers: IncomingMessage["headers"];
  /** Parsed client messages on this connection, in order. */
  readonly messages: Record<string, unknown>[];
  /** Contexts holding a slot now (opened, `isFinal` not yet sent). */
  readonly openContexts: () => number;
  /** The most contexts this connection held at once. */
  readonly peakContexts: () => number;
}

export interface FakeElevenLabs {
  /** ws://127.0.0.1:PORT (the adapter appends the path). */
  readonly url: string;
  /** Every parsed client message, all connections, in order. */
  readonly messages: Record<string, unknown>[];
  readonly connections: FakeElevenLabsConnection[];
  /** Protocol mistakes seen in client messages (a refused 6th context included). */
  readonly violations: string[];
  /** Context ids whose `isFinal` was sent, in order. */
  readonly finals: string[];
  /** Terminate every open socket now (a network drop: no close frame). */
  drop(): void;
  /** Terminate every open socket right after the `n`th next chunk is sent (one shot). */
  dropAfterChunks(n: number): void;
  /** Send a raw text frame to every open socket. */
  sendRaw(text: string): void;
  close(): Promise<void>;
}

export { pcmForText, samplesPerChar, textFromPcm } from "./tts-pcm.js";

interface Ctx {
  /** Every text received on the context. */
  text: string;
  /** Prefix of `text` handed to generation (by the schedule or a flush). */
  generated: number;
  /** Prefix of `text` whose audio has been sent. */
  synthesized: number;
  /** chunk_length_schedule in force, and how many schedule-triggered generations ran. */
  readonly schedule: readonly number[];
  step: number;
  /** `close_context` received. */
  closed: boolean;
  /** Generations run in order; `isFinal` is chained after them. */
  chain: Promise<void>;
}

/** `generation_config.chunk_length_schedule` of an opening message, when it is a list of numbers. */
function scheduleOf(message: Record<string, unknown>): readonly number[] {
  const config = message.generation_config;
  if (typeof config !== "object" || config === null) return DEFAULT_CHUNK_LENGTH_SCHEDULE;
  const schedule = (config as Record<string, unknown>).chunk_length_schedule;
  if (!Array.isArray(schedule) || schedule.length === 0 || !schedule.every((n) => typeof n === "number")) return DEFAULT_CHUNK_LENGTH_SCHEDULE;
  return schedule;
}

export async function startFakeElevenLabs(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
  const apiKey = options.apiKey ?? "test-key";
  const msPerChar = options.msPerChar ?? 10;
  const snake = options.snakeCase === true;
  const messages: Record<string, unknown>[] = [];
  const connections: FakeElevenLabsConnection[] = [];
  const violations: string[] = [];
  const finals: string[] = [];
  const chunks = new ChunkPacer(options.chunkDelayMs ?? 0);
  const route = /^\/v1\/text-to-speech\/([^/]+)\/multi-stream-input$/;

  const server = loopbackServer();
  const wss = server.webSockets({
    verifyClient: (info, callback) => {
      if (options.hangHandshake === true) return;
      const url = new URL(info.req.url ?? "/", "http://fake");
      const format = url.searchParams.get("output_format") ?? "";
      const rate = Number(/^pcm_(\d+)$/.exec(format)?.[1]);
      if (!route.test(url.pathname)) callback(false, 404, "Not Found");
      else if (info.req.headers["xi-api-key"] !== apiKey) callback(false, 401, "Unauthorized");
      else if (!ELEVENLABS_RATES.includes(rate)) callback(false, 400, "unsupported output_format");
      else if (url.searchParams.get("model_id") === "eleven_v3") callback(false, 400, "eleven_v3 is not available on multi-stream-input");
      else callback(true);
    },
  });

  wss.on("connection", (ws, req) => {
    chunks.track(ws);
    const url = new URL(req.url ?? "/", "http://fake");
    const contexts = new Map<string, Ctx>();
    let peak = 0;
    const connection: FakeElevenLabsConnection = {
      voiceId: decodeURIComponent(route.exec(url.pathname)?.[1] ?? ""),
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      messages: [],
      openContexts: () => contexts.size,
      peakContexts: () => peak,
    };
    connections.push(connection);
    const rate = Number(/^pcm_(\d+)$/.exec(connection.query.output_format ?? "")?.[1]);
    ws.on("error", () => undefined);

    const send = (message: object): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    const idKey = snake ? "context_id" : "contextId";
    const finalKey = snake ? "is_final" : "isFinal";
    const error = (contextId: unknown, message: string): void => {
      violations.push(message);
      send({ message, error: "invalid_message", ...(typeof contextId === "string" ? { [idKey]: contextId } : {}) });
    };
    const alignment = (chars: string): Record<string, unknown> => {
      const per = samplesPerChar(rate, msPerChar);
      const starts = [...chars].map((_c, i) => (i * per * 1000) / rate);
      const durations = [...chars].map(() => (per * 1000) / rate);
      return snake
        ? { chars: [...chars], char_start_times_ms: starts, char_durations_ms: durations }
        : { chars: [...chars], charStartTimesMs: starts, charDurationsMs: durations };
    };

    /** Speak `ctx.text` up to `until`, one word per audio frame. */
    const synthesize = async (contextId: string, ctx: Ctx, until: number): Promise<void> => {
      while (ctx.synthesized < until && ws.readyState === ws.OPEN) {
        const rest = ctx.text.slice(ctx.synthesized, until);
        const group = nextWordGroup(rest);
        const align = alignment(group);
        send({
          audio: pcmForText(group, rate, msPerChar).toString("base64"),
          [finalKey]: false,
          [idKey]: contextId,
          ...(snake ? { alignment: align, normalized_alignment: align } : { alignment: align, normalizedAlignment: align }),
        });
        ctx.synthesized += group.length;
        if (!(await chunks.chunkSent())) return;
      }
    };
    /** Hand everything buffered to generation (a flush, or the schedule's next step reached). */
    const generate = (contextId: string, ctx: Ctx): void => {
      const until = ctx.text.length;
      if (until <= ctx.generated) return;
      ctx.generated = until;
      ctx.chain = ctx.chain.then(() => synthesize(contextId, ctx, until));
    };
    const nextStep = (ctx: Ctx): number => ctx.schedule[Math.min(ctx.step, ctx.schedule.length - 1)] ?? DEFAULT_CHUNK_LENGTH_SCHEDULE[0];

    ws.on("message", (data, isBinary) => {
      if (ws.readyState !== ws.OPEN) return; // closing (after a refusal or close_socket): nothing more is read
      const message = readJsonFrame(data, isBinary);
      if (typeof message === "string") return void error(undefined, message);
      messages.push(message);
      connection.messages.push(message);
      if (message.close_socket === true) {
        // CloseSocket: contexts set to flush finish flushing first.
        void Promise.all([...contexts.values()].map((ctx) => ctx.chain)).then(() => ws.close(1000));
        return;
      }
      const contextId = message.context_id;
      if (typeof contextId !== "string" || contextId === "") return void error(contextId, "context_id is required");
      const ctx = contexts.get(contextId);
      if (ctx === undefined) {
        if (message.close_context === true) return void error(contextId, `close_context for context ${contextId}, which is not open`);
        // InitializeConnectionMulti: the first message on a context opens it, with text " ".
        if (message.text !== " ") return void error(contextId, `context ${contextId} must be opened with text " "`);
        if (contexts.size >= MAX_CONTEXTS) {
          violations.push(MAX_CONTEXTS_MESSAGE);
          send({ message: MAX_CONTEXTS_MESSAGE, error: "max_active_conversations", code: 1008 });
          ws.close(1008, MAX_CONTEXTS_MESSAGE.slice(0, MAX_CONTEXTS_MESSAGE.indexOf(".") + 1));
          return;
        }
        contexts.set(contextId, { text: "", generated: 0, synthesized: 0, schedule: scheduleOf(message), step: 0, closed: false, chain: Promise.resolve() });
        peak = Math.max(peak, contexts.size);
        return;
      }
      if (ctx.closed) return void error(contextId, `context ${contextId} is closed`);
      if (message.close_context === true) {
        // CloseContext: what was handed to generation is still spoken; the unflushed rest is dropped.
        ctx.closed = true;
        ctx.text = ctx.text.slice(0, ctx.generated);
        ctx.chain = ctx.chain.then(() => {
          if (options.neverFinal === true || ws.readyState !== ws.OPEN) return;
          contexts.delete(contextId);
          finals.push(contextId);
          send({ [finalKey]: true, [idKey]: contextId });
        });
        return;
      }
      if (message.text !== undefined && typeof message.text !== "string") return void error(contextId, "text must be a string");
      const text = typeof message.text === "string" ? message.text : "";
      if (text === "" && message.flush !== true) {
        if (message.text === undefined) error(contextId, "text is required");
        return; // "" is a keep-alive (KeepContextAlive)
      }
      if (text !== "") {
        if (!/\s$/.test(text)) violations.push(`text chunk does not end with a space: ${JSON.stringify(text)}`);
        ctx.text += text;
      }
      if (message.flush === true) {
        generate(contextId, ctx);
        return;
      }
      // The schedule: generate once the buffer holds the next step's worth of characters.
      if (ctx.text.length - ctx.generated >= nextStep(ctx)) {
        ctx.step++;
        generate(contextId, ctx);
      }
    });
  });

  const port = await server.listen();
  return {
    url: `ws://127.0.0.1:${port}`,
    messages,
    connections,
    violations,
    finals,
    drop: () => chunks.dropAll(),
    dropAfterChunks: (n) => chunks.dropAfter(n),
    sendRaw: (text) => chunks.sendRaw(text),
    close: () => server.close(),
  };
}
