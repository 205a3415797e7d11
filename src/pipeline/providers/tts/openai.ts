/**
 * OpenAI TTS over HTTP (`POST https://api.openai.com/v1/audio/speech`), as docs/vendors.md
 * (OpenAI TTS) describes it.
 *
 * HTTP takes no incremental input, so a TtsStream sends **one request per pushed segment**, one at a
 * time and in order (the caller batches text into sentences), and streams each response body out as
 * audio as it arrives. Vendor facts this relies on (docs/vendors.md (OpenAI TTS)):
 * - `response_format:"pcm"` is raw 24 kHz, 16-bit signed LE, mono, no header, whatever rate was asked
 *   for: the session reports 24000 and resampling is the caller's job;
 * - the body is the raw audio, chunked (the default `stream_format:"audio"`; `sse` is not for tts-1*);
 * - `input` is at most 4096 characters; `instructions` does not apply to tts-1*;
 * - to stop on barge-in, abort the HTTP request.
 * Body chunks need not end on a sample boundary: an odd trailing byte is held for the next chunk, so
 * no half sample is ever emitted. No word timings (OpenAI sends none).
 *
 * A dropped connection (network error, 5xx, 429, or no response within 10 s) is retried, bounded
 * (3 attempts with a short backoff), re-sending the segment in progress from its start: OpenAI's
 * audio is not deterministic, so its already-delivered part cannot be skipped and is heard again.
 */
import { GatewayError, messageOf } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { guardStream, type TtsOpenOptions, type TtsProvider, type TtsSession, type TtsStream, type TtsStreamEvents } from "../../tts-port.js";
import { isKeyRefused, ttsKeyRefused } from "../../../providers/key-refusal.js";
import type { Env } from "../keys.js";
import { optionsOf, providerKey } from "../provider-options.js";
import { retrying, type Retrying, type RetryOptions } from "../provider-runtime.js";
import { reconnect } from "../../../providers/reconnect.js";
import { spread } from "../../../spread.js";

/** Runtime knobs: logging, time and the retry budget (`RetryOptions`: a retry re-sends the segment in progress), and: */
export interface OpenAiTtsOptions extends RetryOptions {
  /** How long a request waits for the response headers (ms). Default 10 000. */
  readonly responseTimeoutMs?: number;
  /** The fetch to use (default the global one). */
  readonly fetch?: typeof fetch;
}

export const OPENAI_TTS_KEY_VARIABLE = "OPENAI_API_KEY";
export const OPENAI_TTS_DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** docs/vendors.md (OpenAI TTS): `pcm` is always 24 kHz. */
export const OPENAI_TTS_SAMPLE_RATE = 24000;
/** docs/vendors.md (OpenAI TTS): `input` is at most 4096 characters. */
export const OPENAI_TTS_MAX_INPUT = 4096;

const DEFAULT_RESPONSE_TIMEOUT_MS = 10_000;

/** Build the OpenAI TTS provider. Throws MissingKeyError (naming the variable) when the key is absent. */
export function openAiTts(descriptor: ProviderDescriptor, env: Env, options: OpenAiTtsOptions = {}): TtsProvider {
  const read = optionsOf(descriptor, "tts");
  const { apiKey, keyVariable } = providerKey(descriptor, env, [OPENAI_TTS_KEY_VARIABLE], read);
  const speed = descriptor.options.speed;
  if (speed !== undefined && (typeof speed !== "number" || speed < 0.25 || speed > 4)) {
    throw new GatewayError("internal", "tts.options.speed must be a number from 0.25 to 4.0.", { fatal: true });
  }
  const instructions = read.string("instructions");
  const config: Config = {
    url: `${(read.string("baseURL") ?? OPENAI_TTS_DEFAULT_BASE_URL).replace(/\/+$/, "")}/audio/speech`,
    apiKey,
    keyVariable,
    body: {
      model: read.string("model") ?? "gpt-4o-mini-tts",
      voice: read.string("voice") ?? "alloy",
      response_format: "pcm",
      ...(instructions === undefined ? {} : { instructions }),
      ...(speed === undefined ? {} : { speed }),
    },
    ...retrying(options),
    responseTimeoutMs: options.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS,
    fetch: options.fetch ?? fetch,
  };
  return {
    kind: "openai",
    open(openOptions: TtsOpenOptions): Promise<TtsSession> {
      // HTTP: nothing to connect; the key is checked by the first request (401 → the stream's error).
      if (openOptions.signal?.aborted === true) return Promise.reject(new GatewayError("tts", "openai: opening the TTS session was aborted."));
      return Promise.resolve(new OpenAiSession(config));
    },
  };
}

