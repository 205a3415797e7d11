// A fake AssemblyAI Universal Streaming v3 server (`/v3/ws`) for tests. It listens on loopback and
// speaks the wire protocol (docs/vendors.md, AssemblyAI): it checks `Authorization: <key>`
// (the raw key; wrong → HTTP 401 at upgrade, or close 4001 after it with `authFailure:"close"`),
// validates the query (bad → an `Error` message and close 4000 / 4101), sends `Begin`, enforces
// the 50–1000 ms audio frame rule (close 3007 "Input duration violation", as AssemblyAI's
// "Common session errors and closures" documents), records audio and control messages, answers
// `ForceEndpoint` (ends the turn) and `Terminate` (`Termination`, close 1000), and lets a test
// script `Turn` messages (with the formatted copy when `format_turns=true`), speak a whole turn
// as AssemblyAI streams one (`speak`: a growing `transcript`, then `end_of_turn`), or speak a
// transcript that way once N ms of audio arrived.
import { frameBytes, readControl, sttFakeBase, sttFakeState, type SttFakeBase } from "./stt-shared.js";
import { latestConnection, sendJson } from "./ws-waits.js";
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { RawData, WebSocket } from "ws";
import { refuseUpgrade } from "./loopback.js";

export const FAKE_ASSEMBLYAI_KEY = "fake-assemblyai-key";

export interface FakeAssemblyAiOptions {
  /** The accepted key (`Authorization: <key>`, no scheme). Default FAKE_ASSEMBLYAI_KEY. */
  apiKey?: string;
  /** How a wrong key is refused: HTTP 401 at upgrade (default) or close 4001 after it. */
  authFailure?: "http" | "close";
  /** Send `Begin` on connect (default true; false to test the open timeout). */
  begin?: boolean;
  /** Close with 3007 on a frame outside 50–1000 ms (default true; violations are recorded anyway). */
  strictFrames?: boolean;
  /** Require `speech_model` (current docs say it is required; default true). */
  requireSpeechModel?: boolean;
  /** Auto mode: after each `transcriptAfterMs` of audio on a connection, emit the next transcript as a turn. */
  transcriptAfterMs?: number;
  /** Auto-mode transcripts, one turn each in order, spoken with `speak`. Default "hello world". */
  transcript?: string | string[];
  /** Control message types recorded but not acted on (e.g. "CloseStream", to test a close timeout). */
  ignore?: string[];
}

export interface FakeAssemblyAiConnection {
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly socket: WebSocket;
  readonly frames: Buffer[];
  /** Each binary frame's duration in ms. */
  readonly frameMs: number[];
  audioBytes: number;
  audioMs: number;
  readonly messages: Record<string, unknown>[];
  /** The current turn's order and finalized words so far. */
  turnOrder: number;
  turnText: string;
  closed: boolean;
  closeCode?: number;
}

/** The fake at ws://127.0.0.1:PORT/v3/ws: the common STT-fake surface, and AssemblyAI's own script. */
export interface FakeAssemblyAi extends SttFakeBase<FakeAssemblyAiConnection> {
  /** A `Turn` with end_of_turn:false (the current turn's text so far). */
  partial(text: string, options?: { confidence?: number; trailingWord?: string }): void;
  /** End the current turn: `Turn` end_of_turn:true, then the formatted copy when format_turns=true. */
  endOfTurn(text: string, options?: { confidence?: number; formatted?: string | false }): void;
  /** Alias of endOfTurn, for symmetry with the Deepgram fake. */
  final(text: string, options?: { confidence?: number; formatted?: string | false }): void;
  /**
   * One turn as AssemblyAI streams it (its docs "Message Sequence"): a `Turn` per word with
   * `end_of_turn:false` whose `transcript` holds the words finalized so far and whose `words` end
   * with the newest one not final yet, so `transcript` grows; then `end_of_turn:true` with the
   * whole transcript, and the formatted copy when `format_turns=true`.
   */
  speak(text: string, options?: { confidence?: number; formatted?: string | false }): void;
  speechStarted(): void;
  /** Send an `Error` message (`error_code`, `error`) and close with that code. */
  fail(code: number, error: string): void;
}

