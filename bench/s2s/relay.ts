/**
 * The s2s baseline: a minimal hand-written relay between a browser socket and the Realtime
 * service, run as its own process by bench/s2s/run.ts with its own fake service in-process (as the
 * gateway has). Mic frames (16 kHz) → linear resample to 24 kHz → `input_audio_buffer.append`;
 * `response.output_audio.delta` → base64 decode → linear resample to 16 kHz → `ws.send`;
 * `response.done` → `reply.completed` once the audio would have played. One `session.update`,
 * one `response.create` for the greeting. No session, events, pacing, metrics or logs.
 */
import WebSocket, { WebSocketServer } from "ws";
import { send, type FromRelay, type ToRelay } from "../shared/protocol.js";
import { FakeHost } from "./fake-host.js";
import { ProcessMeter } from "../shared/stats.js";

const meter = new ProcessMeter();
const host = await FakeHost.start();

/** PCM16 mono, linear interpolation from rate `from` to rate `to`. */
export function resample(pcm: Buffer, from: number, to: number): Buffer {
  const inSamples = pcm.byteLength >> 1;
  const outSamples = Math.floor((inSamples * to) / from);
  const out = Buffer.allocUnsafe(outSamples * 2);
  const step = from / to;
  for (let n = 0; n < outSamples; n++) {
    const pos = n * step;
    const i = Math.floor(pos);
    const a = pcm.readInt16LE(i * 2);
    const b = i + 1 < inSamples ? pcm.readInt16LE((i + 1) * 2) : a;
    out.writeInt16LE(Math.round(a + (b - a) * (pos - i)), n * 2);
  }
  return out;
}

function relay(browser: WebSocket): void {
  const upstream = new WebSocket(host.service.url, { headers: { authorization: "Bearer test-key" }, perMessageDeflate: false });
  let audioMs = 0;
  const up = (event: Record<string, unknown>): void => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(JSON.stringify(event));
  };
  upstream.on("open", () => {
    up({ type: "session.update", session: { type: "realtime" } });
    up({ type: "response.create", response: { instructions: "Say exactly: Welcome." } });
  });
  upstream.on("message", (data) => {
    const event = JSON.parse((data as Buffer).toString("utf8")) as { type?: string; delta?: string };
    if (event.type === "response.output_audio.delta" && event.delta !== undefined) {
      const pcm = Buffer.from(event.delta, "base64");
      audioMs += (pcm.byteLength / 2 / 24_000) * 1000;
      browser.send(resample(pcm, 24_000, 16_000));
    } else if (event.type === "response.done") {
      const ms = audioMs;
      audioMs = 0;
      setTimeout(() => {
        if (browser.readyState === WebSocket.OPEN) browser.send(JSON.stringify({ type: "reply.completed" }));
      }, ms);
    }
  });
  browser.on("message", (data, isBinary) => {
    if (isBinary) up({ type: "input_audio_buffer.append", audio: resample(data as Buffer, 16_000, 24_000).toString("base64") });
  });
  browser.on("close", () => upstream.close());
  upstream.on("close", () => browser.close());
  browser.on("error", () => undefined);
  upstream.on("error", () => undefined);
}

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/websocket", perMessageDeflate: false });
wss.on("connection", (ws) => relay(ws));
wss.on("listening", () => {
  const address = wss.address();
  if (address === null || typeof address === "string") throw new Error("the relay needs a TCP address");
  send<FromRelay>({ type: "listening", url: `ws://127.0.0.1:${address.port}/websocket` });
});

process.on("message", (message: ToRelay) => {
  if (message.type === "final") return host.turn(message.client, message.turn);
  const value = message.call === "memory" ? meter.memory() : message.call === "start" ? meter.start() : message.call === "stop" ? meter.stop() : host.take();
  send<FromRelay>({ type: "result", id: message.id, value: value ?? null });
});
process.on("disconnect", () => process.exit(0));
