// A fake OpenAI Realtime (GA) WebSocket server (docs/vendors.md (OpenAI Realtime)) on loopback: the one
// the s2s adapter tests, the gateway tests and the benches (s2s, telephony, scale, soak) all run on.
//
// It speaks the real event sequences: `session.created` on connect, `session.updated` for each
// `session.update`, and for each `response.create` a scripted response (the next enqueued turn):
// `response.created` → `response.output_item.added` → audio + transcript deltas → the `.done`
// events → `response.done`, or for a tool call the `function_call` item with
// `response.function_call_arguments.delta/.done`. It checks the Bearer key (401 otherwise), records
// every client message with its connection index, and notes protocol mistakes the real service
// would answer with an `error` in `violations` (among them a `session.update` that changes the
// voice once the model has responded with audio on that socket).
//
// Audio is deterministic: `chunkMs` (20 ms) per delta at 24 kHz, a ramp (`rampPcm`) so a test can
// compare bytes; the transcript deltas are the turn's words spread over the audio chunks.
//
// Errors name the client event that caused them (`error.event_id`, when the client set one: the
// `RealtimeError` type of the `openai` SDK, "The event_id of the client event that caused the error,
// if applicable"). Their `code` and `message` are not a contract: `refusals` rewords the two the
// adapter meets in normal operation (a `response.create` while an in-band response runs, a
// `response.cancel` with nothing to cancel), so a test can show the adapter does not read them.
//
// With `manualResponses` the test plays the service itself: `response.create` is recorded and left
// waiting, and `startResponse` / `speakIn` / `callIn` / `finish` send the same event sequences one
// step at a time (a cancel, or the caller's speech with `interrupt_response`, ends the response at once).
//
// A bench plays the caller instead (`FakeCallerDriver`): it hears each connection's appended audio
// (`onAppend`), drives that connection's turns (`speechStarted` / `speechStopped` / `userSays` take a
// connection), picks each response (`reply`) and learns when it ends (`onResponseDone`). With
// `realTime`, audio goes out on the wall clock (one `chunkMs` delta every `chunkMs`); with `record:
// false` the fake keeps no history (no messages, audio or events), so it can run for as long as a soak.
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { loopbackServer } from "./loopback.js";

export const REALTIME_RATE = 24_000;

/** How the fake words one kind of error. */
export interface FakeRealtimeErrorWording {
  /** `error.code`; omitted: the error has none. */
  readonly code?: string;
  readonly message: string;
  /** Name the client event in `error.event_id` (default true, as documented). */
  readonly echoEventId?: boolean;
}

/** One scripted response. */
export interface FakeRealtimeTurn {
  /** Spoken text: audio deltas plus transcript deltas. */
  readonly say?: string;
  /** Audio length of `say` (default 200 ms). */
  readonly audioMs?: number;
  /** A function call after the message (args: JSON-encoded unless a string, which is sent raw). */
  readonly toolCall?: { readonly name: string; readonly args: unknown };
  /** Several calls in one response. */
  readonly toolCalls?: readonly { readonly name: string; readonly args: unknown }[];
}

/** A response as it ends (`onResponseDone`). */
export interface FakeRealtimeEnded {
  readonly id: string;
  readonly outOfBand: boolean;
  readonly status: "completed" | "cancelled";
}

/**
 * A caller played by a bench: hooks the fake calls per connection. Each runs synchronously inside
 * the fake's handling of the event that triggers it.
 */
export interface FakeCallerDriver {
  /** Each decoded `input_audio_buffer.append`, as it arrives. */
  onAppend?(connection: FakeRealtimeConnection, audio: Buffer): void;
  /** After each answered `session.update` (`connection.session` holds the merged session). */
  onSessionUpdate?(connection: FakeRealtimeConnection): void;
  /** The response to a `response.create` (`request`: its `response` object) or to the service's own VAD turn (undefined); default: the queue. */
  reply?(connection: FakeRealtimeConnection, request: Record<string, unknown> | undefined): FakeRealtimeTurn;
  /** After each scripted response's `response.done`. */
  onResponseDone?(connection: FakeRealtimeConnection, response: FakeRealtimeEnded): void;
  /** The audio of one delta, `ms` long, `offsetMs` into its item, called as it is sent (default: the ramps). */
  audio?(connection: FakeRealtimeConnection, ms: number, offsetMs: number): Buffer;
}

