// A fake Cartesia TTS WebSocket (docs/vendors.md (Cartesia)) on loopback, for adapter tests.
//
// It checks what the real service checks: the key (`Authorization: Bearer`, `X-API-Key` or
// `?api_key=`; 401 when wrong) and the `Cartesia-Version` (header or `?cartesia_version=`): the fake
// serves the one version whose messages it models and refuses any other with 400, as a versioned API
// refuses a version it does not serve. It records every message and answers each context the
// Cartesia way: per word, a `timestamps` message then a `chunk` of raw pcm_s16le (base64), and `done`
// after `continue:false`. Synthesis is deterministic: every character (spaces too) becomes
// `msPerChar` ms of samples whose value is the character code, so a test can count bytes or read the
// spoken text back with `textFromPcm`.
import type { IncomingMessage } from "node:http";
import { loopbackServer } from "./loopback.js";
import { pcmForText, samplesPerChar } from "./tts-pcm.js";
import { ChunkPacer, nextWordGroup, readJsonFrame } from "./tts-socket.js";

export const CARTESIA_RATES = [8000, 16000, 22050, 24000, 44100, 48000];

/**
 * The API version the fake models: what @cartesia/cartesia-js 4.2.0 sends on every WebSocket upgrade
 * (`src/internal/client-identity.ts:33`: `'cartesia-version': '2026-08-14'`). Its message shapes are
 * that version's (`src/resources/tts.ts`): `voice` is a voice id string or `{ id, … }` ("Embeddings
 * are not accepted in this API version"); `timestamps` carries `word_timestamps: {words, start, end}`
 * in seconds.
 */
export const CARTESIA_FAKE_VERSION = "2026-08-14";

export interface FakeCartesiaOptions {
  /** The accepted key (default "test-key"). */
  apiKey?: string;
  /** Audio per character, spaces included (default 10 ms). */
  msPerChar?: number;
  /** Pause after each word's chunk (default 0). */
  chunkDelayMs?: number;
  /** Accept the TCP connection but never answer the handshake (open timeout tests). */
  hangHandshake?: boolean;
}

export interface FakeCartesiaConnection {
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  /** Parsed client messages on this connection, in order. */
  readonly messages: Record<string, unknown>[];
}

export interface FakeCartesia {
  /** ws://127.0.0.1:PORT/tts/websocket */
  readonly url: string;
  /** Every parsed client message, all connections, in order. */
  readonly messages: Record<string, unknown>[];
  /** Accepted connections, in order. */
  readonly connections: FakeCartesiaConnection[];
  /** Protocol mistakes seen in client messages (the real service would answer with an error). */
  readonly violations: string[];
  /** Chunks sent so far (all connections). */
  readonly chunksSent: number;
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
  transcript: string;
  /** Characters synthesized so far. */
  synthesized: number;
  cancelled: boolean;
  finished: boolean;
  /** The fields that must not change between inputs of a context. */
  fixed: string;
  chain: Promise<void>;
}

