/**
 * The telephony bench's provider: a lean loopback fake of the OpenAI Realtime service (GA event
 * names, every event with an `event_id`, as the real one and the SDK's schemas expect), run as
 * its own process by bench/telephony/run.ts and shared by the three servers, so none of them pays
 * for it in its CPU figure.
 *
 * Per socket, after the first `session.update`: a greeting for any `response.create`, then
 * turns on the fake's own clock. A turn is `speech_started`, `userMs` of "speech", the VAD and
 * transcription events, then a reply of `replyMs` of μ-law sent in real time (one 20 ms delta
 * every 20 ms). Turns alternate: the next one starts either `gapMs` after the reply ended
 * (no barge-in) or `bargeAtMs` into the reply while it still plays (a barge-in: the reply is
 * cancelled, as `interrupt_response` asks).
 *
 * Measured here: each tagged `input_audio_buffer.append` on arrival (now − the caller's send
 * time in the tag), each delta's send time (written into the delta's own audio), and each
 * barge-in's `speech_started` send time, by caller (learnt from the callers' tags).
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { CALLER_TAG, cpuMs, FRAME_BYTES, FRAME_MS, inWindow, MODEL_TAG, readTag, SCRIPT, serveCalls, taggedFrame, type FakeTaken, type Window } from "./protocol.js";
import { replyAudio, replyFinished, replyStarted, type WireReply } from "../shared/realtime-wire.js";
import { monoMs } from "../shared/stats.js";

interface Reply extends WireReply {
  readonly onDone: (status: "completed" | "cancelled") => void;
}

interface Call {
  readonly ws: WebSocket;
  readonly index: number;
  /** The caller's number, from the tags of its audio (0 until the first tagged append). */
  client: number;
  updated: boolean;
  /** `audio.input.turn_detection.interrupt_response` (the service's default: true). */
  interrupt: boolean;
  active: Reply | undefined;
  turns: number;
  /** The script's next step. */
  timer: NodeJS.Timeout | undefined;
  closed: boolean;
}

/** What was measured since the last `collect`. */
const taken = {
  /** [caller send time, arrival − send time] per tagged append. */
  up: [] as number[],
  /** Send time of each tagged delta. */
  deltas: [] as number[],
  /** [speech_started send time, caller] per barge-in. */
  barges: [] as number[],
  /** Barge-ins on sockets whose caller was not known yet. */
  unattributed: 0,
  violations: [] as string[],
};
let seq = 0;
let connections = 0;
const id = (prefix: string): string => `${prefix}_${(++seq).toString(36)}`;

function violation(call: Call, text: string): void {
  if (taken.violations.length < 50) taken.violations.push(`socket ${call.index}: ${text}`);
}

function send(call: Call, event: Record<string, unknown>): void {
  if (!call.closed) call.ws.send(JSON.stringify({ event_id: id("event"), ...event }));
}

// ── replies ─────────────────────────────────────────────────────────────────────────────

function startReply(call: Call, options: { outOfBand: boolean; metadata: unknown; ms: number; onDone: Reply["onDone"] }): void {
  const reply: Reply = { id: id("resp"), itemId: id("item"), outOfBand: options.outOfBand, metadata: options.metadata, totalMs: options.ms, startedAt: monoMs(), onDone: options.onDone, sentMs: 0, transcript: "", timer: undefined };
  call.active = reply;
  for (const event of replyStarted(reply, true)) send(call, event);
  audioStep(call, reply);
}

/** One 20 ms delta (plus a transcript word every 100 ms), then the next on the real-time schedule. */
function audioStep(call: Call, reply: Reply): void {
  if (call.closed || call.active !== reply) return;
  // The tag's time is taken as late as possible: right before the event is serialized and sent.
  const at = monoMs();
  for (const event of replyAudio(reply, taggedFrame(MODEL_TAG, call.client, at).toString("base64"), FRAME_MS)) send(call, event);
  taken.deltas.push(at);
  if (reply.sentMs >= reply.totalMs) return finishReply(call, reply, "completed");
  reply.timer = setTimeout(() => audioStep(call, reply), Math.max(0, reply.startedAt + reply.sentMs - monoMs()));
}

/** The closing events of a reply (a cancelled one closes its open parts too), then `response.done`. */
function finishReply(call: Call, reply: Reply, status: "completed" | "cancelled"): void {
  clearTimeout(reply.timer);
  if (call.active === reply) call.active = undefined;
  for (const event of replyFinished(reply, status, true)) send(call, event);
  reply.onDone(status);
}

// ── the caller's turns ──────────────────────────────────────────────────────────────────

function schedule(call: Call, ms: number, step: () => void): void {
  clearTimeout(call.timer);
  call.timer = setTimeout(step, ms);
}

/** The caller starts speaking; a barge-in when a reply is still being sent (and so played). */
function userTurn(call: Call): void {
  if (call.closed) return;
  call.turns += 1;
  const userItem = id("item");
  const playing = call.active;
  if (playing !== undefined && !playing.outOfBand) {
    if (call.client === 0) taken.unattributed += 1;
    else taken.barges.push(monoMs(), call.client);
  }
  send(call, { type: "input_audio_buffer.speech_started", audio_start_ms: call.turns * 1000, item_id: userItem });
  if (playing !== undefined && call.interrupt) finishReply(call, playing, "cancelled");
  schedule(call, SCRIPT.userMs, () => userDone(call, userItem));
}