export interface FakeOpenAiRealtimeOptions {
  /** The accepted key (default "test-key"). */
  readonly apiKey?: string;
  /** Audio per delta (default 20 ms). */
  readonly chunkMs?: number;
  /** Real-time pause between audio deltas (default 0: one event-loop turn). */
  readonly paceMs?: number;
  /** Send each delta at its place on the wall clock (the response's start + the audio sent before it); overrides `paceMs`. */
  readonly realTime?: boolean;
  /** Keep the history (`messages`, each connection's `messages`, `audioIn`, events sent; default true). Off, `violations` keeps the first 50. */
  readonly record?: boolean;
  /** A caller played by a bench (see the header). */
  readonly driver?: FakeCallerDriver;
  /**
   * Note a second `session.update` on a socket in `violations` (default true). The service accepts
   * any number; one per socket is the gateway adapter's own rule (docs/vendors.md (OpenAI Realtime)),
   * which its tests hold it to. Off for a peer that updates again (the Agents SDK).
   */
  readonly oneSessionUpdate?: boolean;
  /** Send the beta event names (`response.audio.delta`, `response.audio_transcript.delta`). */
  readonly betaNames?: boolean;
  /** Never send `session.created` (a hung handshake). */
  readonly silent?: boolean;
  /** Never answer `session.update` (a hung setup). */
  readonly holdSessionUpdated?: boolean;
  /** The test plays the service: `response.create` waits for `startResponse` (see the header). */
  readonly manualResponses?: boolean;
  /**
   * The wording of the service's refusals (default: what the service says today,
   * `conversation_already_has_active_response` and `response_cancel_not_active`).
   */
  readonly refusals?: {
    /** A `response.create` for the default conversation while an in-band response runs. */
    readonly activeResponse?: FakeRealtimeErrorWording;
    /** A `response.cancel` with no such response running. */
    readonly cancelNotActive?: FakeRealtimeErrorWording;
  };
}

/** A response started with `startResponse` (manual mode). */
export interface FakeRealtimeResponse {
  readonly id: string;
  readonly outOfBand: boolean;
  /** The connection it runs on. */
  readonly connection: number;
}

export interface FakeRealtimeConnection {
  readonly index: number;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  /** Parsed client messages on this connection, in order. */
  readonly messages: Record<string, unknown>[];
  /** The effective session (merged `session.update`s). */
  session: Record<string, unknown>;
  /** Decoded `input_audio_buffer.append` audio. */
  audioIn(): Buffer;
  /** Conversation items (ids, types), in order: what this socket's conversation holds. */
  readonly items: { id: string; type: string; role?: string; callId?: string }[];
  open: boolean;
  /** An in-band response is running. */
  readonly responding: boolean;
  /** This connection's `session.update` is never answered (`holdSessionUpdated`, or `holdNextSetup`). */
  holdSetup: boolean;
}

export interface FakeRealtimeMessage {
  readonly connection: number;
  readonly message: Record<string, unknown>;
}

export interface FakeOpenAiRealtime {
  /** ws://127.0.0.1:PORT/v1/realtime */
  readonly url: string;
  readonly connections: FakeRealtimeConnection[];
  /** Every client message, all connections, in order, with the connection index. */
  readonly messages: FakeRealtimeMessage[];
  /** `session.update`s received, per connection. */
  readonly sessionUpdates: number[];
  /** Protocol mistakes (the real service would answer with an error). */
  readonly violations: string[];
  /** WebSocket upgrade requests seen (refused ones too). */
  readonly upgrades: number;
  /** Queue scripted responses (used in order; when empty a response says "Okay."). */
  enqueue(...turns: FakeRealtimeTurn[]): void;
  /** The caller starts speaking on `connection` (default: the latest open one): `speech_started`, and a running response is cancelled if `interrupt_response`. */
  speechStarted(connection?: FakeRealtimeConnection): void;
  /** The caller stops: `speech_stopped`, commit, transcription, then the automatic response (resolves when it is done). */
  speechStopped(text: string, connection?: FakeRealtimeConnection): Promise<void>;
  /** A whole caller turn: VAD, commit, transcription, then the automatic response (resolves when it is done). */
  userSays(text: string, connection?: FakeRealtimeConnection): Promise<void>;
  /** Send an event to the latest open connection. */
  send(event: Record<string, unknown>): void;
  /** Send a raw text frame to the latest open connection. */
  sendRaw(text: string): void;
  /** Terminate every open socket (no close frame: the client sees 1006). */
  drop(): void;
  /** Terminate the sockets when the client next sends a message of this type (recorded, not answered); undefined disarms. */
  dropOn(type: string | undefined): void;
  /** Close the latest connection with this code. */
  closeWith(code: number, reason?: string): void;
  /** The next connection's `session.update` is never answered (a setup that hangs, once). */
  holdNextSetup(): void;
  /** Refuse upgrades with this HTTP status (undefined: accept again); `times`: only the next that many, then accept. */
  refuse(status: number | undefined, times?: number): void;
  /** Manual mode: start the oldest waiting `response.create` the latest connection can run, else (no response active) one of the service's own, as its VAD would. */
  startResponse(): FakeRealtimeResponse | undefined;
  /** Manual mode: the responses running on the latest open connection, oldest first. */
  running(): FakeRealtimeResponse[];
  /** Manual mode: a message item in a running response, `ms` of audio with `text` as its transcript. */
  speakIn(responseId: string, text: string, ms: number): void;
  /** Manual mode: a function call in a running in-band response; its call_id. */
  callIn(responseId: string, name: string, args: unknown): string | undefined;
  /** Manual mode: end a running response (`response.done`). */
  finish(responseId: string, status?: "completed" | "cancelled"): void;
  /** Open sockets right now. */
  openSockets(): number;
  close(): Promise<void>;
}

