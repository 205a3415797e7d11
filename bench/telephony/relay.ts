/**
 * The telephony floor: a minimal hand-written Twilio ↔ OpenAI Realtime relay, run as its own
 * process by bench/telephony/run.ts. μ-law passes through untouched both ways (the base64 payload
 * string is copied from one JSON frame into the other, never decoded). A mark follows every
 * 250 ms of agent audio and each reply's end; an echo moves the played position. On
 * `speech_started` while audio sent is not yet confirmed played (the caller still hears it): Twilio
 * `clear` and `conversation.item.truncate` at the played position. One `session.update`
 * (audio/pcmu both ways, server VAD that interrupts), one `response.create` for the greeting.
 * No session, pacing, events, metrics or logs.
 */
import WebSocket from "ws";
import { hostServer } from "./host.js";
import { MULAW_BYTES_PER_MS } from "./protocol.js";

/** A mark at least this often (ms of agent audio), as the gateway does. */
const MARK_EVERY_MS = 250;

interface TwilioFrame {
  readonly event?: string;
  readonly start?: { readonly streamSid?: string };
  readonly media?: { readonly payload?: string };
  readonly mark?: { readonly name?: string };
}

interface ServiceEvent {
  readonly type?: string;
  readonly delta?: string;
  readonly item_id?: string;
}

hostServer((twilio, providerUrl, problem) => {
  let streamSid = "";
  let upstream: WebSocket | undefined;
  /** The reply item playing, ms of it sent, ms of it sent at the last mark, and ms of it played. */
  let item = "";
  let sentMs = 0;
  let markedMs = 0;
  let playedMs = 0;
  /** Outstanding marks: name → the item and its ms before the mark. */
  const marks = new Map<string, { readonly item: string; readonly ms: number }>();
  let markSeq = 0;

  const up = (event: object): void => {
    if (upstream?.readyState === WebSocket.OPEN) upstream.send(JSON.stringify(event));
  };
  const down = (frame: object): void => {
    if (twilio.readyState === WebSocket.OPEN) twilio.send(JSON.stringify(frame));
  };
  const mark = (): void => {
    const name = `m${++markSeq}`;
    marks.set(name, { item, ms: sentMs });
    markedMs = sentMs;
    down({ event: "mark", streamSid, mark: { name } });
  };

  const fromService = (event: ServiceEvent): void => {
    switch (event.type) {
      case "response.output_audio.delta": {
        const payload = event.delta ?? "";
        if (event.item_id !== item) {
          item = event.item_id ?? "";
          sentMs = markedMs = playedMs = 0;
        }
        down({ event: "media", streamSid, media: { payload } });
        sentMs += Buffer.byteLength(payload, "base64") / MULAW_BYTES_PER_MS;
        if (sentMs - markedMs >= MARK_EVERY_MS) mark();
        return;
      }
      case "response.output_audio.done":
        if (sentMs > markedMs) mark();
        return;
      case "input_audio_buffer.speech_started":
        // Audio sent and not yet confirmed played: the caller still hears the agent.
        if (sentMs <= playedMs) return;
        marks.clear();
        down({ event: "clear", streamSid });
        up({ type: "conversation.item.truncate", item_id: item, content_index: 0, audio_end_ms: Math.floor(playedMs) });
        sentMs = markedMs = playedMs;
        return;
      case "error":
        problem(`service error: ${JSON.stringify(event).slice(0, 160)}`);
        return;
      default:
        return;
    }
  };

  const open = (): void => {
    const socket = new WebSocket(providerUrl, { headers: { authorization: "Bearer test-key" }, perMessageDeflate: false });
    upstream = socket;
    socket.on("open", () => {
      const format = { type: "audio/pcmu" };
      up({ type: "session.update", session: { type: "realtime", audio: { input: { format, turn_detection: { type: "server_vad", create_response: true, interrupt_response: true } }, output: { format } } } });
      up({ type: "response.create", response: { instructions: "Say exactly: Welcome to the bench line." } });
    });
    socket.on("message", (data) => fromService(JSON.parse((data as Buffer).toString("utf8")) as ServiceEvent));
    socket.on("close", () => twilio.close());
    socket.on("error", (err) => problem(`service socket: ${err.message}`));
  };

  twilio.on("message", (data) => {
    const frame = JSON.parse((data as Buffer).toString("utf8")) as TwilioFrame;
    switch (frame.event) {
      case "media":
        up({ type: "input_audio_buffer.append", audio: frame.media?.payload ?? "" });
        return;
      case "mark": {
        const reached = marks.get(frame.mark?.name ?? "");
        if (reached === undefined) return;
        // Marks echo in order: this one and every earlier one have played.
        for (const name of marks.keys()) {
          marks.delete(name);
          if (name === frame.mark?.name) break;
        }
        if (reached.item === item) playedMs = Math.max(playedMs, reached.ms);
        return;
      }
      case "start":
        streamSid = frame.start?.streamSid ?? "";
        open();
        return;
      case "stop":
        upstream?.close();
        return;
      default:
        return;
    }
  });
  twilio.on("close", () => upstream?.close());
  twilio.on("error", (err) => problem(`twilio socket: ${err.message}`));
});
