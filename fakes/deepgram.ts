// A fake Deepgram streaming STT server (`/v1/listen`) for tests. It listens on loopback and speaks
// the real wire protocol (docs/vendors.md, Deepgram): it checks the upgrade the way the
// vendor does (`Authorization: Token <key>` → 401 otherwise; bad listen params → 400 with a
// `dg-error` header), records binary audio and text control messages, answers `Finalize`
// (a `from_finalize` final) and `CloseStream` (flush, `Metadata`, close 1000), closes an idle
// stream with 1011 NET-0001 after 10 s without audio or KeepAlive, and lets a test script
// `Results` / `UtteranceEnd` / `SpeechStarted`, speak a whole utterance as Deepgram streams one
// (`speak`: interims over the unfinalized audio, several `is_final` segments, the last with
// `speech_final`), or speak a transcript that way once N ms of audio arrived.
import { frameBytes, readControl, sttFakeBase, sttFakeState, type SttFakeBase } from "./stt-shared.js";
import { latestConnection, sendJson } from "./ws-waits.js";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { RawData, WebSocket } from "ws";
import { refuseUpgrade } from "./loopback.js";

export const FAKE_DEEPGRAM_KEY = "fake-deepgram-key";

const ENCODINGS = new Set(["linear16", "linear32", "flac", "alaw", "mulaw", "amr-nb", "amr-wb", "opus", "ogg-opus", "speex", "g729"]);

export interface FakeDeepgramOptions {
  /** The accepted key (`Authorization: Token <key>` or `Bearer <key>`). Default FAKE_DEEPGRAM_KEY. */
  apiKey?: string;
  /** Close with 1011 NET-0001 after this long with neither audio nor KeepAlive (vendor: 10 s). 0 = never. */
  idleTimeoutMs?: number;
  /** Auto mode: after each `transcriptAfterMs` of audio on a connection, emit the next transcript. */
  transcriptAfterMs?: number;
  /**
   * Auto-mode transcripts, one per utterance in order. Default "hello world". Each is spoken
   * with `speak` in two `is_final` segments (its first half of the words, then the rest) when it
   * has two words or more: the shape Deepgram gives an utterance with a pause-free split.
   */
  transcript?: string | string[];
  /** Control message types recorded but not acted on (e.g. "CloseStream", to test a close timeout). */
  ignore?: string[];
}

export interface FakeDeepgramConnection {
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly socket: WebSocket;
  /** Binary frames received, in order. */
  readonly frames: Buffer[];
  audioBytes: number;
  /** Audio received, in ms (from sample_rate and encoding). */
  audioMs: number;
  /** Text frames received, parsed (unparseable ones as `{type:"<invalid>", raw}`). */
  readonly messages: Record<string, unknown>[];
  closed: boolean;
  closeCode?: number;
}

/** The fake at ws://127.0.0.1:PORT/v1/listen: the common STT-fake surface, and Deepgram's own script. */
export interface FakeDeepgram extends SttFakeBase<FakeDeepgramConnection> {
  /** An interim `Results` (is_final:false) on the latest connection. */
  partial(text: string): void;
  /** A final `Results` (is_final:true), `speech_final` when told. */
  final(text: string, options?: { speechFinal?: boolean; fromFinalize?: boolean }): void;
  /**
   * One utterance as Deepgram streams it (its docs "Using Interim Results" and "Configure
   * Endpointing and Interim Results"): per segment, interims growing word by word over the audio
   * after the last `is_final` result (never repeating finalized text), then the segment as an
   * `is_final` result; the last segment with `speech_final:true`; then `UtteranceEnd` (sent after
   * the word gap whether or not `speech_final` came). `speechFinal:false` leaves the pause to
   * `UtteranceEnd` alone; `utteranceEnd:false` leaves it out.
   */
  speak(segments: readonly string[], options?: { speechFinal?: boolean; utteranceEnd?: boolean }): void;
  utteranceEnd(): void;
  speechStarted(): void;
}

/** How auto mode splits a transcript into `is_final` segments: the first half of its words, then the rest. */
export function deepgramSegments(text: string): string[] {
  const words = text.split(/\s+/).filter((w) => w !== "");
  if (words.length < 2) return [text];
  const half = Math.ceil(words.length / 2);
  return [words.slice(0, half).join(" "), words.slice(half).join(" ")];
}