/** The fake's audio: `ms` of PCM16 at 24 kHz, sample n = (offset + n) % 2000 * 8 (a ramp). */
export function rampPcm(ms: number, offsetSamples = 0): Buffer {
  const samples = Math.round((ms * REALTIME_RATE) / 1000);
  const pcm = Buffer.alloc(samples * 2);
  for (let n = 0; n < samples; n++) pcm.writeInt16LE(((offsetSamples + n) % 2000) * 8, n * 2);
  return pcm;
}

/** The fake's G.711 audio: `ms` of 8 kHz bytes, byte n = (offset + n) % 256, so a test can check bytes cross untouched. */
export function rampG711(ms: number, offsetSamples = 0): Buffer {
  const bytes = Buffer.alloc(Math.round(ms * 8));
  for (let n = 0; n < bytes.length; n++) bytes[n] = (offsetSamples + n) % 256;
  return bytes;
}

/** The output format the session asked for: `audio/pcm` (24 kHz PCM16) or G.711 (8 kHz). */
function outputIsG711(session: Record<string, unknown>): boolean {
  const type = (session.audio as { output?: { format?: { type?: string } } } | undefined)?.output?.format?.type;
  return type === "audio/pcmu" || type === "audio/pcma";
}

interface Running {
  readonly id: string;
  readonly outOfBand: boolean;
  cancelled: string | undefined;
  readonly done: Promise<void>;
  /** Ends a real-time wait between deltas at once (a cancel does not wait for the next delta). */
  wake?: () => void;
}

/** Cancels `running` with `reason` (the first reason stands) and wakes its sender. */
function cancel(running: Running, reason: string): void {
  running.cancelled ??= reason;
  running.wake?.();
}

/** A response the test plays (manual mode). */
interface Manual {
  readonly running: Running;
  readonly output: Record<string, unknown>[];
  readonly metadata: unknown;
  readonly finish: () => void;
  nextIndex: number;
}

interface Conn extends FakeRealtimeConnection {
  readonly ws: WebSocket;
  readonly audio: Buffer[];
  readonly itemAudioMs: Map<string, number>;
  readonly running: Map<string, Running>;
  active: Running | undefined;
  /** Manual mode: responses started by the test, and `response.create` requests not started yet. */
  readonly manual: Map<string, Manual>;
  readonly waiting: (Record<string, unknown> | undefined)[];
  /** Every event sent, for debugging. */
  readonly sent: Record<string, unknown>[];
  /** The item of the caller's speech in progress (`speechStarted` … `speechStopped`). */
  speechItem: string | undefined;
  /** The model has responded with audio on this socket: from then on its voice cannot change. */
  spoke: boolean;
}