export async function startFakeCartesia(options: FakeCartesiaOptions = {}): Promise<FakeCartesia> {
  const apiKey = options.apiKey ?? "test-key";
  const msPerChar = options.msPerChar ?? 10;
  const messages: Record<string, unknown>[] = [];
  const connections: FakeCartesiaConnection[] = [];
  const violations: string[] = [];
  const chunks = new ChunkPacer(options.chunkDelayMs ?? 0);
  const server = loopbackServer();
  const wss = server.webSockets({
    path: "/tts/websocket",
    verifyClient: (info, callback) => {
      if (options.hangHandshake === true) return; // never answer
      const query = new URL(info.req.url ?? "/", "http://fake").searchParams;
      const headers = info.req.headers;
      const version = query.get("cartesia_version") ?? headers["cartesia-version"];
      const key = query.get("api_key") ?? headers["x-api-key"] ?? /^Bearer (.+)$/.exec(headers.authorization ?? "")?.[1];
      if (key !== apiKey) callback(false, 401, "Unauthorized");
      else if (typeof version !== "string") callback(false, 400, "Cartesia-Version required");
      else if (version !== CARTESIA_FAKE_VERSION) callback(false, 400, `Cartesia-Version ${version} is not supported`);
      else callback(true);
    },
  });

  wss.on("connection", (ws, req) => {
    chunks.track(ws);
    const connection: FakeCartesiaConnection = { url: req.url ?? "", headers: req.headers, messages: [] };
    connections.push(connection);
    const contexts = new Map<string, Ctx>();
    ws.on("error", () => undefined);

    const send = (message: object): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    const error = (contextId: unknown, message: string): void => {
      violations.push(message);
      send({ type: "error", context_id: contextId, status_code: 400, title: "Invalid request", message, done: true });
    };

    const synthesize = async (contextId: string, ctx: Ctx, rate: number, until: number): Promise<void> => {
      // One chunk per word (with the spaces after it), its timestamps first.
      while (ctx.synthesized < until && !ctx.cancelled && ws.readyState === ws.OPEN) {
        const rest = ctx.transcript.slice(ctx.synthesized, until);
        const group = nextWordGroup(rest);
        const leading = /^\s*/.exec(group)?.[0].length ?? 0;
        const word = group.trim();
        const per = samplesPerChar(rate, msPerChar);
        if (word !== "") {
          const start = ((ctx.synthesized + leading) * per) / rate;
          send({ type: "timestamps", context_id: contextId, status_code: 206, done: false, word_timestamps: { words: [word], start: [start], end: [start + (word.length * per) / rate] } });
        }
        send({ type: "chunk", context_id: contextId, status_code: 206, done: false, step_time: 1, data: pcmForText(group, rate, msPerChar).toString("base64") });
        ctx.synthesized += group.length;
        if (!(await chunks.chunkSent())) return;
      }
    };

    ws.on("message", (data, isBinary) => {
      const message = readJsonFrame(data, isBinary);
      if (typeof message === "string") return void error(undefined, message);
      messages.push(message);
      connection.messages.push(message);
      const contextId = message.context_id;
      if (typeof contextId !== "string" || contextId === "") return void error(contextId, "context_id is required");
      const ctx = contexts.get(contextId);
      if (message.cancel === true) {
        if (ctx !== undefined) ctx.cancelled = true;
        return;
      }
      const format = message.output_format as { container?: unknown; encoding?: unknown; sample_rate?: unknown } | undefined;
      if (typeof message.model_id !== "string") return void error(contextId, "model_id is required");
      if (typeof message.transcript !== "string") return void error(contextId, "transcript is required");
      if (format?.container !== "raw" || format.encoding !== "pcm_s16le" || !CARTESIA_RATES.includes(format.sample_rate as number)) {
        return void error(contextId, `unsupported output_format ${JSON.stringify(format)}`);
      }
      // 2026-08-14: a voice id string, or an object with a required `id`; no embeddings.
      const voice = message.voice;
      const voiceId = typeof voice === "string" ? voice : typeof voice === "object" && voice !== null && "id" in voice ? voice.id : undefined;
      if (typeof voiceId !== "string" || voiceId === "") return void error(contextId, "voice must be a voice id or {id}");
      if (typeof voice === "object" && voice !== null && "embedding" in voice) return void error(contextId, "voice embeddings are not accepted in this API version");
      const { transcript: _t, continue: _c, ...rest } = message;
      const fixed = JSON.stringify(rest);
      const rate = format.sample_rate as number;
      if (ctx?.finished === true) return void error(contextId, `context ${contextId} has already finished`);
      if (ctx !== undefined && ctx.fixed !== fixed) return void error(contextId, "fields other than transcript/continue changed within a context");
      const current: Ctx = ctx ?? { transcript: "", synthesized: 0, cancelled: false, finished: false, fixed, chain: Promise.resolve() };
      contexts.set(contextId, current);
      if (current.cancelled) return;
      current.transcript += message.transcript;
      const until = current.transcript.length;
      const last = message.continue !== true;
      if (last) current.finished = true;
      current.chain = current.chain.then(async () => {
        await synthesize(contextId, current, rate, until);
        if (last && !current.cancelled) send({ type: "done", context_id: contextId, status_code: 206, done: true });
      });
    });
  });

  const port = await server.listen();
  return {
    url: `ws://127.0.0.1:${port}/tts/websocket`,
    messages,
    connections,
    violations,
    get chunksSent() {
      return chunks.sent;
    },
    drop: () => chunks.dropAll(),
    dropAfterChunks: (n) => chunks.dropAfter(n),
    sendRaw: (text) => chunks.sendRaw(text),
    close: () => server.close(),
  };
}
