// A fake ElevenLabs multi-stream-input TTS WebSocket (vendors.md §6) on loopback, for adapter tests.
//
// Route: /v1/text-to-speech/{voice_id}/multi-stream-input?model_id=…&output_format=pcm_<rate>.
// It checks the `xi-api-key` handshake header (401 when wrong), the output format and `eleven_v3`
// (refused on multi-stream-input), records every message, and answers contexts the ElevenLabs way:
// per word, an audio frame (base64 PCM16 LE) with its `alignment` (chars, start times and durations in
// ms, relative to the chunk), then `is_final` after `flush`. Synthesis is deterministic: every character
// (spaces too) becomes `msPerChar` ms of samples whose value is the character code.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { pcmForText, samplesPerChar } from "./fake-tts-pcm.js";

export const ELEVENLABS_RATES = [8000, 16000, 22050, 24000, 44100, 48000];

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
}

export interface FakeElevenLabsConnection {
  readonly voiceId: string;
  readonly query: Record<string, string>;
  readonly headers: IncomingMessage["headers"];
  /** Parsed client messages on this connection, in order. */
  readonly messages: Record<string, unknown>[];
}

export interface FakeElevenLabs {
  /** ws://127.0.0.1:PORT (the adapter appends the path). */
  readonly url: string;
  /** Every parsed client message, all connections, in order. */
  readonly messages: Record<string, unknown>[];
  readonly connections: FakeElevenLabsConnection[];
  /** Protocol mistakes seen in client messages. */
  readonly violations: string[];
  /** Terminate every open socket now (a network drop: no close frame). */
  drop(): void;
  /** Terminate every open socket right after the `n`th next chunk is sent (one shot). */
  dropAfterChunks(n: number): void;
  /** Send a raw text frame to every open socket. */
  sendRaw(text: string): void;
  close(): Promise<void>;
}

export { pcmForText, samplesPerChar, textFromPcm } from "./fake-tts-pcm.js";

interface Ctx {
  text: string;
  synthesized: number;
  closed: boolean;
  chain: Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFakeElevenLabs(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
  const apiKey = options.apiKey ?? "test-key";
  const msPerChar = options.msPerChar ?? 10;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const snake = options.snakeCase === true;
  const messages: Record<string, unknown>[] = [];
  const connections: FakeElevenLabsConnection[] = [];
  const violations: string[] = [];
  const sockets = new Set<Socket>();
  const clients = new Set<WebSocket>();
  let chunksSent = 0;
  let dropAt: number | undefined;
  const route = /^\/v1\/text-to-speech\/([^/]+)\/multi-stream-input$/;

  const http = createServer((_req, res) => {
    res.writeHead(426).end("websocket only");
  });
  http.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const wss = new WebSocketServer({
    server: http,
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

  const dropAll = (): void => {
    for (const client of clients) client.terminate();
  };

  wss.on("connection", (ws, req) => {
    clients.add(ws);
    const url = new URL(req.url ?? "/", "http://fake");
    const connection: FakeElevenLabsConnection = {
      voiceId: decodeURIComponent(route.exec(url.pathname)?.[1] ?? ""),
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      messages: [],
    };
    connections.push(connection);
    const rate = Number(/^pcm_(\d+)$/.exec(connection.query.output_format ?? "")?.[1]);
    const contexts = new Map<string, Ctx>();
    ws.on("close", () => clients.delete(ws));
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

    const synthesize = async (contextId: string, ctx: Ctx, until: number): Promise<void> => {
      while (ctx.synthesized < until && !ctx.closed && ws.readyState === ws.OPEN) {
        const rest = ctx.text.slice(ctx.synthesized, until);
        const group = /^\s*\S*\s*/.exec(rest)?.[0] || rest;
        const align = alignment(group);
        send({
          audio: pcmForText(group, rate, msPerChar).toString("base64"),
          [finalKey]: false,
          [idKey]: contextId,
          ...(snake ? { alignment: align, normalized_alignment: align } : { alignment: align, normalizedAlignment: align }),
        });
        ctx.synthesized += group.length;
        chunksSent++;
        if (dropAt !== undefined && chunksSent >= dropAt) {
          dropAt = undefined;
          dropAll();
          return;
        }
        if (chunkDelayMs > 0) await sleep(chunkDelayMs);
        else await new Promise((resolve) => setImmediate(resolve));
      }
    };

    ws.on("message", (data, isBinary) => {
      if (isBinary) return void error(undefined, "binary frames are not accepted");
      let message: Record<string, unknown>;
      try {
        message = JSON.parse((data as Buffer).toString("utf8")) as Record<string, unknown>;
      } catch {
        return void error(undefined, "malformed JSON");
      }
      messages.push(message);
      connection.messages.push(message);
      if (message.close_socket === true) {
        ws.close(1000);
        return;
      }
      const contextId = message.context_id;
      if (typeof contextId !== "string" || contextId === "") return void error(contextId, "context_id is required");
      let ctx = contexts.get(contextId);
      if (message.close_context === true) {
        if (ctx !== undefined) ctx.closed = true;
        return;
      }
      if (ctx === undefined) {
        // §6: the first message on a context opens it, with text " ".
        if (message.text !== " ") return void error(contextId, `context ${contextId} must be opened with text " "`);
        ctx = { text: "", synthesized: 0, closed: false, chain: Promise.resolve() };
        contexts.set(contextId, ctx);
        return;
      }
      if (ctx.closed) return void error(contextId, `context ${contextId} is closed`);
      const current = ctx;
      if (message.flush === true) {
        const until = current.text.length;
        current.chain = current.chain.then(async () => {
          await synthesize(contextId, current, until);
          if (!current.closed && ws.readyState === ws.OPEN) send({ [finalKey]: true, [idKey]: contextId });
        });
        return;
      }
      if (typeof message.text !== "string") return void error(contextId, "text is required");
      if (message.text === "") return; // keep-alive
      if (!/\s$/.test(message.text)) violations.push(`text chunk does not end with a space: ${JSON.stringify(message.text)}`);
      current.text += message.text;
      const until = current.text.length;
      current.chain = current.chain.then(() => synthesize(contextId, current, until));
    });
  });

  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    messages,
    connections,
    violations,
    drop: dropAll,
    dropAfterChunks(n) {
      dropAt = chunksSent + n;
    },
    sendRaw(text) {
      for (const client of clients) client.send(text);
    },
    async close() {
      dropAll();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
