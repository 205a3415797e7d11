/**
 * The baseline: a minimal hand-written voice relay, run as its own process by bench/pipeline/run.ts.
 * Same fakes, same clients, same load as the gateway — but nothing between them: an STT final
 * calls the model directly, every model delta goes straight to the TTS, and every TTS chunk
 * straight to `ws.send`. No session, turn loop, batching, pacing, events, metrics or logs. Its
 * figures are the floor that this machine, Node and `ws` set; the gateway is quoted against it.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { WebSocketServer, type WebSocket } from "ws";
import { benchModel, benchTtsSession, Line, MS_PER_WORD, Recorder } from "../shared/providers.js";
import { readMicFrame, send, userLine, type FromRelay, type ToRelay } from "../shared/protocol.js";
import { monoMs, ProcessMeter } from "../shared/stats.js";

const GREETING = "Welcome to the bench line.";

const recorder = new Recorder();
const model = benchModel(recorder);
const meter = new ProcessMeter();
const calls = new Map<number, RelayCall>();

/** One caller: mic frames in (only read for the client tag), agent audio out. */
class RelayCall {
  readonly #ws: WebSocket;
  readonly #line = new Line(recorder);
  readonly #tts = benchTtsSession(this.#line);

  constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data, isBinary) => {
      if (isBinary) this.#hear(data as Buffer);
    });
    ws.on("close", () => {
      if (this.#line.client !== undefined) calls.delete(this.#line.client);
    });
    ws.on("error", () => {});
    this.#speak().say(GREETING);
  }

  /** The STT final of `turn`: straight to the model, its reply straight to the TTS. */
  final(turn: number): void {
    const client = this.#line.client as number;
    this.#line.due = turn;
    recorder.mark(client, turn, "t0", monoMs());
    const request = model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: userLine(client, turn) }] }] });
    const speech = this.#speak();
    recorder.mark(client, turn, "t0Returned", monoMs());
    void Promise.resolve(request).then(async ({ stream }) => {
      for await (const part of stream as AsyncIterable<LanguageModelV4StreamPart>) {
        if (part.type === "text-delta") speech.push(part.delta);
      }
      speech.end();
    });
  }

  #hear(frame: Buffer): void {
    if (this.#line.client !== undefined) return;
    const tag = readMicFrame(frame);
    if (tag === undefined) return;
    this.#line.client = tag.client;
    calls.set(tag.client, this);
  }

  /** A TTS stream whose audio goes straight to the socket; `reply.completed` once it would have played. */
  #speak(): { push(text: string): void; end(): void; say(text: string): void } {
    let audioMs = 0;
    const stream = this.#tts.stream({
      audio: (pcm) => {
        audioMs += MS_PER_WORD;
        this.#ws.send(pcm);
      },
      words: () => {},
      done: () => {
        setTimeout(() => {
          if (this.#ws.readyState === this.#ws.OPEN) this.#ws.send(JSON.stringify({ type: "reply.completed" }));
        }, audioMs);
      },
      error: () => {},
    });
    return {
      push: (text) => stream.push(text),
      end: () => stream.end(),
      say: (text) => {
        stream.push(text);
        stream.end();
      },
    };
  }
}

/** A final can race the client's first mic frame by a few ms: retry briefly. */
function final(client: number, turn: number, attempt = 0): void {
  const call = calls.get(client);
  if (call !== undefined) return call.final(turn);
  if (attempt < 200) setTimeout(() => final(client, turn, attempt + 1), 5);
}

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/websocket", perMessageDeflate: false });
wss.on("connection", (ws) => new RelayCall(ws));
wss.on("listening", () => {
  const address = wss.address();
  if (address === null || typeof address === "string") throw new Error("the relay needs a TCP address");
  send<FromRelay>({ type: "listening", url: `ws://127.0.0.1:${address.port}/websocket` });
});

process.on("message", (message: ToRelay) => {
  if (message.type === "final") return final(message.client, message.turn);
  const value = message.call === "memory" ? meter.memory() : message.call === "start" ? meter.start() : message.call === "stop" ? meter.stop() : recorder.take();
  send<FromRelay>({ type: "result", id: message.id, value: value ?? null });
});
process.on("disconnect", () => process.exit(0));
