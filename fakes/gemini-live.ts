// A fake Gemini Live server (BidiGenerateContent over WebSocket) for tests. It listens on loopback
// and speaks the message sequences of docs/vendors.md (Gemini Live) and of the official SDK's
// types (`@google/genai` 2.32.0, dist/genai.d.ts: `LiveServerMessage`, `LiveServerContent`,
// `LiveServerSessionResumptionUpdate`, `VoiceActivity`): the key comes as the `key` query
// parameter (a wrong key: the upgrade succeeds and the socket closes 1008, as errors come as close
// codes); `setup` must be the first client message, once per socket, and is answered with
// `setupComplete`; nothing else may come before that. A test scripts model turns (24 kHz audio
// chunks in `modelTurn.parts[].inlineData`, `outputTranscription` pieces, then
// `generationComplete` and `turnComplete` with `usageMetadata`), tool calls, barge-ins
// (`interrupted` then `turnComplete`), the caller's words (`inputTranscription` pieces that carry
// their own leading space, as the transcription pieces in js-genai's recorded sessions do, e.g.
// "We", " could talk about …"), voice activity, `goAway`,
// session resumption handles, drops and raw frames. With `resumption`, every `turnComplete` is
// followed by a `sessionResumptionUpdate` in a message of its own, and a tool call by a
// non-resumable update (the SDK: "we send update empty new_handle and resumable=false. Example of
// such case could be model executing function calls"). Every client message is recorded per
// connection, and protocol violations are collected in `violations`.
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { RawData, WebSocket } from "ws";
import { loopbackServer, refuseUpgrade } from "./loopback.js";
import { latestConnection, until } from "./ws-waits.js";