/** A function call opened in a response (`openCall`), until `closeCall`. */
interface OpenCall {
  readonly item: { readonly id: string; readonly type: string; readonly name: string; readonly call_id: string } & Record<string, unknown>;
  readonly argsText: string;
  readonly base: { readonly response_id: string; readonly item_id: string; readonly output_index: number; readonly call_id: string };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function startFakeOpenAiRealtime(options: FakeOpenAiRealtimeOptions = {}): Promise<FakeOpenAiRealtime> {
  const apiKey = options.apiKey ?? "test-key";
  const chunkMs = options.chunkMs ?? 20;
  const paceMs = options.paceMs ?? 0;
  const realTime = options.realTime === true;
  const record = options.record !== false;
  const driver = options.driver ?? {};
  const audioName = options.betaNames === true ? "response.audio" : "response.output_audio";
  const transcriptName = options.betaNames === true ? "response.audio_transcript" : "response.output_audio_transcript";
  const connections: Conn[] = [];
  const messages: FakeRealtimeMessage[] = [];
  const sessionUpdates: number[] = [];
  const violations: string[] = [];
  const turns: FakeRealtimeTurn[] = [];
  let upgrades = 0;
  let refusal: number | undefined;
  let refusals = Number.POSITIVE_INFINITY;
  let dropOnType: string | undefined;
  let holdNext = false;
  let seq = 0;
  const id = (prefix: string): string => `${prefix}_${++seq}`;

  const server = loopbackServer();
  const wss = server.webSockets({
    path: "/v1/realtime",
    verifyClient: (info, callback) => {
      upgrades++;
      if (refusal !== undefined) {
        const status = refusal;
        if (--refusals <= 0) refusal = undefined;
        return callback(false, status, "Unavailable");
      }
      const key = /^Bearer (.+)$/.exec(info.req.headers.authorization ?? "")?.[1];
      if (key !== apiKey) return callback(false, 401, "Unauthorized");
      callback(true);
    },
  });

  const latest = (): Conn | undefined => [...connections].reverse().find((c) => c.open);
  const dropAll = (): void => {
    for (const c of connections) if (c.open) c.ws.terminate();
  };

  const violation = (text: string): void => {
    if (record || violations.length < 50) violations.push(text);
  };
  const send = (conn: Conn, event: Record<string, unknown>): void => {
    const full = { event_id: id("event"), ...event };
    if (record) conn.sent.push(full);
    if (conn.open) conn.ws.send(JSON.stringify(full));
  };
  /** An `error` answering `cause` (the client message, if any): `event_id` names it when it had one. */
  const error = (conn: Conn, cause: Record<string, unknown> | undefined, wording: FakeRealtimeErrorWording, mistake = true): void => {
    if (mistake) violation(`connection ${conn.index}: ${wording.message}`);
    const eventId = wording.echoEventId !== false && typeof cause?.event_id === "string" ? cause.event_id : null;
    send(conn, { type: "error", error: { type: "invalid_request_error", ...(wording.code === undefined ? {} : { code: wording.code }), message: wording.message, param: null, event_id: eventId } });
  };
  /** An output item joins the conversation (an out-of-band response's do not): `conversation.item.added` with the whole item, as the service sends it. */
  const addItem = (conn: Conn, outOfBand: boolean, item: Record<string, unknown> & { id: string; type: string }): void => {
    if (outOfBand) return;
    const previous = conn.items.at(-1)?.id ?? null;
    conn.items.push({ id: item.id, type: item.type, ...(typeof item.role === "string" ? { role: item.role } : {}), ...(typeof item.call_id === "string" ? { callId: item.call_id } : {}) });
    send(conn, { type: "conversation.item.added", previous_item_id: previous, item });
  };
  /** A function call opens in a response: its item (`response.output_item.added`, and the conversation's), the arguments as text, and the fields its argument events carry. */
  const openCall = (conn: Conn, outOfBand: boolean, responseId: string, outputIndex: number, name: string, args: unknown): OpenCall => {
    const itemId = id("item");
    const callId = id("call");
    const argsText = typeof args === "string" ? args : JSON.stringify(args);
    const item = { id: itemId, object: "realtime.item", type: "function_call", status: "in_progress", call_id: callId, name, arguments: "" };
    send(conn, { type: "response.output_item.added", response_id: responseId, output_index: outputIndex, item });
    addItem(conn, outOfBand, item);
    return { item, argsText, base: { response_id: responseId, item_id: itemId, output_index: outputIndex, call_id: callId } };
  };
  /** A call's arguments are complete: `.done`, then the finished item (`response.output_item.done`, and the conversation's); returns that item. */
  const closeCall = (conn: Conn, outOfBand: boolean, { item, argsText, base }: OpenCall): Record<string, unknown> => {
    send(conn, { type: "response.function_call_arguments.done", ...base, name: item.name, arguments: argsText });
    const doneItem = { ...item, status: "completed", arguments: argsText };
    send(conn, { type: "response.output_item.done", response_id: base.response_id, output_index: base.output_index, item: doneItem });
    if (!outOfBand) send(conn, { type: "conversation.item.done", item: doneItem });
    return doneItem;
  };
  const turnDetection = (conn: Conn): Record<string, unknown> => {
    const audio = conn.session.audio as { input?: { turn_detection?: Record<string, unknown> } } | undefined;
    return audio?.input?.turn_detection ?? {};
  };

  /** One scripted response on `conn`: resolves when `response.done` is sent. */
  /** `response.done` for `running`: completed, or cancelled with its reason. */
  const sendDone = (conn: Conn, running: Running, output: unknown[], conversationId: string | null, metadata: unknown): void => {
    const cancelled = running.cancelled;
    send(conn, {
      type: "response.done",
      response: {
        id: running.id,
        object: "realtime.response",
        status: cancelled === undefined ? "completed" : "cancelled",
        status_details: cancelled === undefined ? null : { type: "cancelled", reason: cancelled },
        output,
        conversation_id: conversationId,
        metadata,
        usage: { total_tokens: 30, input_tokens: 20, output_tokens: 10 },
      },
    });
  };
  const respond = (conn: Conn, request: Record<string, unknown> | undefined): Running => {
    const outOfBand = request?.conversation === "none";
    const turn = driver.reply?.(conn, request) ?? turns.shift() ?? { say: "Okay." };
    const responseId = id("resp");
    let finish!: () => void;
    const running: Running = { id: responseId, outOfBand, cancelled: undefined, done: new Promise<void>((resolve) => (finish = resolve)) };
    const startedAt = performance.now();
    /** Real time: until this response has `audioMs` of audio on the wall clock, or a cancel. */
    const due = (audioMs: number): Promise<void> =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(), Math.max(0, startedAt + audioMs - performance.now()));
        running.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    let audioSent = 0;
    conn.running.set(responseId, running);
    if (!outOfBand) conn.active = running;
    const conversationId = outOfBand ? null : "conv_1";
    const metadata = request?.metadata ?? null;
    const output: Record<string, unknown>[] = [];
    const live = (): boolean => conn.open && running.cancelled === undefined;

    const speak = async (text: string, ms: number, outputIndex: number): Promise<void> => {
      const itemId = id("item");
      const base = { response_id: responseId, item_id: itemId, output_index: outputIndex, content_index: 0 };
      const item = { id: itemId, object: "realtime.item", type: "message", role: "assistant", status: "in_progress", content: [] };
      send(conn, { type: "response.output_item.added", response_id: responseId, output_index: outputIndex, item });
      addItem(conn, outOfBand, item);
      send(conn, { type: "response.content_part.added", ...base, part: { type: "audio", transcript: "" } });
      const words = text.match(/\S+\s*/g) ?? [];
      const chunks = Math.max(1, Math.ceil(ms / chunkMs));
      let spoken = "";
      let word = 0;
      let sentMs = 0;
      for (let i = 0; i < chunks && live(); i++) {
        const chunk = Math.min(chunkMs, ms - sentMs);
        const audio = driver.audio?.(conn, chunk, sentMs) ?? (outputIsG711(conn.session) ? rampG711(chunk, sentMs * 8) : rampPcm(chunk, Math.round((sentMs * REALTIME_RATE) / 1000)));
        send(conn, { type: `${audioName}.delta`, ...base, delta: audio.toString("base64") });
        conn.spoke = true;
        sentMs += chunk;
        conn.itemAudioMs.set(itemId, sentMs);
        // Words spread over the chunks: word j goes out with chunk floor(j * chunks / words).
        while (word < words.length && Math.floor((word * chunks) / words.length) <= i) {
          const delta = words[word++]!;
          spoken += delta;
          send(conn, { type: `${transcriptName}.delta`, ...base, delta });
        }
        audioSent += chunk;
        if (realTime) await due(audioSent);
        else if (paceMs > 0) await sleep(paceMs);
        else await tick();
      }
      if (!conn.open) return;
      // A cancelled response still closes its open parts before `response.done` (docs/vendors.md (OpenAI Realtime)).
      send(conn, { type: `${audioName}.done`, ...base });
      send(conn, { type: `${transcriptName}.done`, ...base, transcript: spoken });
      send(conn, { type: "response.content_part.done", ...base, part: { type: "audio", transcript: spoken } });
      const status = running.cancelled === undefined ? "completed" : "incomplete";
      const doneItem = { ...item, status, content: [{ type: "output_audio", transcript: spoken }] };
      output.push(doneItem);
      send(conn, { type: "response.output_item.done", response_id: responseId, output_index: outputIndex, item: doneItem });
      if (!outOfBand) send(conn, { type: "conversation.item.done", item: doneItem });
    };

    const call = async (name: string, args: unknown, outputIndex: number): Promise<void> => {
      const { item, argsText, base } = openCall(conn, outOfBand, responseId, outputIndex, name, args);
      const half = Math.ceil(argsText.length / 2);
      for (const delta of [argsText.slice(0, half), argsText.slice(half)]) {
        if (!live()) break;
        send(conn, { type: "response.function_call_arguments.delta", ...base, delta });
        await tick();
      }
      if (!live()) return;
      output.push(closeCall(conn, outOfBand, { item, argsText, base }));
    };

    void (async () => {
      send(conn, {
        type: "response.created",
        response: { id: responseId, object: "realtime.response", status: "in_progress", status_details: null, output: [], conversation_id: conversationId, metadata, usage: null },
      });
      await tick();
      let index = 0;
      if (turn.say !== undefined && live()) await speak(turn.say, turn.audioMs ?? 200, index++);
      for (const c of [...(turn.toolCall === undefined ? [] : [turn.toolCall]), ...(turn.toolCalls ?? [])]) {
        if (live()) await call(c.name, c.args, index++);
      }
      conn.running.delete(responseId);
      if (conn.active === running) conn.active = undefined;
      sendDone(conn, running, output, conversationId, metadata);
      finish();
      if (conn.open) driver.onResponseDone?.(conn, { id: responseId, outOfBand, status: running.cancelled === undefined ? "completed" : "cancelled" });
    })();
    return running;
  };