/** A close code and message when the query is invalid (the query parameters of the SDK's `connectionUrl`). */
function validateQuery(q: URLSearchParams, requireSpeechModel: boolean): { code: number; error: string } | undefined {
  const rate = q.get("sample_rate");
  if (rate === null || !/^\d+$/.test(rate) || Number(rate) < 8000 || Number(rate) > 48000) return { code: 4000, error: "Invalid sample rate" };
  const schema = (error: string): { code: number; error: string } => ({ code: 4101, error });
  const encoding = q.get("encoding");
  if (encoding !== null && encoding !== "pcm_s16le" && encoding !== "pcm_mulaw") return schema(`unknown encoding ${encoding}`);
  if (requireSpeechModel && q.get("speech_model") === null) return schema("speech_model is required");
  const formatTurns = q.get("format_turns");
  if (formatTurns !== null && formatTurns !== "true" && formatTurns !== "false") return schema("format_turns must be true or false");
  const threshold = q.get("end_of_turn_confidence_threshold");
  if (threshold !== null && !(Number(threshold) >= 0 && Number(threshold) <= 1)) return schema("end_of_turn_confidence_threshold must be 0..1");
  for (const name of ["min_end_of_turn_silence_when_confident", "min_turn_silence", "max_turn_silence"]) {
    const v = q.get(name);
    if (v !== null && !/^\d+$/.test(v)) return schema(`${name} must be an integer (ms)`);
  }
  const keyterms = q.get("keyterms_prompt");
  if (keyterms !== null) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(keyterms);
    } catch {
      return schema("keyterms_prompt must be a JSON array");
    }
    if (!Array.isArray(parsed) || !parsed.every((t) => typeof t === "string")) return schema("keyterms_prompt must be a JSON array of strings");
  }
  return undefined;
}

/** What `format_turns` does to a transcript (close enough): capitalized, with a full stop. */
function formatText(text: string): string {
  if (text === "") return text;
  const capital = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.?!]$/.test(capital) ? capital : `${capital}.`;
}

