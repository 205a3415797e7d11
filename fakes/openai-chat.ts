// A fake OpenAI-compatible Chat Completions server for tests. It listens on loopback and speaks
// the real wire format (the same JSON and SSE the OpenAI API sends), so tests can drive the real
// `@ai-sdk/openai-compatible` provider (or any other HTTP client) against scripted responses.
//
// Routes: POST /v1/chat/completions, GET /v1/models; anything else gets OpenAI's 404 JSON.
// Requests are validated the way a real provider validates them: a malformed conversation is
// recorded in `violations` and answered with a 400 OpenAI error body (without consuming a turn).
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One scripted response, consumed in order (FIFO), one per valid chat request. */
export interface FakeTurn {
  /** Assistant content, streamed in several deltas. */
  text?: string;
  /**
   * Tool calls, streamed as `tool_calls` deltas (id + name first, then the arguments in 2+
   * fragments). `args` is JSON-serialized; a string is sent verbatim as the raw `arguments`
   * (so a test can script malformed JSON). `id` defaults to a fresh `call_…` id.
   */
  toolCalls?: { name: string; args: unknown; id?: string }[];
  /** Respond with this HTTP status and an OpenAI-style error body instead of a completion. */
  status?: number;
  /** Delay before the first byte of the response. */
  delayMs?: number;
  /** Delay between SSE chunks (streaming only). */
  chunkDelayMs?: number;
  /**
   * Send this many SSE chunks, then stop writing without ending the response (it stays open until
   * the client disconnects or the server closes). For a non-streaming request the status line and
   * headers are sent and the body never comes.
   */
  hangAfterChunks?: number;
  /** Token counts to report instead of the estimate (about 4 characters a token). */
  usage?: { promptTokens: number; completionTokens: number };
}

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  [key: string]: unknown;
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters?: unknown; strict?: boolean };
  [key: string]: unknown;
}

/**
 * A parsed request body. It is recorded before validation, so an invalid request is recorded as
 * sent: the field types describe a well-formed request.
 */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: ChatTool[];
  tool_choice?: unknown;
  [key: string]: unknown;
}

export interface FakeOpenAiServer {
  /** Base URL including /v1, e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  enqueue(...turns: FakeTurn[]): void;
  /** Every parsed chat request body, in order (invalid ones included). */
  requests: ChatRequest[];
  /** Protocol violations found in requests, human-readable. */
  violations: string[];
  close(): Promise<void>;
}

export const FAKE_MODEL_IDS = ["fake-model", "fake-model-mini"] as const;

type Json = Record<string, unknown>;

interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function errorBody(message: string, type: string, code: string | null, param: string | null = null): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}

/** The error body OpenAI sends for a scripted status. */
function errorForStatus(status: number): OpenAiErrorBody {
  if (status === 401) return errorBody("Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
  if (status === 403) return errorBody("You are not allowed to access this resource.", "invalid_request_error", "forbidden");
  if (status === 404) return errorBody("The model does not exist or you do not have access to it.", "invalid_request_error", "model_not_found");
  if (status === 429) return errorBody("Rate limit reached for requests.", "requests", "rate_limit_exceeded");
  if (status === 503) return errorBody("The engine is currently overloaded, please try again later.", "server_error", "service_unavailable");
  if (status >= 500) return errorBody("The server had an error while processing your request.", "server_error", "internal_error");
  return errorBody(`Request failed with status ${status}.`, "invalid_request_error", null);
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function randomId(prefix: string, length = 24): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(length);
  let id = prefix;
  for (const byte of bytes) id += alphabet[byte % alphabet.length] ?? "x";
  return id;
}

/** Text split into word-sized pieces; at least two when it has two or more characters. */
function splitText(text: string): string[] {
  const pieces = text.match(/\s*\S+\s*/g) ?? [];
  if (pieces.length >= 2) return pieces;
  return splitInto(text, 2);
}

/** `text` in `count` (or fewer, if shorter) non-empty pieces, never splitting a code point. */
function splitInto(text: string, count: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = Math.ceil(chars.length / Math.min(count, chars.length));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  return pieces;
}

function isEmptyContent(content: unknown): boolean {
  if (content === undefined || content === null) return true;
  if (typeof content === "string") return content.length === 0;
  if (Array.isArray(content)) return content.length === 0;
  return false;
}

const KNOWN_ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/** Every protocol violation in a parsed body, OpenAI-style messages; empty when it is valid. */
export function validateChatRequest(body: unknown): string[] {
  if (!isRecord(body)) return ["request body must be a JSON object"];
  const problems: string[] = [];
  if (typeof body.model !== "string" || body.model.length === 0) problems.push("you must provide a model parameter");
  if (body.tools !== undefined) problems.push(...validateTools(body.tools));
  const messages = body.messages;
  if (!Array.isArray(messages)) {
    problems.push("'messages' is a required property and must be an array");
    return problems;
  }
  if (messages.length === 0) {
    problems.push("'messages' must contain at least one message");
    return problems;
  }
  problems.push(...validateMessages(messages));
  return problems;
}

function validateTools(tools: unknown): string[] {
  if (!Array.isArray(tools)) return ["'tools' must be an array"];
  const problems: string[] = [];
  tools.forEach((tool, i) => {
    if (!isRecord(tool) || tool.type !== "function" || !isRecord(tool.function)) {
      problems.push(`tools[${i}]: must be {"type":"function","function":{...}}`);
    } else if (typeof tool.function.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.function.name)) {
      problems.push(`tools[${i}].function.name: must match ^[a-zA-Z0-9_-]{1,64}$`);
    }
  });
  return problems;
}