  const onMessage = (conn: Conn, message: Record<string, unknown>): void => {
    const type = message.type;
    if (type !== "session.update" && (sessionUpdates[conn.index] ?? 0) === 0) violation(`connection ${conn.index}: ${String(type)} before session.update`);
    switch (type) {
      case "session.update": {
        sessionUpdates[conn.index] = (sessionUpdates[conn.index] ?? 0) + 1;
        if (sessionUpdates[conn.index]! > 1 && options.oneSessionUpdate !== false) violation(`connection ${conn.index}: session.update #${sessionUpdates[conn.index]}`);
        const session = (message.session ?? {}) as Record<string, unknown>;
        if (session.type !== "realtime") return error(conn, message, { code: "invalid_value", message: "session.type must be 'realtime'" });
        // The service's rule (session.update, `voice`): it cannot change once the model has responded with audio.
        const voiceOf = (s: Record<string, unknown>): unknown => (s.audio as { output?: { voice?: unknown } } | undefined)?.output?.voice;
        const voice = voiceOf(session);
        if (conn.spoke && voice !== undefined && JSON.stringify(voice) !== JSON.stringify(voiceOf(conn.session))) {
          return error(conn, message, { code: "invalid_value", message: "the voice cannot be changed once the model has responded with audio" });
        }
        conn.session = { ...conn.session, ...session };
        if (conn.holdSetup) return;
        send(conn, { type: "session.updated", session: conn.session });
        driver.onSessionUpdate?.(conn);
        return;
      }
      case "input_audio_buffer.append": {
        const audio = Buffer.from(String(message.audio), "base64");
        if (record) conn.audio.push(audio);
        driver.onAppend?.(conn, audio);
        return;
      }
      case "conversation.item.create": {
        const item = (message.item ?? {}) as Record<string, unknown>;
        const itemId = id("item");
        if (item.type === "function_call_output" && !conn.items.some((i) => i.callId === item.call_id)) {
          violation(`connection ${conn.index}: function_call_output for unknown call ${String(item.call_id)}`);
        }
        const previous = conn.items.at(-1)?.id ?? null;
        const entry = { id: itemId, type: String(item.type), ...(typeof item.role === "string" ? { role: item.role } : {}), ...(typeof item.call_id === "string" && item.type === "function_call" ? { callId: item.call_id } : {}) };
        conn.items.push(entry);
        send(conn, { type: "conversation.item.added", previous_item_id: previous, item: { ...item, id: itemId } });
        send(conn, { type: "conversation.item.done", previous_item_id: previous, item: { ...item, id: itemId, status: "completed" } });
        return;
      }
      case "conversation.item.truncate": {
        const itemId = String(message.item_id);
        const audioMs = conn.itemAudioMs.get(itemId);
        const end = message.audio_end_ms;
        if (audioMs === undefined) return error(conn, message, { code: "item_not_found", message: `truncate: no assistant audio item ${itemId}` });
        if (message.content_index !== 0) return error(conn, message, { code: "invalid_value", message: "truncate: content_index must be 0" });
        if (typeof end !== "number" || end < 0 || end > audioMs) {
          return error(conn, message, { code: "invalid_value", message: `truncate: audio_end_ms ${String(end)} is past the item's ${audioMs} ms of audio` });
        }
        send(conn, { type: "conversation.item.truncated", item_id: itemId, content_index: 0, audio_end_ms: end });
        return;
      }
      case "conversation.item.delete": {
        const itemId = String(message.item_id);
        const index = conn.items.findIndex((item) => item.id === itemId);
        if (index === -1) return error(conn, message, { code: "item_not_found", message: `delete: no item ${itemId}` });
        conn.items.splice(index, 1);
        send(conn, { type: "conversation.item.deleted", item_id: itemId });
        return;
      }
      case "response.create": {
        const request = message.response as Record<string, unknown> | undefined;
        if (request?.conversation !== "none" && conn.active !== undefined) {
          const wording = options.refusals?.activeResponse ?? { code: "conversation_already_has_active_response", message: `Conversation already has an active response in progress: ${conn.active.id}` };
          return error(conn, message, wording);
        }
        if (options.manualResponses === true) conn.waiting.push(request);
        else respond(conn, request);
        return;
      }
      case "response.cancel": {
        const target = typeof message.response_id === "string" ? conn.running.get(message.response_id) : conn.active;
        if (target === undefined || target.cancelled !== undefined) {
          // "It's safe to call `response.cancel` even if no response is in progress" (the `openai` SDK's `ResponseCancelEvent`).
          return error(conn, message, options.refusals?.cancelNotActive ?? { code: "response_cancel_not_active", message: "Cancellation failed: no active response found" }, false);
        }
        cancel(target, "client_cancelled");
        conn.manual.get(target.id)?.finish();
        return;
      }
      default:
        return;
    }
  };