interface Config extends Retrying {
  readonly url: string;
  readonly apiKey: string;
  readonly keyVariable: string;
  /** Every field of the request body but `input`. */
  readonly body: Readonly<Record<string, unknown>>;
  readonly responseTimeoutMs: number;
  readonly fetch: typeof fetch;
}

class OpenAiSession implements TtsSession {
  readonly sampleRate = OPENAI_TTS_SAMPLE_RATE;
  private readonly streams = new Set<OpenAiStream>();
  private closed = false;

  constructor(private readonly config: Config) {}

  stream(events: TtsStreamEvents): TtsStream {
    const stream = new OpenAiStream(this.config, events, () => this.streams.delete(stream));
    if (this.closed) queueMicrotask(() => stream.fail(new GatewayError("tts", "openai: the TTS session is closed.")));
    else this.streams.add(stream);
    return stream;
  }

  close(): Promise<void> {
    this.closed = true;
    for (const stream of [...this.streams]) stream.cancel();
    return Promise.resolve();
  }
}

/** How one request ended: spoken, worth retrying, or not. */
type Outcome = { readonly kind: "ok" } | { readonly kind: "retry"; readonly error: Error } | { readonly kind: "fatal"; readonly error: Error };

class OpenAiStream implements TtsStream {
  private readonly guard: ReturnType<typeof guardStream>;
  private readonly segments: string[] = [];
  private ended = false;
  private running = false;
  /** Aborted by `cancel()`: the in-flight request and any backoff wait. */
  private readonly cancelled = new AbortController();

  constructor(
    private readonly config: Config,
    events: TtsStreamEvents,
    private readonly onFinished: () => void,
  ) {
    this.guard = guardStream(events);
  }

  push(text: string): void {
    if (!this.guard.open || this.ended || text.trim() === "") return;
    // docs/vendors.md (OpenAI TTS): at most 4096 characters per request.
    for (let start = 0; start < text.length; start += OPENAI_TTS_MAX_INPUT) this.segments.push(text.slice(start, start + OPENAI_TTS_MAX_INPUT));
    void this.pump();
  }

  end(): void {
    if (!this.guard.open || this.ended) return;
    this.ended = true;
    void this.pump();
  }

  cancel(): void {
    if (!this.guard.open) return;
    this.guard.cancel();
    this.segments.length = 0;
    this.cancelled.abort(new Error("cancelled"));
    this.onFinished();
  }

  fail(error: Error): void {
    this.onFinished();
    this.cancelled.abort(error);
    this.guard.fail(error, (thrown) => this.config.log.warn({ err: thrown }, "openai tts: an error handler threw"));
  }