/** Why the upgrade is refused (400), or undefined when the listen params are valid (Deepgram's listen-streaming reference). */
function validateQuery(q: URLSearchParams): string | undefined {
  const bool = (name: string): string | undefined => {
    const v = q.get(name);
    return v === null || v === "true" || v === "false" ? undefined : `${name} must be true or false`;
  };
  const encoding = q.get("encoding");
  if (encoding !== null && !ENCODINGS.has(encoding)) return `unknown encoding ${encoding}`;
  const rate = q.get("sample_rate");
  if (encoding !== null && (rate === null || !/^\d+$/.test(rate) || Number(rate) <= 0)) return "sample_rate is required with a raw encoding";
  const channels = q.get("channels");
  if (channels !== null && !/^[1-9]\d*$/.test(channels)) return "channels must be a positive integer";
  const endpointing = q.get("endpointing");
  if (endpointing !== null && endpointing !== "false" && !/^\d+$/.test(endpointing)) return "endpointing must be an integer or false";
  const utteranceEnd = q.get("utterance_end_ms");
  if (utteranceEnd !== null) {
    if (!/^\d+$/.test(utteranceEnd) || Number(utteranceEnd) < 1000) return "utterance_end_ms must be an integer of at least 1000";
    if (q.get("interim_results") !== "true") return "utterance_end_ms needs interim_results=true";
  }
  for (const name of ["interim_results", "vad_events", "smart_format", "punctuate"]) {
    const problem = bool(name);
    if (problem !== undefined) return problem;
  }
  if (q.getAll("keyterm").length > 0 && !(q.get("model") ?? "").startsWith("nova-3")) return "keyterm is only available on nova-3";
  return undefined;
}

function bytesPerSecond(q: URLSearchParams): number {
  const rate = Number(q.get("sample_rate") ?? "16000");
  const channels = Number(q.get("channels") ?? "1");
  const encoding = q.get("encoding") ?? "linear16";
  const width = encoding === "linear16" ? 2 : encoding === "linear32" ? 4 : 1;
  return rate * channels * width;
}