export const FAKE_GEMINI_KEY = "fake-gemini-key";
const PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent";
const CLIENT_KEYS = new Set(["setup", "clientContent", "realtimeInput", "toolResponse"]);
const SCHEMA_TYPES = new Set(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"]);

type Json = Record<string, unknown>;

export interface FakeGeminiOptions {
  /** The accepted key (`?key=`). Default FAKE_GEMINI_KEY. */
  apiKey?: string;
  /** Answer `setup` with `setupComplete`. Default true (false: the handshake hangs). */
  completeSetup?: boolean;
  /**
   * Send `sessionResumptionUpdate {newHandle, resumable:true}` after `setupComplete` and after each
   * `turnComplete` (each in a message of its own, after it), and `{resumable:false}` after a tool call.
   */
  resumption?: boolean;
  /** Send every server message as a binary frame (UTF-8 JSON), as the service may. */
  binary?: boolean;
}

export interface FakeGeminiConnection {
  readonly index: number;
  readonly query: URLSearchParams;
  readonly socket: WebSocket;
  /** Every client message, parsed, in order (unparseable ones as `{"<invalid>": raw}`). */
  readonly messages: Json[];
  /** The `setup` bodies received (exactly one on a well-behaved client). */
  readonly setups: Json[];
  /** Decoded audio bytes received through `realtimeInput.audio`. */
  audioBytes: number;
  setupComplete: boolean;
  closed: boolean;
  closeCode?: number;
}

export interface ModelTurnScript {
  /** Audio chunks (24 kHz PCM16) to send; default 2. */
  chunks?: number;
  /** Bytes per chunk; default 960 (20 ms). */
  chunkBytes?: number;
  /** The transcript of what the model says, sent as `outputTranscription` word pieces. */
  text?: string;
  /** End the turn (`generationComplete`, then `turnComplete` with `usageMetadata`). Default true. */
  complete?: boolean;
  /** Token counts reported with `turnComplete`. */
  usage?: { prompt: number; response: number };
}

export interface FakeGemini {
  /** ws://127.0.0.1:PORT/ws/…BidiGenerateContent (no key). */
  readonly url: string;
  readonly connections: FakeGeminiConnection[];
  /** The latest connection (throws when there is none). */
  readonly latest: FakeGeminiConnection;
  /** Upgrades refused with an HTTP status. */
  readonly rejected: number[];
  readonly violations: string[];
  /** Every function call id the server issued. */
  readonly callIds: Set<string>;

  /** Refuse every upgrade from now on with this HTTP status (undefined: accept again). */
  refuseUpgrades(status: number | undefined): void;
  /** Send a message as is on the latest connection. */
  send(message: Json): void;
  /** A model turn (audio chunks + outputTranscription + turnComplete) on the latest connection. The audio bytes are returned. */
  modelTurn(script?: ModelTurnScript): Buffer;
  /** `toolCall.functionCalls`; ids default to `function-call-<n>`. Returns the ids. */
  toolCall(calls: { name: string; args?: unknown; id?: string }[]): string[];
  /** A barge-in: `interrupted: true`, then `turnComplete` (then a resumption handle, with `resumption`). */
  interrupted(): void;
  /**
   * The caller's words as `inputTranscription` pieces, one per word, each after the first carrying
   * its leading space (" is", " my"); `finished` marks the last (2.5-family models never set it).
   */
  userSays(text: string, options?: { finished?: boolean }): void;
  /**
   * `voiceActivity {voiceActivityType, audioOffset}`: the service's activity detection heard the
   * caller start or stop. `audioOffset` is the audio received on this connection so far, as a
   * duration (SDK: "relative to the start of the audio stream").
   */
  voiceActivity(type: "ACTIVITY_START" | "ACTIVITY_END"): void;
  goAway(timeLeft?: string): void;
  /** A raw frame on the latest connection (malformed JSON, binary, …). */
  sendRaw(data: string | Buffer, options?: { binary?: boolean }): void;
  /** Terminate the latest socket without a close frame (a network drop). */
  drop(): void;
  closeWith(code: number, reason?: string): void;

  waitForConnection(count?: number, timeoutMs?: number): Promise<FakeGeminiConnection>;
  /** Wait until `count` messages with top-level key `key` arrived on `connection` (default: over all connections). */
  waitForMessage(key: string, count?: number, connection?: FakeGeminiConnection, timeoutMs?: number): Promise<Json>;
  waitForClose(connection: FakeGeminiConnection, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A Gemini `Schema` must use the upper-case type names (docs/vendors.md (Gemini Live), "Tools"). */
function schemaViolations(schema: unknown, path: string): string[] {
  if (!isRecord(schema)) return [`${path}: must be an object`];
  const problems: string[] = [];
  if (schema.type !== undefined && (typeof schema.type !== "string" || !SCHEMA_TYPES.has(schema.type))) problems.push(`${path}.type: unknown type ${JSON.stringify(schema.type)}`);
  if (schema.type === undefined && schema.anyOf === undefined) problems.push(`${path}: type is required`);
  for (const key of ["$schema", "additionalProperties", "$ref", "oneOf", "const"]) if (key in schema) problems.push(`${path}: unknown field ${key}`);
  if (schema.type === "OBJECT" && isRecord(schema.properties) && Object.keys(schema.properties).length === 0) problems.push(`${path}.properties: should be non-empty for OBJECT type`);
  if (isRecord(schema.properties)) for (const [name, s] of Object.entries(schema.properties)) problems.push(...schemaViolations(s, `${path}.properties.${name}`));
  if (schema.items !== undefined) problems.push(...schemaViolations(schema.items, `${path}.items`));
  if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((s, i) => problems.push(...schemaViolations(s, `${path}.anyOf[${i}]`)));
  return problems;
}

function setupViolations(setup: unknown): string[] {
  if (!isRecord(setup)) return ["setup: must be an object"];
  const problems: string[] = [];
  if (typeof setup.model !== "string" || !setup.model.startsWith("models/")) problems.push("setup.model: must be models/<id>");
  const generation = setup.generationConfig;
  if (isRecord(generation)) {
    const modalities = generation.responseModalities;
    if (!Array.isArray(modalities) || modalities.length !== 1 || (modalities[0] !== "AUDIO" && modalities[0] !== "TEXT")) problems.push("setup.generationConfig.responseModalities: AUDIO or TEXT");
  }
  const handling = isRecord(setup.realtimeInputConfig) ? setup.realtimeInputConfig.activityHandling : undefined;
  if (handling !== undefined && handling !== "START_OF_ACTIVITY_INTERRUPTS" && handling !== "NO_INTERRUPTION") problems.push(`setup.realtimeInputConfig.activityHandling: unknown ${JSON.stringify(handling)}`);
  if (setup.tools !== undefined) {
    if (!Array.isArray(setup.tools)) problems.push("setup.tools: must be an array");
    else
      setup.tools.forEach((tool, i) => {
        const declarations = isRecord(tool) ? tool.functionDeclarations : undefined;
        if (!Array.isArray(declarations)) return problems.push(`setup.tools[${i}].functionDeclarations: must be an array`);
        declarations.forEach((d, j) => {
          const at = `setup.tools[${i}].functionDeclarations[${j}]`;
          if (!isRecord(d) || typeof d.name !== "string" || d.name === "") return problems.push(`${at}.name: required`);
          if (d.parameters !== undefined) problems.push(...schemaViolations(d.parameters, `${at}.parameters`));
        });
      });
  }
  return problems;
}

function splitWords(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

export async function startFakeGeminiLive(options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const apiKey = options.apiKey ?? FAKE_GEMINI_KEY;
  const completeSetup = options.completeSetup ?? true;
  const connections: FakeGeminiConnection[] = [];
  const rejected: number[] = [];
  const violations: string[] = [];
  const callIds = new Set<string>();
  let refuseStatus: number | undefined;
  let calls = 0;
  let handles = 0;

  const server = loopbackServer();
  const wss = server.webSockets({ noServer: true });

  const refuse = (socket: Socket, status: number): void => {
    rejected.push(status);
    refuseUpgrade(socket, status, "Refused", { error: { code: status, message: "refused by the fake", status: "UNAVAILABLE" } });
  };

  server.http.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://fake");
    if (refuseStatus !== undefined) return refuse(socket, refuseStatus);
    if (url.pathname !== PATH) return refuse(socket, 404);
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, url.searchParams));
  });

  const latest = (): FakeGeminiConnection => latestConnection("fake gemini", connections);

  const sendOn = (c: FakeGeminiConnection, message: Json): void => {
    if (c.closed || c.socket.readyState !== c.socket.OPEN) return;
    const text = JSON.stringify(message);
    c.socket.send(options.binary === true ? Buffer.from(text, "utf8") : text, { binary: options.binary === true });
  };

  const resumptionUpdate = (c: FakeGeminiConnection): void => {
    if (options.resumption === true) sendOn(c, { sessionResumptionUpdate: { newHandle: `handle-${++handles}`, resumable: true } });
  };
  /** Not resumable right now (executing function calls): no handle, `resumable:false`. */
  const notResumable = (c: FakeGeminiConnection): void => {
    if (options.resumption === true) sendOn(c, { sessionResumptionUpdate: { resumable: false } });
  };

  const onClientMessage = (c: FakeGeminiConnection, data: RawData, isBinary: boolean): void => {
    const text = Buffer.isBuffer(data) ? data.toString("utf8") : Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data).toString("utf8");
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      violations.push(`connection ${c.index}: malformed JSON from the client`);
      c.messages.push({ "<invalid>": text });
      return;
    }
    if (!isRecord(message)) {
      violations.push(`connection ${c.index}: a client message must be a JSON object`);
      return;
    }
    if (isBinary) violations.push(`connection ${c.index}: the client sent a binary frame`);
    c.messages.push(message);
    const keys = Object.keys(message);
    if (keys.length !== 1 || !CLIENT_KEYS.has(keys[0]!)) violations.push(`connection ${c.index}: a client message has exactly one top-level key of setup/clientContent/realtimeInput/toolResponse, got ${keys.join(",")}`);
    if ("setup" in message) {
      if (c.messages.length !== 1) violations.push(`connection ${c.index}: setup must be the first message`);
      if (c.setups.length > 0) violations.push(`connection ${c.index}: a second setup (the configuration cannot change)`);
      c.setups.push(isRecord(message.setup) ? message.setup : {});
      violations.push(...setupViolations(message.setup).map((v) => `connection ${c.index}: ${v}`));
      if (c.query.get("key") !== apiKey) {
        c.socket.close(1008, "API key not valid. Please pass a valid API key.");
        return;
      }
      if (completeSetup) {
        c.setupComplete = true;
        sendOn(c, { setupComplete: {} });
        resumptionUpdate(c);
      }
      return;
    }
    if (!c.setupComplete) violations.push(`connection ${c.index}: ${keys[0] ?? "?"} sent before setupComplete`);
    if (isRecord(message.realtimeInput)) {
      const audio = message.realtimeInput.audio;
      if (isRecord(audio)) {
        if (audio.mimeType !== "audio/pcm;rate=16000") violations.push(`connection ${c.index}: realtimeInput.audio.mimeType ${String(audio.mimeType)}`);
        if (typeof audio.data !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(audio.data)) violations.push(`connection ${c.index}: realtimeInput.audio.data must be base64`);
        else c.audioBytes += Buffer.from(audio.data, "base64").byteLength;
      }
    }
    if (isRecord(message.toolResponse)) {
      const responses = message.toolResponse.functionResponses;
      if (!Array.isArray(responses) || responses.length === 0) violations.push(`connection ${c.index}: toolResponse.functionResponses must be a non-empty array`);
      else
        for (const r of responses) {
          if (!isRecord(r) || typeof r.name !== "string" || !isRecord(r.response)) violations.push(`connection ${c.index}: a function response needs name and response`);
          else if (typeof r.id === "string" && !callIds.has(r.id)) violations.push(`connection ${c.index}: a function response for an unknown call ${r.id}`);
        }
    }
    if (isRecord(message.clientContent)) {
      const turns = message.clientContent.turns;
      if (turns !== undefined && (!Array.isArray(turns) || !turns.every((t) => isRecord(t) && (t.role === "user" || t.role === "model") && Array.isArray(t.parts)))) {
        violations.push(`connection ${c.index}: clientContent.turns must be [{role: user|model, parts}]`);
      }
    }
  };

  const accept = (ws: WebSocket, query: URLSearchParams): void => {
    const c: FakeGeminiConnection = { index: connections.length, query, socket: ws, messages: [], setups: [], audioBytes: 0, setupComplete: false, closed: false };
    connections.push(c);
    ws.on("message", (data: RawData, isBinary: boolean) => onClientMessage(c, data, isBinary));
    ws.on("error", () => undefined);
    ws.on("close", (code: number) => {
      c.closed = true;
      c.closeCode = code;
    });
  };

  const port = await server.listen();
  const fake: FakeGemini = {
    url: `ws://127.0.0.1:${port}${PATH}`,
    connections,
    get latest() {
      return latest();
    },
    rejected,
    violations,
    callIds,
    refuseUpgrades(status) {
      refuseStatus = status;
    },
    send(message) {
      sendOn(latest(), message);
    },
    modelTurn(script = {}) {
      const c = latest();
      const chunks = script.chunks ?? 2;
      const size = script.chunkBytes ?? 960;
      const words = splitWords(script.text ?? "");
      const audio: Buffer[] = [];
      for (let i = 0; i < Math.max(chunks, words.length); i++) {
        if (i < chunks) {
          const pcm = Buffer.alloc(size, (i + 1) & 0xff);
          audio.push(pcm);
          sendOn(c, { serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm;rate=24000", data: pcm.toString("base64") } }] } } });
        }
        const word = words[i];
        if (word !== undefined) sendOn(c, { serverContent: { outputTranscription: { text: word } } });
      }
      if (script.complete ?? true) {
        const usage = script.usage ?? { prompt: 10, response: 5 };
        sendOn(c, { serverContent: { generationComplete: true } });
        sendOn(c, {
          serverContent: { turnComplete: true },
          usageMetadata: { promptTokenCount: usage.prompt, responseTokenCount: usage.response, totalTokenCount: usage.prompt + usage.response },
        });
        resumptionUpdate(c);
      }
      return Buffer.concat(audio);
    },
    toolCall(list) {
      const functionCalls = list.map((call) => ({ id: call.id ?? `function-call-${++calls}`, name: call.name, args: call.args ?? {} }));
      for (const call of functionCalls) callIds.add(call.id);
      const c = latest();
      sendOn(c, { toolCall: { functionCalls } });
      notResumable(c);
      return functionCalls.map((call) => call.id);
    },
    interrupted() {
      const c = latest();
      sendOn(c, { serverContent: { interrupted: true } });
      sendOn(c, { serverContent: { turnComplete: true } });
      resumptionUpdate(c);
    },
    userSays(text, opts = {}) {
      const c = latest();
      const words = splitWords(text);
      words.forEach((word, i) => {
        const last = i === words.length - 1;
        sendOn(c, { serverContent: { inputTranscription: { text: word, ...(last && opts.finished === true ? { finished: true } : {}) } } });
      });
    },
    voiceActivity(type) {
      const c = latest();
      // PCM16 at 16 kHz: 32 bytes per ms. A proto3 JSON duration, in seconds.
      sendOn(c, { voiceActivity: { voiceActivityType: type, audioOffset: `${c.audioBytes / 32 / 1000}s` } });
    },
    goAway(timeLeft = "5s") {
      sendOn(latest(), { goAway: { timeLeft } });
    },
    sendRaw(data, opts = {}) {
      const c = latest();
      if (c.socket.readyState === c.socket.OPEN) c.socket.send(data, { binary: opts.binary === true });
    },
    drop() {
      latest().socket.terminate();
    },
    closeWith(code, reason = "") {
      latest().socket.close(code, reason);
    },
    async waitForConnection(count = connections.length + 1, timeoutMs = 2000) {
      await until("fake gemini", () => connections.length >= count, `connection #${count}`, timeoutMs);
      return connections[count - 1]!;
    },
    async waitForMessage(key, count = 1, connection, timeoutMs = 2000) {
      const matching = (): Json[] => (connection === undefined ? connections.flatMap((c) => c.messages) : connection.messages).filter((m) => key in m);
      await until("fake gemini", () => matching().length >= count, `${count} × ${key}`, timeoutMs);
      return matching()[count - 1]!;
    },
    async waitForClose(connection, timeoutMs = 2000) {
      await until("fake gemini", () => connection.closed, `connection ${connection.index} to close`, timeoutMs);
    },
    close: () => server.close(),
  };

  return fake;
}