  /** Speak the queued segments one at a time, in order; done after the last once ended. */
  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await Promise.resolve(); // never deliver inside push()/end()
      for (let segment = this.segments.shift(); segment !== undefined && this.guard.open; segment = this.segments.shift()) {
        if (!(await this.speak(segment))) return;
      }
      if (this.guard.open && this.ended && this.segments.length === 0) {
        this.onFinished();
        this.guard.events.done();
      }
    } catch (error) {
      this.fail(new GatewayError("tts", `openai tts: ${messageOf(error)}`, { cause: error }));
    } finally {
      this.running = false;
    }
    // A push that raced the end of the loop.
    if (this.guard.open && this.segments.length > 0) void this.pump();
  }

  /** One segment, retried on drops on the one retry loop (src/providers/reconnect.ts); false when the stream failed or was cancelled. */
  private async speak(segment: string): Promise<boolean> {
    const delays = this.config.retryDelaysMs;
    let last: Outcome = { kind: "ok" };
    const outcome = await reconnect({
      clock: this.config.clock,
      // The first request goes at once; the delays are the retries', and their budget.
      immediately: true,
      delaysMs: delays,
      signal: this.cancelled.signal,
      attempt: async () => {
        last = await this.request(segment);
        if (last.kind !== "ok") throw last.error;
      },
      retryable: () => last.kind !== "fatal",
      failed: (error, n, retry) => {
        if (retry && n <= delays.length) this.config.log.warn({ attempt: n, err: error }, "openai tts request dropped; re-sending the segment");
      },
    });
    if (!this.guard.open || outcome.kind === "stopped") return false; // cancelled, or failed meanwhile
    if (outcome.kind === "connected") return true;
    const error =
      outcome.kind === "refused"
        ? outcome.error
        : new GatewayError("tts", `openai tts: the request failed and ${delays.length} retries failed (${outcome.last?.message ?? "no attempt"}).`, { cause: outcome.last });
    this.fail(error);
    return false;
  }

  private async request(input: string): Promise<Outcome> {
    const controller = new AbortController();
    const onCancel = (): void => controller.abort(this.cancelled.signal.reason);
    this.cancelled.signal.addEventListener("abort", onCancel, { once: true });
    let timedOut = false;
    const timer = this.config.clock.setTimeout(() => {
      timedOut = true;
      controller.abort(new Error("timeout"));
    }, this.config.responseTimeoutMs);
    try {
      const response = await this.config.fetch(this.config.url, {
        method: "POST",
        headers: { Authorization: `Bearer ${this.config.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify(spread(this.config.body, { input })),
        signal: controller.signal,
      });
      timer.cancel();
      if (!response.ok) return await this.refusal(response);
      if (response.body === null) return { kind: "retry", error: new Error("the response has no body") };
      await this.relay(response.body);
      return { kind: "ok" };
    } catch (error) {
      if (!this.guard.open) return { kind: "ok" }; // cancelled: nothing to report
      if (timedOut) return { kind: "retry", error: new Error(`no response within ${this.config.responseTimeoutMs / 1000} s`) };
      return { kind: "retry", error: error instanceof Error ? error : new Error(String(error)) };
    } finally {
      timer.cancel();
      this.cancelled.signal.removeEventListener("abort", onCancel);
    }
  }

  /** Stream the body out as audio, holding an odd trailing byte so no half sample is emitted. */
  private async relay(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    let carry: number | undefined;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!this.guard.open) return;
        if (value.length === 0) continue;
        let bytes = value;
        if (carry !== undefined) {
          bytes = new Uint8Array(value.length + 1);
          bytes[0] = carry;
          bytes.set(value, 1);
          carry = undefined;
        }
        const even = bytes.length - (bytes.length % 2);
        if (even < bytes.length) carry = bytes[even];
        if (even > 0) this.guard.events.audio(bytes.subarray(0, even));
      }
      if (carry !== undefined) this.config.log.warn({}, "openai tts: the response ended on half a sample; dropped its last byte");
    } finally {
      reader.releaseLock();
    }
  }

  private async refusal(response: Response): Promise<Outcome> {
    const status = response.status;
    if (isKeyRefused(status)) {
      // OpenAI's message echoes part of the key: leave it out.
      await response.body?.cancel().catch(() => undefined);
      return { kind: "fatal", error: ttsKeyRefused("openai", status, this.config.keyVariable) };
    }
    const detail = await errorDetail(response);
    const error = new GatewayError("tts", `openai tts: HTTP ${status}.${detail}`);
    return status === 429 || status >= 500 ? { kind: "retry", error } : { kind: "fatal", error };
  }
}

async function errorDetail(response: Response): Promise<string> {
  try {
    const text = await response.text();
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown } };
      if (typeof parsed.error?.message === "string") return ` ${parsed.error.message}`;
    } catch {
      // not JSON: use the text
    }
    return text === "" ? "" : ` ${text.slice(0, 200)}`;
  } catch {
    return "";
  }
}