function validateMessages(messages: unknown[]): string[] {
  const problems: string[] = [];
  // The tool calls of the assistant message that the current run of tool messages answers.
  let openCalls: { index: number; ids: Set<string>; answered: Set<string> } | undefined;

  const closeRun = (): void => {
    if (openCalls === undefined) return;
    for (const id of openCalls.ids) {
      if (!openCalls.answered.has(id)) {
        problems.push(
          `messages[${openCalls.index}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing a response for ${id} (dangling tool call)`,
        );
      }
    }
    openCalls = undefined;
  };

  messages.forEach((message, i) => {
    if (!isRecord(message)) {
      problems.push(`messages[${i}]: must be an object`);
      return;
    }
    const role = message.role;
    if (typeof role !== "string" || !KNOWN_ROLES.has(role)) {
      problems.push(`messages[${i}].role: unknown role ${JSON.stringify(role)} (expected system, developer, user, assistant or tool)`);
      return;
    }
    if (role === "tool") {
      const id = message.tool_call_id;
      if (typeof id !== "string" || id.length === 0) {
        problems.push(`messages[${i}]: a tool message needs a 'tool_call_id'`);
      } else if (openCalls === undefined || !openCalls.ids.has(id)) {
        problems.push(
          `messages[${i}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls'; no preceding assistant tool call has id ${id} (orphan tool result)`,
        );
      } else if (openCalls.answered.has(id)) {
        problems.push(`messages[${i}]: duplicate tool message for tool_call_id ${id}`);
      } else {
        openCalls.answered.add(id);
      }
      if (message.content === undefined || message.content === null) {
        problems.push(`messages[${i}].content: a tool message needs 'content'`);
      }
      return;
    }
    closeRun();
    if ((role === "user" || role === "system" || role === "developer") && isEmptyContent(message.content)) {
      problems.push(`messages[${i}].content: a ${role} message must have non-empty content`);
    }
    if (role === "assistant" && message.tool_calls !== undefined && message.tool_calls !== null) {
      const calls = message.tool_calls;
      if (!Array.isArray(calls)) {
        problems.push(`messages[${i}].tool_calls: must be an array`);
        return;
      }
      const ids = new Set<string>();
      calls.forEach((call, j) => {
        const where = `messages[${i}].tool_calls[${j}]`;
        if (!isRecord(call) || typeof call.id !== "string" || call.id.length === 0) {
          problems.push(`${where}: a tool call needs an 'id'`);
          return;
        }
        if (call.type !== "function" || !isRecord(call.function) || typeof call.function.name !== "string") {
          problems.push(`${where}: must be {"id","type":"function","function":{"name","arguments"}}`);
        } else if (typeof call.function.arguments !== "string") {
          problems.push(`${where}.function.arguments: must be a JSON string`);
        }
        if (ids.has(call.id)) problems.push(`${where}: duplicate tool call id ${call.id}`);
        ids.add(call.id);
      });
      if (ids.size > 0) openCalls = { index: i, ids, answered: new Set() };
    }
  });
  closeRun();
  return problems;
}

function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

interface PlannedToolCall {
  id: string;
  name: string;
  arguments: string;
}

function planToolCalls(turn: FakeTurn): PlannedToolCall[] {
  return (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? randomId("call_"),
    name: call.name,
    arguments: typeof call.args === "string" ? call.args : JSON.stringify(call.args ?? {}),
  }));
}

