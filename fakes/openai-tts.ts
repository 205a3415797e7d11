// A fake OpenAI speech endpoint (POST /v1/audio/speech, docs/vendors.md (OpenAI TTS)) on loopback, for adapter tests.
//
// It checks `Authorization: Bearer <key>` (401 with OpenAI's error body when wrong) and the body
// (`model`, `voice`, `input` ≤ 4096 characters, `response_format:"pcm"`, the only format it makes),
// records every request, and streams raw 24 kHz PCM16 LE back in deliberately odd-sized chunks
// (default 999 bytes), so sample boundaries fall inside chunks. Synthesis is deterministic: every
// character becomes `msPerChar` ms of samples whose value is the character code.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { loopbackServer } from "./loopback.js";
import { pcmForText } from "./tts-pcm.js";

export const OPENAI_PCM_RATE = 24000;

export interface FakeOpenAiTtsOptions {
  /** The accepted key (default "test-key"). */
  apiKey?: string;
  /** Audio per character (default 10 ms). */
  msPerChar?: number;
  /** Bytes per body write (default 999: odd, so samples straddle chunks). */
  chunkBytes?: number;
  /** Pause between body writes (default 0). */
  chunkDelayMs?: number;
}

export interface SpeechRequest {
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export interface FakeOpenAiTts {
  /** Base URL including /v1, e.g. http://127.0.0.1:PORT/v1 */
  readonly url: string;
  /** Every parsed request body, in order. */
  readonly messages: Record<string, unknown>[];
  readonly requests: SpeechRequest[];
  readonly violations: string[];
  /** The most requests in flight at once. */
  readonly maxConcurrent: number;
  /** Responses the client went away from before their end (aborts, drops). */
  readonly aborted: number;
  /** Requests refused with 401 (not recorded in `requests`). */
  readonly unauthorized: number;
  /** Destroy every in-flight response's connection now. */
  drop(): void;
  /** Destroy the next response's connection after it has written at least `bytes` bytes (one shot). */
  dropNextAfterBytes(bytes: number): void;
  /** Answer the next `times` requests with `status` and an OpenAI error body. */
  failNext(status: number, times?: number): void;
  close(): Promise<void>;
}

export { pcmForText, samplesPerChar, textFromPcm } from "./tts-pcm.js";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function sendError(res: ServerResponse, status: number, message: string, code: string | null = null): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } }));
}

export async function startFakeOpenAiTts(options: FakeOpenAiTtsOptions = {}): Promise<FakeOpenAiTts> {
  const apiKey = options.apiKey ?? "test-key";
  const msPerChar = options.msPerChar ?? 10;
  const chunkBytes = options.chunkBytes ?? 999;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const messages: Record<string, unknown>[] = [];
  const requests: SpeechRequest[] = [];
  const violations: string[] = [];
  const inFlight = new Set<ServerResponse>();
  let maxConcurrent = 0;
  let aborted = 0;
  let unauthorized = 0;
  let dropAfter: number | undefined;
  const failures: number[] = [];

  const server = loopbackServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        if (req.method !== "POST" || req.url !== "/v1/audio/speech") return sendError(res, 404, `Invalid URL (${req.method} ${req.url})`);
        if (req.headers.authorization !== `Bearer ${apiKey}`) {
          unauthorized++;
          return sendError(res, 401, `Incorrect API key provided: ${String(req.headers.authorization).slice(7, 10)}***.`, "invalid_api_key");
        }
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        } catch {
          violations.push("malformed JSON body");
          return sendError(res, 400, "We could not parse the JSON body of your request.");
        }
        requests.push({ headers: req.headers, body });
        messages.push(body);
        const problem =
          req.headers["content-type"] !== "application/json"
            ? "content-type must be application/json"
            : typeof body.model !== "string"
              ? "model is required"
              : typeof body.voice !== "string" && typeof (body.voice as { id?: unknown } | undefined)?.id !== "string"
                ? "voice is required"
                : typeof body.input !== "string" || body.input === ""
                  ? "input is required"
                  : body.input.length > 4096
                    ? "input is longer than 4096 characters"
                    : body.response_format !== "pcm"
                      ? "this fake only makes response_format pcm"
                      : undefined;
        if (problem !== undefined) {
          violations.push(problem);
          return sendError(res, 400, problem);
        }
        const failure = failures.shift();
        if (failure !== undefined) return sendError(res, failure, `fake failure ${failure}`);

        inFlight.add(res);
        maxConcurrent = Math.max(maxConcurrent, inFlight.size);
        let finished = false;
        res.on("close", () => {
          inFlight.delete(res);
          if (!finished) aborted++;
        });
        const dropAt = dropAfter;
        dropAfter = undefined;
        const pcm = pcmForText(body.input as string, OPENAI_PCM_RATE, msPerChar);
        res.writeHead(200, { "content-type": "application/octet-stream", "transfer-encoding": "chunked" });
        for (let offset = 0; offset < pcm.length; offset += chunkBytes) {
          if (res.destroyed) return;
          res.write(pcm.subarray(offset, offset + chunkBytes));
          if (dropAt !== undefined && offset + chunkBytes >= dropAt) {
            await sleep(5); // let the bytes reach the client first
            res.socket?.destroy();
            return;
          }
          if (chunkDelayMs > 0) await sleep(chunkDelayMs);
          else await new Promise((resolve) => setImmediate(resolve));
        }
        finished = true;
        res.end();
      })();
    });
  });

  const port = await server.listen();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    messages,
    requests,
    violations,
    get maxConcurrent() {
      return maxConcurrent;
    },
    get aborted() {
      return aborted;
    },
    get unauthorized() {
      return unauthorized;
    },
    drop() {
      for (const res of inFlight) res.socket?.destroy();
    },
    dropNextAfterBytes(bytes) {
      dropAfter = bytes;
    },
    failNext(status, times = 1) {
      for (let i = 0; i < times; i++) failures.push(status);
    },
    close: () => server.close(),
  };
}