export async function startFakeDeepgram(options: FakeDeepgramOptions = {}): Promise<FakeDeepgram> {
  const apiKey = options.apiKey ?? FAKE_DEEPGRAM_KEY;
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000;
  const state = sttFakeState<FakeDeepgramConnection>("fake deepgram", "/v1/listen", options);
  const { connections, messages, rejected, violations, triggers, server } = state;
  let clock = 0; // stream seconds for Results timing, per server (good enough for tests)

  const wss = server.webSockets({ noServer: true });

  const refuse = (socket: Socket, status: number, reason: string): void => {
    rejected.push({ status, reason });
    const body = { err_code: status === 401 ? "INVALID_AUTH" : "Bad Request", err_msg: reason };
    refuseUpgrade(socket, status, status === 401 ? "Unauthorized" : "Bad Request", body, { "dg-error": reason });
  };

  server.http.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://fake");
    if (url.pathname !== "/v1/listen") return refuse(socket, 404, `no route ${url.pathname}`);
    const auth = req.headers.authorization ?? "";
    if (auth !== `Token ${apiKey}` && auth !== `Bearer ${apiKey}`) return refuse(socket, 401, "Invalid credentials.");
    const problem = validateQuery(url.searchParams);
    if (problem !== undefined) return refuse(socket, 400, problem);
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, url.searchParams, req.headers));
  });

  const latest = (): FakeDeepgramConnection => latestConnection("fake deepgram", connections);

  const results = (text: string, isFinal: boolean, speechFinal: boolean, fromFinalize: boolean): object => {
    const start = clock;
    const duration = Math.max(0.3, text.split(/\s+/).length * 0.3);
    if (isFinal) clock += duration;
    const words = text === "" ? [] : text.split(/\s+/).map((word, i) => ({ word: word.toLowerCase(), start: start + i * 0.3, end: start + i * 0.3 + 0.25, confidence: 0.98, punctuated_word: word }));
    return {
      type: "Results",
      channel_index: [0, 1],
      duration,
      start,
      is_final: isFinal,
      speech_final: speechFinal,
      from_finalize: fromFinalize,
      channel: { alternatives: [{ transcript: text, confidence: 0.98, words }] },
      metadata: { request_id: "fake-request", model_info: { name: "fake", version: "1", arch: "fake" }, model_uuid: "fake-model" },
    };
  };

  const interims = new WeakMap<FakeDeepgramConnection, string>();

  const script = {
    partial(c: FakeDeepgramConnection, text: string): void {
      interims.set(c, text);
      sendJson(c, results(text, false, false, false));
    },
    final(c: FakeDeepgramConnection, text: string, speechFinal = false, fromFinalize = false): void {
      interims.delete(c);
      sendJson(c, results(text, true, speechFinal, fromFinalize));
    },
    utteranceEnd(c: FakeDeepgramConnection): void {
      sendJson(c, { type: "UtteranceEnd", channel: [0, 1], last_word_end: clock });
    },
    speechStarted(c: FakeDeepgramConnection): void {
      sendJson(c, { type: "SpeechStarted", channel: [0], timestamp: clock });
    },
    speak(c: FakeDeepgramConnection, segments: readonly string[], speechFinal = true, utteranceEnd = true): void {
      segments.forEach((segment, i) => {
        const words = segment.split(/\s+/).filter((w) => w !== "");
        // Interims cover only the audio after the last is_final result: this segment's words so far.
        for (let n = 1; n <= words.length; n++) script.partial(c, words.slice(0, n).join(" "));
        script.final(c, segment, speechFinal && i === segments.length - 1);
      });
      if (utteranceEnd) script.utteranceEnd(c);
    },
  };

  function accept(ws: WebSocket, query: URLSearchParams, headers: IncomingHttpHeaders): void {
    const c: FakeDeepgramConnection = { query, headers, socket: ws, frames: [], audioBytes: 0, audioMs: 0, messages: [], closed: false };
    connections.push(c);
    const rate = bytesPerSecond(query);
    let idle: NodeJS.Timeout | undefined;
    const touch = (): void => {
      if (idleTimeoutMs <= 0) return;
      if (idle === undefined) {
        idle = setTimeout(() => ws.close(1011, "NET-0001: no audio or KeepAlive received within the timeout window"), idleTimeoutMs);
        idle.unref();
      } else {
        idle.refresh();
      }
    };
    touch();

    ws.on("message", (data: RawData, isBinary: boolean) => {
      const buffer = frameBytes(data);
      if (isBinary) {
        touch();
        c.frames.push(buffer);
        c.audioBytes += buffer.byteLength;
        state.totalAudio += buffer.byteLength;
        c.audioMs = (c.audioBytes / rate) * 1000;
        const text = triggers.advanced(c);
        if (text !== undefined) {
          script.speechStarted(c);
          script.speak(c, deepgramSegments(text));
        }
        return;
      }
      const message = readControl(c, buffer, messages, options.ignore);
      if (message === undefined) return;
      switch (message.type) {
        case "KeepAlive":
          touch();
          break;
        case "Finalize":
          script.final(c, interims.get(c) ?? "", false, true);
          break;
        case "CloseStream": {
          const pending = interims.get(c);
          if (pending !== undefined) script.final(c, pending, true);
          sendJson(c, { type: "Metadata", transaction_key: "deprecated", request_id: "fake-request", sha256: "0", created: new Date().toISOString(), duration: c.audioMs / 1000, channels: 1 });
          ws.close(1000);
          break;
        }
        default:
          violations.push(`unknown control message ${JSON.stringify(message)}`);
      }
    });
    ws.on("close", (code: number) => {
      c.closed = true;
      c.closeCode = code;
      if (idle !== undefined) clearTimeout(idle);
    });
    ws.on("error", () => {});
  }

  const base = await sttFakeBase(state);
  const own: Omit<FakeDeepgram, keyof SttFakeBase<FakeDeepgramConnection>> = {
    partial: (text) => script.partial(latest(), text),
    final: (text, opts = {}) => script.final(latest(), text, opts.speechFinal ?? false, opts.fromFinalize ?? false),
    speak: (segments, opts = {}) => script.speak(latest(), segments, opts.speechFinal ?? true, opts.utteranceEnd ?? true),
    utteranceEnd: () => script.utteranceEnd(latest()),
    speechStarted: () => script.speechStarted(latest()),

  };
  return Object.assign(base, own);
}