function usageFor(turn: FakeTurn, request: ChatRequest, calls: PlannedToolCall[]): Json {
  const prompt = turn.usage?.promptTokens ?? estimateTokens(JSON.stringify(request.messages).length);
  const completion =
    turn.usage?.completionTokens ??
    estimateTokens((turn.text ?? "").length + calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export async function startFakeOpenAiServer(options: { defaultTurn?: FakeTurn } = {}): Promise<FakeOpenAiServer> {
  const queue: FakeTurn[] = [];
  const requests: ChatRequest[] = [];
  const violations: string[] = [];
  const sockets = new Set<Socket>();
  const inFlight = new Set<AbortController>();
  let closing: Promise<void> | undefined;

  const server = createServer((req, res) => {
    res.on("error", () => {}); // a client that went away is not an error of ours
    req.on("error", () => {});
    const aborted = new AbortController();
    inFlight.add(aborted);
    res.on("close", () => {
      aborted.abort();
      inFlight.delete(aborted);
    });
    handle(req, res, aborted.signal).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      sendJson(res, 500, errorBody(`fake server error: ${String(error)}`, "server_error", "internal_error"));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("clientError", (_error, socket) => socket.destroy());

  async function handle(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname.replace(/\/+$/, "");
    if (req.method === "GET" && path === "/v1/models") {
      const created = 1_700_000_000;
      sendJson(res, 200, {
        object: "list",
        data: FAKE_MODEL_IDS.map((id) => ({ id, object: "model", created, owned_by: "switchboard-fake" })),
      });
      return;
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      req.resume();
      sendJson(res, 404, errorBody(`Invalid URL (${req.method ?? "?"} ${req.url ?? ""})`, "invalid_request_error", null));
      return;
    }

    const raw = await readBody(req);
    if (raw === undefined) return; // the client went away mid-body
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (error) {
      const message = `We could not parse the JSON body of your request. (${error instanceof Error ? error.message : String(error)})`;
      violations.push(`invalid JSON body: ${message}`);
      sendJson(res, 400, errorBody(message, "invalid_request_error", null));
      return;
    }
    if (isRecord(body)) requests.push(body as ChatRequest);
    const problems = validateChatRequest(body);
    if (problems.length > 0) {
      violations.push(...problems);
      const param = problems.every((p) => p.startsWith("messages") || p.startsWith("'messages'")) ? "messages" : null;
      sendJson(res, 400, errorBody(problems.join("; "), "invalid_request_error", null, param));
      return;
    }
    const request = body as ChatRequest;
    const turn = queue.shift() ?? options.defaultTurn ?? { text: "OK." };

    if (turn.delayMs !== undefined && turn.delayMs > 0 && !(await sleep(turn.delayMs, signal))) return;
    if (turn.status !== undefined && turn.status !== 200) {
      sendJson(res, turn.status, errorForStatus(turn.status));
      return;
    }
    if (request.stream === true) await stream(res, request, turn, signal);
    else respond(res, request, turn);
  }

  function respond(res: ServerResponse, request: ChatRequest, turn: FakeTurn): void {
    const calls = planToolCalls(turn);
    if (turn.hangAfterChunks !== undefined) {
      res.writeHead(200, { "content-type": "application/json", "x-request-id": randomId("req_") });
      res.flushHeaders();
      return;
    }
    const message: Json = { role: "assistant", content: turn.text ?? (calls.length > 0 ? null : ""), refusal: null };
    if (calls.length > 0) {
      message.tool_calls = calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    message.annotations = [];
    sendJson(res, 200, {
      id: randomId("chatcmpl-", 29),
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? "tool_calls" : "stop" }],
      usage: usageFor(turn, request, calls),
      service_tier: "default",
      system_fingerprint: "fp_fake",
    });
  }

  async function stream(res: ServerResponse, request: ChatRequest, turn: FakeTurn, signal: AbortSignal): Promise<void> {
    const calls = planToolCalls(turn);
    const includeUsage = request.stream_options?.include_usage === true;
    const id = randomId("chatcmpl-", 29);
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Json, finishReason: string | null = null): string =>
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model: request.model,
        system_fingerprint: "fp_fake",
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
        ...(includeUsage ? { usage: null } : {}),
      });

    const events: string[] = [chunk({ role: "assistant", content: "", refusal: null })];
    for (const piece of splitText(turn.text ?? "")) events.push(chunk({ content: piece }));
    calls.forEach((call, index) => {
      events.push(
        chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }),
      );
      for (const fragment of splitInto(call.arguments, Math.max(2, Math.ceil(call.arguments.length / 8)))) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
      }
    });
    events.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));
    if (includeUsage) {
      events.push(
        JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created,
          model: request.model,
          system_fingerprint: "fp_fake",
          choices: [],
          usage: usageFor(turn, request, calls),
        }),
      );
    }
    events.push("[DONE]");

    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-request-id": randomId("req_"),
    });
    res.flushHeaders();
    const limit = turn.hangAfterChunks ?? Number.POSITIVE_INFINITY;
    for (let i = 0; i < events.length; i++) {
      if (i >= limit) return; // hang: leave the response open
      if (i > 0 && turn.chunkDelayMs !== undefined && turn.chunkDelayMs > 0 && !(await sleep(turn.chunkDelayMs, signal))) {
        return;
      }
      if (signal.aborted || res.destroyed) return;
      res.write(`data: ${events[i] ?? ""}\n\n`);
    }
    if (turn.hangAfterChunks !== undefined) return; // asked to hang after every chunk: never end
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    violations,
    enqueue(...turns: FakeTurn[]): void {
      queue.push(...turns);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const controller of inFlight) controller.abort();
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "x-request-id": randomId("req_"),
  });
  res.end(text);
}

/** The request body as text, or undefined if the client disconnected before sending it all. */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(undefined));
    req.on("aborted", () => resolve(undefined));
    req.on("close", () => {
      if (!req.complete) resolve(undefined);
    });
  });
}

/** Waits `ms`; false if `signal` aborted first (the client went away or the server is closing). */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