function userDone(call: Call, userItem: string): void {
  if (call.closed) return;
  send(call, { type: "input_audio_buffer.speech_stopped", audio_end_ms: call.turns * 1000 + SCRIPT.userMs, item_id: userItem });
  send(call, { type: "input_audio_buffer.committed", item_id: userItem, previous_item_id: null });
  const content = [{ type: "input_audio", transcript: null }];
  send(call, { type: "conversation.item.added", previous_item_id: null, item: { id: userItem, object: "realtime.item", type: "message", role: "user", status: "completed", content } });
  send(call, { type: "conversation.item.input_audio_transcription.completed", item_id: userItem, content_index: 0, transcript: `caller ${call.client} turn ${call.turns}`, usage: { type: "duration", seconds: 0.3 } });
  // Odd turns run to the end; even turns are barged in on.
  const barge = call.turns % 2 === 0;
  startReply(call, { outOfBand: false, metadata: null, ms: SCRIPT.replyMs, onDone: (status) => status === "completed" && schedule(call, SCRIPT.gapMs, () => userTurn(call)) });
  if (barge) schedule(call, SCRIPT.bargeAtMs, () => userTurn(call));
}

// ── client events ───────────────────────────────────────────────────────────────────────

function onSessionUpdate(call: Call, session: Record<string, unknown>): void {
  const audio = session.audio as { input?: { format?: { type?: string }; turn_detection?: { interrupt_response?: boolean } }; output?: { format?: { type?: string } } } | undefined;
  const input = audio?.input?.format?.type;
  const output = audio?.output?.format?.type;
  if (input !== undefined && input !== "audio/pcmu") violation(call, `input format ${input}, not audio/pcmu`);
  if (output !== undefined && output !== "audio/pcmu") violation(call, `output format ${output}, not audio/pcmu`);
  const interrupt = audio?.input?.turn_detection?.interrupt_response;
  if (typeof interrupt === "boolean") call.interrupt = interrupt;
  send(call, { type: "session.updated", session: { type: "realtime", object: "realtime.session", model: "gpt-realtime", ...session } });
  if (call.updated) return;
  call.updated = true;
  // Turns start after the greeting, or on their own if none is asked for.
  schedule(call, SCRIPT.noGreetingMs, () => userTurn(call));
}

function onMessage(call: Call, message: Record<string, unknown>, at: number): void {
  switch (message.type) {
    case "input_audio_buffer.append": {
      const tag = typeof message.audio === "string" ? readTag(message.audio, CALLER_TAG) : undefined;
      if (tag === undefined) return;
      taken.up.push(tag.at, at - tag.at);
      if (call.client === 0) call.client = tag.id;
      return;
    }
    case "session.update":
      return onSessionUpdate(call, (message.session ?? {}) as Record<string, unknown>);
    case "response.create": {
      if (call.active !== undefined) {
        send(call, { type: "error", error: { type: "invalid_request_error", code: "conversation_already_has_active_response", message: "Conversation already has an active response" } });
        return;
      }
      const request = (message.response ?? {}) as Record<string, unknown>;
      clearTimeout(call.timer);
      const onDone = (): void => schedule(call, SCRIPT.gapMs, () => userTurn(call));
      startReply(call, { outOfBand: request.conversation === "none", metadata: request.metadata ?? null, ms: SCRIPT.greetingMs, onDone });
      return;
    }
    case "response.cancel":
      if (call.active !== undefined) return finishReply(call, call.active, "cancelled");
      send(call, { type: "error", error: { type: "invalid_request_error", code: "response_cancel_not_active", message: "Cancellation failed: no active response found" } });
      return;
    case "conversation.item.truncate":
      send(call, { type: "conversation.item.truncated", item_id: message.item_id, content_index: 0, audio_end_ms: message.audio_end_ms });
      return;
    default:
      return;
  }
}

function accept(ws: WebSocket): void {
  const call: Call = { ws, index: connections++, client: 0, updated: false, interrupt: true, active: undefined, turns: 0, timer: undefined, closed: false };
  ws.on("message", (data, isBinary) => {
    const at = monoMs();
    if (isBinary) return violation(call, "binary frame");
    let message: Record<string, unknown>;
    try {
      message = JSON.parse((data as Buffer).toString("utf8")) as Record<string, unknown>;
    } catch {
      return violation(call, "malformed JSON");
    }
    onMessage(call, message, at);
  });
  ws.on("close", () => {
    call.closed = true;
    clearTimeout(call.timer);
    clearTimeout(call.active?.timer);
  });
  ws.on("error", () => undefined);
  send(call, { type: "session.created", session: { type: "realtime", object: "realtime.session", id: id("sess"), model: "gpt-realtime", output_modalities: ["audio"] } });
}

const wss = new WebSocketServer({
  host: "127.0.0.1",
  port: 0,
  perMessageDeflate: false,
  maxPayload: 4 * FRAME_BYTES * 1024,
  verifyClient: (info, callback) => callback(info.req.headers.authorization === "Bearer test-key", 401, "Unauthorized"),
});
wss.on("connection", accept);
await new Promise<void>((resolve) => wss.once("listening", resolve));
const { port } = wss.address() as AddressInfo;

serveCalls({
  url: () => `ws://127.0.0.1:${port}/v1/realtime`,
  cpu: () => cpuMs(),
  open: () => wss.clients.size,
  /** This window's figures (barge-ins: all since the last collect); everything taken so far is dropped. */
  collect: (window: Window): FakeTaken => {
    const result = {
      up: inWindow(taken.up, window),
      deltasSent: taken.deltas.filter((t) => t >= window.from && t <= window.to).length,
      // All of them: a clear in the window may answer a barge-in just before it.
      barges: taken.barges,
      unattributed: taken.unattributed,
      violations: taken.violations.splice(0),
    };
    Object.assign(taken, { up: [], deltas: [], barges: [], unattributed: 0 });
    return result;
  },
});
