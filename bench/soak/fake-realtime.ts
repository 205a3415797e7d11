/**
 * The soak's speech-to-speech service: a lean loopback fake of OpenAI Realtime (GA event names)
 * that keeps no history, so it can run as long as the soak does. The test helper's fake
 * (test/helpers/fake-openai-realtime.ts) records every message and event it handles and takes its
 * turns from one queue shared by every connection; the telephony bench's (bench/telephony/fake-realtime.ts)
 * scripts turns on its own clock and takes μ-law only. Here the caller drives each turn with its
 * voice, on every connection at once:
 *
 * - A VAD on the appended audio (PCM16 24 kHz or μ-law 8 kHz, as the session asked): loud audio
 *   starts speech (`speech_started`; an in-band response still running is cancelled, as
 *   `interrupt_response` asks — a barge-in), 120 ms of quiet ends it (`speech_stopped`,
 *   `committed`, the transcription, then a response).
 * - A turn with at least 350 ms of speech gets a `lookup_order` function call; the others a spoken
 *   reply of 800 ms. Out-of-band responses (the greeting, tool lines) speak for 500 ms.
 * - Audio goes out in real time: a 20 ms delta every 20 ms, a transcript word every 100 ms.
 *
 * What the real service would refuse is counted in `violations`.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { decodeMulaw } from "../../src/audio/g711.js";
import { replyAudio, replyFinished, replyStarted, responseOf, type WireReply } from "../shared/realtime-wire.js";

const FRAME_MS = 20;
const QUIET_END_MS = 120;
const TOOL_SPEECH_MS = 350;
const REPLY_MS = 800;
const OUT_OF_BAND_MS = 500;
/** Mean absolute sample above this is speech. */
const LOUD = 1000;
const PCM_DELTA = Buffer.alloc((24_000 * 2 * FRAME_MS) / 1000, 0x04).toString("base64");
const MULAW_DELTA = Buffer.alloc(8 * FRAME_MS, 0x55).toString("base64");

type Reply = WireReply;