  wss.on("connection", (ws, req) => {
    const audio: Buffer[] = [];
    const conn: Conn = {
      index: connections.length,
      url: req.url ?? "",
      headers: req.headers,
      messages: [],
      session: { type: "realtime", model: "gpt-realtime", output_modalities: ["audio"] },
      audioIn: () => Buffer.concat(audio),
      items: [],
      open: true,
      get responding() {
        return this.active !== undefined;
      },
      holdSetup: options.holdSessionUpdated === true || holdNext,
      ws,
      audio,
      itemAudioMs: new Map(),
      running: new Map(),
      active: undefined,
      manual: new Map(),
      waiting: [],
      sent: [],
      speechItem: undefined,
      spoke: false,
    };
    connections.push(conn);
    holdNext = false;
    sessionUpdates.push(0);
    if (req.headers["openai-beta"] !== undefined) violation(`connection ${conn.index}: OpenAI-Beta header on a GA connection`);
    ws.on("close", () => {
      conn.open = false;
      for (const running of conn.running.values()) running.wake?.();
      if (!record) conn.itemAudioMs.clear();
    });
    ws.on("error", () => undefined);
    ws.on("message", (data, isBinary) => {
      // Frames read in the same chunk as the one that dropped or closed the socket: the service is gone.
      if (ws.readyState !== ws.OPEN) return;
      if (isBinary) return error(conn, undefined, { code: "invalid_request_error", message: "binary frames are not accepted" });
      let message: Record<string, unknown>;
      try {
        message = JSON.parse((data as Buffer).toString("utf8")) as Record<string, unknown>;
      } catch {
        return error(conn, undefined, { code: "invalid_json", message: "malformed JSON" });
      }
      if (record) {
        messages.push({ connection: conn.index, message });
        conn.messages.push(message);
      }
      if (dropOnType !== undefined && message.type === dropOnType) {
        dropOnType = undefined;
        dropAll();
        return;
      }
      onMessage(conn, message);
    });
    if (options.silent !== true) send(conn, { type: "session.created", session: conn.session });
  });