export async function startFakeAssemblyAi(options: FakeAssemblyAiOptions = {}): Promise<FakeAssemblyAi> {
  const apiKey = options.apiKey ?? FAKE_ASSEMBLYAI_KEY;
  const strictFrames = options.strictFrames ?? true;
  const state = sttFakeState<FakeAssemblyAiConnection>("fake assemblyai", "/v3/ws", options);
  const { connections, messages, rejected, violations, triggers, server } = state;

  const wss = server.webSockets({ noServer: true });

  const refuse = (socket: Socket, status: number, reason: string): void => {
    rejected.push({ status, reason });
    refuseUpgrade(socket, status, status === 401 ? "Unauthorized" : "Not Found", { error: reason });
  };

  server.http.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://fake");
    if (url.pathname !== "/v3/ws") return refuse(socket, 404, `no route ${url.pathname}`);
    const authorized = req.headers.authorization === apiKey;
    if (!authorized && options.authFailure !== "close") return refuse(socket, 401, "Invalid API key");
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, url.searchParams, req.headers, authorized));
  });

  const latest = (): FakeAssemblyAiConnection => latestConnection("fake assemblyai", connections);

  const turn = (c: FakeAssemblyAiConnection, text: string, fields: { end_of_turn: boolean; turn_is_formatted: boolean; confidence: number; trailingWord?: string | undefined }): object => {
    const words = text === "" ? [] : text.split(/\s+/).map((w, i) => ({ start: 1000 + i * 300, end: 1000 + i * 300 + 250, text: w, confidence: 0.9, word_is_final: true }));
    if (fields.trailingWord !== undefined) words.push({ start: 1000 + words.length * 300, end: 1000 + words.length * 300 + 250, text: fields.trailingWord, confidence: 0.6, word_is_final: false });
    return {
      type: "Turn",
      turn_order: c.turnOrder,
      turn_is_formatted: fields.turn_is_formatted,
      end_of_turn: fields.end_of_turn,
      transcript: text,
      end_of_turn_confidence: fields.confidence,
      utterance: fields.end_of_turn ? text : "",
      words,
    };
  };

  const script = {
    partial(c: FakeAssemblyAiConnection, text: string, confidence = 0.01, trailingWord?: string): void {
      c.turnText = text;
      sendJson(c, turn(c, text, { end_of_turn: false, turn_is_formatted: false, confidence, trailingWord }));
    },
    endOfTurn(c: FakeAssemblyAiConnection, text: string, confidence = 0.9, formatted?: string | false): void {
      sendJson(c, turn(c, text, { end_of_turn: true, turn_is_formatted: false, confidence }));
      if (c.query.get("format_turns") === "true" && formatted !== false) {
        sendJson(c, turn(c, formatted ?? formatText(text), { end_of_turn: true, turn_is_formatted: true, confidence }));
      }
      c.turnOrder += 1;
      c.turnText = "";
    },
    speechStarted(c: FakeAssemblyAiConnection): void {
      sendJson(c, { type: "SpeechStarted", timestamp: Math.round(c.audioMs) });
    },
    speak(c: FakeAssemblyAiConnection, text: string, confidence?: number, formatted?: string | false): void {
      const words = text.split(/\s+/).filter((w) => w !== "");
      words.forEach((word, i) => script.partial(c, words.slice(0, i).join(" "), 0.01, word));
      script.endOfTurn(c, words.join(" "), confidence, formatted);
    },
    fail(c: FakeAssemblyAiConnection, code: number, error: string): void {
      // "the server sends an `Error` text frame immediately before it closes the WebSocket …
      // The WebSocket then closes with this same value as its close code" (Common session errors and closures).
      sendJson(c, { type: "Error", error_code: code, error });
      // A close reason is at most 123 bytes.
      c.socket.close(code, Buffer.from(error).subarray(0, 123).toString());
    },
  };

  function accept(ws: WebSocket, query: URLSearchParams, headers: IncomingHttpHeaders, authorized: boolean): void {
    const c: FakeAssemblyAiConnection = { query, headers, socket: ws, frames: [], frameMs: [], audioBytes: 0, audioMs: 0, messages: [], turnOrder: 0, turnText: "", closed: false };
    connections.push(c);
    ws.on("close", (code: number) => {
      c.closed = true;
      c.closeCode = code;
    });
    ws.on("error", () => {});
    if (!authorized) return script.fail(c, 4001, "Not authorized");
    const invalid = validateQuery(query, options.requireSpeechModel ?? true);
    if (invalid !== undefined) return script.fail(c, invalid.code, invalid.error);
    const rate = Number(query.get("sample_rate"));
    const bytesPerSecond = rate * (query.get("encoding") === "pcm_mulaw" ? 1 : 2);
    if (options.begin ?? true) sendJson(c, { type: "Begin", id: randomUUID(), expires_at: Math.floor(Date.now() / 1000) + 3600 });

    ws.on("message", (data: RawData, isBinary: boolean) => {
      const buffer = frameBytes(data);
      if (isBinary) {
        const ms = (buffer.byteLength / bytesPerSecond) * 1000;
        c.frames.push(buffer);
        c.frameMs.push(ms);
        c.audioBytes += buffer.byteLength;
        state.totalAudio += buffer.byteLength;
        c.audioMs += ms;
        if (ms < 50 - 1e-9 || ms > 1000 + 1e-9) {
          violations.push(`audio frame of ${ms.toFixed(1)} ms (must be 50–1000 ms)`);
          if (strictFrames) return script.fail(c, 3007, `Input duration violation: ${ms.toFixed(1)} ms. Expected between 50 and 1000 ms`);
        }
        const text = triggers.advanced(c);
        if (text !== undefined) {
          script.speechStarted(c);
          script.speak(c, text);
        }
        return;
      }
      const message = readControl(c, buffer, messages, options.ignore);
      if (message === undefined) return;
      switch (message.type) {
        case "ForceEndpoint":
          if (c.turnText !== "") script.endOfTurn(c, c.turnText);
          break;
        case "Terminate":
          if (c.turnText !== "") script.endOfTurn(c, c.turnText);
          sendJson(c, { type: "Termination", audio_duration_seconds: Math.round(c.audioMs / 1000), session_duration_seconds: Math.round(c.audioMs / 1000) + 1 });
          ws.close(1000);
          break;
        case "KeepAlive":
        case "UpdateConfiguration":
          break;
        default:
          violations.push(`unknown client message ${JSON.stringify(message)}`);
          script.fail(c, 4101, "Invalid message type");
      }
    });
  }

  const base = await sttFakeBase(state);
  const own: Omit<FakeAssemblyAi, keyof SttFakeBase<FakeAssemblyAiConnection>> = {
    partial: (text, opts = {}) => script.partial(latest(), text, opts.confidence, opts.trailingWord),
    endOfTurn: (text, opts = {}) => script.endOfTurn(latest(), text, opts.confidence, opts.formatted),
    final: (text, opts = {}) => script.endOfTurn(latest(), text, opts.confidence, opts.formatted),
    speak: (text, opts = {}) => script.speak(latest(), text, opts.confidence, opts.formatted),
    speechStarted: () => script.speechStarted(latest()),
    fail: (code, error) => script.fail(latest(), code, error),
  };
  return Object.assign(base, own);
}