interface Conn {
  readonly ws: WebSocket;
  readonly index: number;
  inMulaw: boolean;
  outMulaw: boolean;
  interrupt: boolean;
  /** The in-band response running. */
  active: Reply | undefined;
  readonly replies: Map<string, Reply>;
  speaking: boolean;
  speechMs: number;
  quietMs: number;
  userItem: string;
  closed: boolean;
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

export async function startSoakRealtime(apiKey = "test-key"): Promise<SoakRealtime> {
  const stats = { connections: 0, turns: 0, toolCalls: 0, interrupted: 0 };
  const violations: string[] = [];
  let seq = 0;
  const id = (prefix: string): string => `${prefix}_${(++seq).toString(36)}`;
  const violation = (conn: Conn, text: string): void => {
    if (violations.length < 50) violations.push(`socket ${conn.index}: ${text}`);
  };
  const send = (conn: Conn, event: Record<string, unknown>): void => {
    if (!conn.closed) conn.ws.send(JSON.stringify({ event_id: id("event"), ...event }));
  };

  // ── responses ─────────────────────────────────────────────────────────────────────────

  const finish = (conn: Conn, reply: Reply, status: "completed" | "cancelled"): void => {
    clearTimeout(reply.timer);
    conn.replies.delete(reply.id);
    if (conn.active === reply) conn.active = undefined;
    for (const event of replyFinished(reply, status, false)) send(conn, event);
  };

  const audioStep = (conn: Conn, reply: Reply): void => {
    if (conn.closed || !conn.replies.has(reply.id)) return;
    for (const event of replyAudio(reply, conn.outMulaw ? MULAW_DELTA : PCM_DELTA, FRAME_MS)) send(conn, event);
    if (reply.sentMs >= reply.totalMs) return finish(conn, reply, "completed");
    reply.timer = setTimeout(() => audioStep(conn, reply), Math.max(0, reply.startedAt + reply.sentMs - performance.now()));
  };

  const speak = (conn: Conn, outOfBand: boolean, metadata: unknown, ms: number): void => {
    const reply: Reply = { id: id("resp"), itemId: id("item"), outOfBand, metadata, totalMs: ms, startedAt: performance.now(), sentMs: 0, transcript: "", timer: undefined };
    conn.replies.set(reply.id, reply);
    if (!outOfBand) conn.active = reply;
    for (const event of replyStarted(reply, false)) send(conn, event);
    audioStep(conn, reply);
  };

  /** A response that only calls `lookup_order`, sent at once. */
  const callTool = (conn: Conn): void => {
    stats.toolCalls += 1;
    const reply: Reply = { id: id("resp"), itemId: id("item"), outOfBand: false, metadata: null, totalMs: 0, startedAt: 0, sentMs: 0, transcript: "", timer: undefined };
    const callId = id("call");
    const args = JSON.stringify({ orderId: "A17" });
    send(conn, { type: "response.created", response: responseOf(reply, "in_progress", []) });
    const item = { id: reply.itemId, object: "realtime.item", type: "function_call", status: "in_progress", call_id: callId, name: "lookup_order", arguments: "" };
    send(conn, { type: "response.output_item.added", response_id: reply.id, output_index: 0, item });
    send(conn, { type: "response.function_call_arguments.done", response_id: reply.id, item_id: reply.itemId, output_index: 0, call_id: callId, name: "lookup_order", arguments: args });
    const done = { ...item, status: "completed", arguments: args };
    send(conn, { type: "response.output_item.done", response_id: reply.id, output_index: 0, item: done });
    send(conn, { type: "response.done", response: responseOf(reply, "completed", [done]) });
  };

  // ── the caller's voice ────────────────────────────────────────────────────────────────

  const loudness = (audio: Buffer, mulaw: boolean): number => {
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
  };

  const hear = (conn: Conn, audio: Buffer): void => {
    const ms = conn.inMulaw ? audio.length / 8 : audio.length / 48;
    const loud = loudness(audio, conn.inMulaw) > LOUD;
    if (!conn.speaking) {
      if (!loud) return;
      conn.speaking = true;
      conn.speechMs = ms;
      conn.quietMs = 0;
      conn.userItem = id("item");
      send(conn, { type: "input_audio_buffer.speech_started", audio_start_ms: 0, item_id: conn.userItem });
      if (conn.active !== undefined && conn.interrupt) {
        stats.interrupted += 1;
        finish(conn, conn.active, "cancelled");
      }
      return;
    }
    if (loud) {
      conn.speechMs += conn.quietMs + ms;
      conn.quietMs = 0;
      return;
    }
    conn.quietMs += ms;
    if (conn.quietMs < QUIET_END_MS) return;
    conn.speaking = false;
    stats.turns += 1;
    const item = conn.userItem;
    send(conn, { type: "input_audio_buffer.speech_stopped", audio_end_ms: Math.round(conn.speechMs), item_id: item });
    send(conn, { type: "input_audio_buffer.committed", item_id: item, previous_item_id: null });
    send(conn, { type: "conversation.item.added", previous_item_id: null, item: { id: item, object: "realtime.item", type: "message", role: "user", status: "completed", content: [{ type: "input_audio", transcript: null }] } });
    send(conn, { type: "conversation.item.input_audio_transcription.completed", item_id: item, content_index: 0, transcript: "where is my order", usage: { type: "duration", seconds: 1 } });
    if (conn.active !== undefined) finish(conn, conn.active, "cancelled");
    if (conn.speechMs >= TOOL_SPEECH_MS) callTool(conn);
    else speak(conn, false, null, REPLY_MS);
  };

  // ── client events ─────────────────────────────────────────────────────────────────────

  const onMessage = (conn: Conn, message: Record<string, unknown>): void => {
    switch (message.type) {
      case "input_audio_buffer.append":
        if (typeof message.audio === "string") hear(conn, Buffer.from(message.audio, "base64"));
        return;
      case "session.update": {
        const session = (message.session ?? {}) as { audio?: { input?: { format?: { type?: string }; turn_detection?: { interrupt_response?: boolean } }; output?: { format?: { type?: string } } } };
        const input = session.audio?.input?.format?.type;
        const output = session.audio?.output?.format?.type;
        if (input !== undefined) conn.inMulaw = input === "audio/pcmu";
        if (output !== undefined) conn.outMulaw = output === "audio/pcmu";
        const interrupt = session.audio?.input?.turn_detection?.interrupt_response;
        if (typeof interrupt === "boolean") conn.interrupt = interrupt;
        send(conn, { type: "session.updated", session: { type: "realtime", object: "realtime.session", model: "gpt-realtime", ...session } });
        return;
      }
      case "response.create": {
        const request = (message.response ?? {}) as Record<string, unknown>;
        const outOfBand = request.conversation === "none";
        if (!outOfBand && conn.active !== undefined) {
          violation(conn, "response.create while a response is active");
          send(conn, { type: "error", error: { type: "invalid_request_error", code: "conversation_already_has_active_response", message: "Conversation already has an active response" } });
          return;
        }
        speak(conn, outOfBand, request.metadata ?? null, outOfBand ? OUT_OF_BAND_MS : REPLY_MS);
        return;
      }
      case "response.cancel": {
        const target = typeof message.response_id === "string" ? conn.replies.get(message.response_id) : conn.active;
        if (target !== undefined) return finish(conn, target, "cancelled");
        send(conn, { type: "error", error: { type: "invalid_request_error", code: "response_cancel_not_active", message: "Cancellation failed: no active response found" } });
        return;
      }
      case "conversation.item.truncate":
        send(conn, { type: "conversation.item.truncated", item_id: message.item_id, content_index: 0, audio_end_ms: message.audio_end_ms });
        return;
      case "conversation.item.create":
        return;
      default:
        violation(conn, `unexpected client event ${String(message.type)}`);
    }
  };

  const wss = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    path: "/v1/realtime",
    perMessageDeflate: false,
    verifyClient: (info, callback) => callback(info.req.headers.authorization === `Bearer ${apiKey}`, 401, "Unauthorized"),
  });
  wss.on("connection", (ws) => {
    const conn: Conn = { ws, index: stats.connections++, inMulaw: false, outMulaw: false, interrupt: true, active: undefined, replies: new Map(), speaking: false, speechMs: 0, quietMs: 0, userItem: "", closed: false };
    ws.on("message", (data, isBinary) => {
      if (isBinary) return violation(conn, "binary frame");
      let message: Record<string, unknown>;
      try {
        message = JSON.parse((data as Buffer).toString("utf8")) as Record<string, unknown>;
      } catch {
        return violation(conn, "malformed JSON");
      }
      onMessage(conn, message);
    });
    ws.on("close", () => {
      conn.closed = true;
      for (const reply of conn.replies.values()) clearTimeout(reply.timer);
      conn.replies.clear();
      conn.active = undefined;
    });
    ws.on("error", () => undefined);
    send(conn, { type: "session.created", session: { type: "realtime", object: "realtime.session", id: id("sess"), model: "gpt-realtime", output_modalities: ["audio"] } });
  });
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  const { port } = wss.address() as AddressInfo;

  return {
    url: `ws://127.0.0.1:${port}/v1/realtime`,
    stats,
    violations,
    open: () => wss.clients.size,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