  const port = await server.listen();

  const speechStarted = (conn: Conn): string => {
    const itemId = id("item");
    conn.speechItem = itemId;
    send(conn, { type: "input_audio_buffer.speech_started", audio_start_ms: 1000, item_id: itemId });
    if (conn.active !== undefined && turnDetection(conn).interrupt_response !== false) {
      cancel(conn.active, "turn_detected");
      conn.manual.get(conn.active.id)?.finish();
    }
    return itemId;
  };
  const speechStopped = async (conn: Conn, text: string): Promise<void> => {
    const itemId = conn.speechItem ?? id("item");
    conn.speechItem = undefined;
    const previous = conn.items.at(-1)?.id ?? null;
    send(conn, { type: "input_audio_buffer.speech_stopped", audio_end_ms: 2000, item_id: itemId });
    send(conn, { type: "input_audio_buffer.committed", item_id: itemId, previous_item_id: previous });
    conn.items.push({ id: itemId, type: "message", role: "user" });
    send(conn, { type: "conversation.item.added", previous_item_id: previous, item: { id: itemId, type: "message", role: "user", content: [{ type: "input_audio", transcript: null }] } });
    for (const delta of text.match(/\S+\s*/g) ?? []) {
      send(conn, { type: "conversation.item.input_audio_transcription.delta", item_id: itemId, content_index: 0, delta });
      await tick();
    }
    send(conn, { type: "conversation.item.input_audio_transcription.completed", item_id: itemId, content_index: 0, transcript: text, usage: { type: "duration", seconds: 1 } });
    if (turnDetection(conn).create_response === false) return;
    // A barged-in response finishes (cancelled) before the new one starts.
    await conn.active?.done;
    await respond(conn, undefined).done;
  };
  /** `connection` as the fake holds it, or the latest open one. */
  const target = (connection: FakeRealtimeConnection | undefined): Conn | undefined => (connection === undefined ? latest() : connections[connection.index]);

  // --- Manual mode: the test plays the service, one event sequence at a time ---
  const manualOn = (responseId: string): { conn: Conn; manual: Manual } | undefined => {
    const conn = latest();
    const manual = conn?.manual.get(responseId);
    return conn === undefined || manual === undefined ? undefined : { conn, manual };
  };
  const startManual = (conn: Conn, request: Record<string, unknown> | undefined): FakeRealtimeResponse => {
    const outOfBand = request?.conversation === "none";
    const responseId = id("resp");
    const conversationId = outOfBand ? null : "conv_1";
    const metadata = request?.metadata ?? null;
    const output: Record<string, unknown>[] = [];
    let ended = false;
    const running: Running = { id: responseId, outOfBand, cancelled: undefined, done: Promise.resolve() };
    const finish = (): void => {
      if (ended) return;
      ended = true;
      conn.running.delete(responseId);
      conn.manual.delete(responseId);
      if (conn.active === running) conn.active = undefined;
      sendDone(conn, running, output, conversationId, metadata);
    };
    conn.running.set(responseId, running);
    conn.manual.set(responseId, { running, output, metadata, finish, nextIndex: 0 });
    if (!outOfBand) conn.active = running;
    send(conn, {
      type: "response.created",
      response: { id: responseId, object: "realtime.response", status: "in_progress", status_details: null, output: [], conversation_id: conversationId, metadata, usage: null },
    });
    return { id: responseId, outOfBand, connection: conn.index };
  };

  return {
    url: `ws://127.0.0.1:${port}/v1/realtime`,
    connections,
    messages,
    sessionUpdates,
    violations,
    get upgrades() {
      return upgrades;
    },
    enqueue(...more) {
      turns.push(...more);
    },
    speechStarted(connection) {
      const conn = target(connection);
      if (conn !== undefined) speechStarted(conn);
    },
    async speechStopped(text, connection) {
      const conn = target(connection);
      if (conn === undefined) throw new Error("fake realtime: no open connection");
      await speechStopped(conn, text);
    },
    async userSays(text, connection) {
      const conn = target(connection);
      if (conn === undefined) throw new Error("fake realtime: no open connection");
      speechStarted(conn);
      await tick();
      await speechStopped(conn, text);
    },
    send(event) {
      const conn = latest();
      if (conn !== undefined) send(conn, event);
    },
    sendRaw(text) {
      latest()?.ws.send(text);
    },
    drop: dropAll,
    dropOn(type) {
      dropOnType = type;
    },
    closeWith(code, reason = "") {
      latest()?.ws.close(code, reason);
    },
    holdNextSetup() {
      holdNext = true;
    },
    refuse(status, times) {
      refusal = status;
      refusals = times ?? Number.POSITIVE_INFINITY;
    },
    startResponse() {
      const conn = latest();
      if (conn === undefined) return undefined;
      const index = conn.waiting.findIndex((request) => request?.conversation === "none" || conn.active === undefined);
      if (index >= 0) return startManual(conn, conn.waiting.splice(index, 1)[0]);
      return conn.active === undefined ? startManual(conn, undefined) : undefined;
    },
    running() {
      const conn = latest();
      return conn === undefined ? [] : [...conn.manual.values()].map(({ running }) => ({ id: running.id, outOfBand: running.outOfBand, connection: conn.index }));
    },
    speakIn(responseId, text, ms) {
      const on = manualOn(responseId);
      if (on === undefined) return;
      const { conn, manual } = on;
      const outputIndex = manual.nextIndex++;
      const itemId = id("item");
      const base = { response_id: responseId, item_id: itemId, output_index: outputIndex, content_index: 0 };
      const item = { id: itemId, object: "realtime.item", type: "message", role: "assistant", status: "in_progress", content: [] };
      send(conn, { type: "response.output_item.added", response_id: responseId, output_index: outputIndex, item });
      addItem(conn, manual.running.outOfBand, item);
      send(conn, { type: "response.content_part.added", ...base, part: { type: "audio", transcript: "" } });
      const words = text.match(/\S+\s*/g) ?? [];
      const chunks = Math.max(1, Math.ceil(ms / chunkMs));
      let word = 0;
      let sentMs = 0;
      for (let i = 0; i < chunks; i++) {
        const chunk = Math.min(chunkMs, ms - sentMs);
        const audio = outputIsG711(conn.session) ? rampG711(chunk, sentMs * 8) : rampPcm(chunk, Math.round((sentMs * REALTIME_RATE) / 1000));
        send(conn, { type: `${audioName}.delta`, ...base, delta: audio.toString("base64") });
        conn.spoke = true;
        sentMs += chunk;
        conn.itemAudioMs.set(itemId, sentMs);
        while (word < words.length && Math.floor((word * chunks) / words.length) <= i) send(conn, { type: `${transcriptName}.delta`, ...base, delta: words[word++]! });
      }
      send(conn, { type: `${audioName}.done`, ...base });
      send(conn, { type: `${transcriptName}.done`, ...base, transcript: text });
      send(conn, { type: "response.content_part.done", ...base, part: { type: "audio", transcript: text } });
      const doneItem = { ...item, status: "completed", content: [{ type: "output_audio", transcript: text }] };
      manual.output.push(doneItem);
      send(conn, { type: "response.output_item.done", response_id: responseId, output_index: outputIndex, item: doneItem });
      if (!manual.running.outOfBand) send(conn, { type: "conversation.item.done", item: doneItem });
    },
    callIn(responseId, name, args) {
      const on = manualOn(responseId);
      if (on === undefined || on.manual.running.outOfBand) return undefined;
      const { conn, manual } = on;
      const opened = openCall(conn, false, responseId, manual.nextIndex++, name, args);
      send(conn, { type: "response.function_call_arguments.delta", ...opened.base, delta: opened.argsText });
      manual.output.push(closeCall(conn, false, opened));
      return opened.base.call_id;
    },
    finish(responseId, status = "completed") {
      const on = manualOn(responseId);
      if (on === undefined) return;
      if (status === "cancelled") on.manual.running.cancelled ??= "client_cancelled";
      on.manual.finish();
    },
    openSockets: () => connections.filter((c) => c.open).length,
    close: () => server.close(),
  };
}
