/**
 * The TTS port's conformance suite (src/pipeline/tts-port.ts), run against every adapter on its
 * loopback fake (fakes/cartesia.ts, fakes/elevenlabs.ts, fakes/openai-tts.ts); a vendor's own test
 * file (test/unit/pipeline/tts-<vendor>.test.ts) keeps what only that vendor does.
 *
 * Keys: without its key an adapter fails at construction with MissingKeyError naming the variable
 * (`options.apiKeyEnv` names another); a key the vendor refuses (a socket's upgrade, or OpenAI's
 * first request) is a fatal `tts` error naming the variable, never the key, and is not retried.
 *
 * Opening: no answer in 10 s is an error (a socket's handshake, an HTTP request's response
 * headers); an aborted signal rejects open() (a socket adapter's also during the handshake).
 *
 * Speaking: a drop mid-stream is retried and what the caller hears ends with the whole text. A
 * socket adapter resumes from the first unspoken word (nothing heard twice, word timings run on
 * from the first sample); OpenAI's HTTP adapter can only ask for the segment in progress again, so
 * the start of that segment is heard twice. Once the retry budget is spent the stream fails.
 * Malformed JSON from a socket vendor is logged and ignored. cancel() is a barrier: no event after
 * it, the vendor is told, later pushes are dropped and the session serves the next stream.
 */
import { describe, expect, it, vi } from "vitest";
import { virtualClock, type Clock } from "../../src/clock.js";
import { GatewayError, MissingKeyError } from "../../src/errors.js";
import { silentLogger } from "../../src/log.js";
import type { ProviderLog } from "../../src/providers/provider-log.js";
import { cartesiaTts } from "../../src/pipeline/providers/tts/cartesia.js";
import { elevenLabsTts } from "../../src/pipeline/providers/tts/elevenlabs.js";
import { openAiTts } from "../../src/pipeline/providers/tts/openai.js";
import type { TtsProvider, TtsSession, TtsStream } from "../../src/pipeline/tts-port.js";
import { startFakeCartesia } from "../../fakes/cartesia.js";
import { startFakeElevenLabs } from "../../fakes/elevenlabs.js";
import { startFakeOpenAiTts } from "../../fakes/openai-tts.js";
import { pcmForText, textFromPcm } from "../../fakes/tts-pcm.js";
import { ttsRecorder, type TtsRecorder } from "../helpers/tts-recorder.js";
import { closeAfterEach } from "../helpers/cleanups.js";

type Env = Record<string, string>;

/** The adapter's runtime knobs the cases set. */
interface Runtime {
  readonly clock?: Clock;
  readonly retryDelaysMs?: readonly number[];
  readonly log?: ProviderLog;
}

/** How a case wants its fake to behave. */
interface Settings {
  /** Pause after each chunk the fake sends (ms). */
  readonly chunkDelayMs?: number;
  /** Accept the connection, never answer (a socket's handshake). */
  readonly hangHandshake?: boolean;
}

/** One fake for one test, and the adapter on it. */
interface Served {
  /** The adapter on this fake: `env` defaults to the key the fake accepts. */
  provider(options?: Record<string, unknown>, env?: Env, runtime?: Runtime): TtsProvider;
  /** A 16 kHz session on this fake, closed after the test. */
  open(runtime?: Runtime): Promise<TtsSession>;
  /** Every text the vendor was asked to speak, in order, across reconnects. */
  texts(): string[];
  /** Everything the vendor received (messages, or requests). */
  received(): readonly unknown[];
  /** Connections (a socket adapter) or requests (HTTP) the vendor accepted. */
  attempts(): number;
  /** Keys the vendor refused, where its fake counts them. */
  refusals(): number | undefined;
  /** Break the connection once the vendor has sent about three chunks (one shot). */
  dropSoon(): void;
  /** The texts re-sent after the drop: the first on the new connection, or every request after the broken one. */
  resent(): string[];
  /** What the vendor wire shows after a drop, besides the text (the vendor's own framing). */
  checkResent(): void;
  /** Make the stream fail for good: the vendor goes away (sockets) or keeps answering 503 (HTTP). */
  failForGood(stream: TtsStream, rec: TtsRecorder): Promise<void>;
  /** The vendor was told the first stream was cancelled (throws until it was). */
  checkCancelled(): void;
  /** Send a raw text frame (socket vendors). */
  sendRaw(text: string): void;
  close(): Promise<void>;
}

interface TtsAdapter {
  readonly name: string;
  /** The environment variable the key is read from by default. */
  readonly keyVariable: string;
  /** An option the adapter refuses at construction, and how the refusal names it. */
  readonly invalidOption: { readonly options: Record<string, unknown>; readonly message: RegExp };
  /** The adapter with no fake behind it (construction only). */
  build(options: Record<string, unknown>, env: Env): TtsProvider;
  serve(settings?: Settings): Promise<Served>;
  /** What the caller hears for a pushed text (ElevenLabs ends every chunk with a space). */
  spoken(text: string): string;
  /** Where a refused key surfaces: open() (a socket's upgrade) or the first stream (HTTP). */
  refusal(provider: TtsProvider): Promise<unknown>;
  /** Start an open (or a first request) that never gets its answer; `settled` is its outcome's message. */
  hang(clock: Clock): Promise<{ settled: Promise<string>; heard: () => readonly string[] }>;
  /** The timeout's message. */
  readonly timeoutMessage: RegExp;
  /** A socket adapter: open() waits for a handshake, and the vendor speaks JSON. */
  readonly socket: boolean;
  /** The drop case: the pushes, and what a drop costs (`word`: nothing heard twice; `segment`: the segment in progress again). */
  readonly drop: { readonly pushes: readonly string[]; readonly resumes: "word" | "segment" };
  /** The message once the retry budget is spent. */
  readonly exhaustedMessage: RegExp;
  /** A well-formed frame for a context nobody opened (ignored like malformed JSON). */
  readonly strayFrame?: string;
}

const SAMPLE_RATE = 16000;
const KEY = "test-key";

const closing = closeAfterEach();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A session on `provider`, closed after the test. */
async function openOn(provider: TtsProvider): Promise<TtsSession> {
  return closing(await provider.open({ sampleRate: SAMPLE_RATE }));
}


/** Open with a virtual clock on a fake that never answers the handshake. */
async function hangingHandshake(serve: (settings: Settings) => Promise<Served>, clock: Clock): Promise<{ settled: Promise<string>; heard: () => readonly string[] }> {
  const served = await serve({ hangHandshake: true });
  const settled = served
    .provider({}, undefined, { clock })
    .open({ sampleRate: SAMPLE_RATE })
    .then(
      () => "opened",
      (error: Error) => error.message,
    );
  return { settled, heard: () => [] };
}

/** A socket adapter's refusal: open() rejects. */
const refusedAtOpen = (provider: TtsProvider): Promise<unknown> => provider.open({ sampleRate: SAMPLE_RATE }).then(
  () => "opened",
  (error: unknown) => error,
);

const stringsOf = (messages: readonly Record<string, unknown>[], field: string): string[] => messages.flatMap((m) => (typeof m[field] === "string" ? [m[field]] : []));

/** What the Cartesia and ElevenLabs fakes share. */
interface SocketFake {
  readonly url: string;
  readonly messages: Record<string, unknown>[];
  readonly connections: readonly { readonly messages: Record<string, unknown>[] }[];
  dropAfterChunks(n: number): void;
  sendRaw(text: string): void;
  close(): Promise<void>;
}

/** A socket vendor: what differs is the wire's wording. */
interface SocketVendor<F extends SocketFake> {
  readonly name: string;
  readonly keyVariable: string;
  readonly invalidOption: TtsAdapter["invalidOption"];
  build(options: Record<string, unknown>, env: Env, runtime?: Runtime): TtsProvider;
  start(settings: Settings): Promise<F>;
  /** The message field that carries text, and the texts that only open a context. */
  readonly textField: string;
  readonly notSpoken: string;
  /** Where the text re-sent after a drop stands among the new connection's messages. */
  readonly resentAt: number;
  checkResent(first: F["connections"][number], second: F["connections"][number]): void;
  /** The message that tells the vendor a context is cancelled. */
  cancelled(contextId: unknown): Record<string, unknown>;
  spoken(text: string): string;
  readonly strayFrame: string;
}

function socketAdapter<F extends SocketFake>(vendor: SocketVendor<F>): TtsAdapter {
  const serve = async (settings: Settings = {}): Promise<Served> => {
    const fake = closing(await vendor.start(settings));
    const provider = (options: Record<string, unknown> = {}, env: Env = { [vendor.keyVariable]: KEY }, runtime: Runtime = {}): TtsProvider => vendor.build({ url: fake.url, ...options }, env, runtime);
    return {
      provider,
      open: (runtime) => openOn(provider({}, undefined, runtime)),
      texts: () => stringsOf(fake.messages, vendor.textField).filter((t) => t !== vendor.notSpoken),
      received: () => fake.messages,
      attempts: () => fake.connections.length,
      refusals: () => undefined,
      dropSoon: () => fake.dropAfterChunks(3),
      resent: () => stringsOf(fake.connections[1]?.messages.slice(vendor.resentAt, vendor.resentAt + 1) ?? [], vendor.textField),
      checkResent: () => vendor.checkResent(fake.connections[0]!, fake.connections[1]!),
      async failForGood(stream, rec) {
        // Audio flows, then the vendor goes away: no reconnect is accepted.
        stream.push("This will not finish in time. ");
        await rec.firstAudio;
        await fake.close();
      },
      checkCancelled: () => expect(fake.messages).toContainEqual(vendor.cancelled(fake.messages[0]!.context_id)),
      sendRaw: (text) => fake.sendRaw(text),
      close: () => fake.close(),
    };
  };
  return {
    name: vendor.name,
    keyVariable: vendor.keyVariable,
    invalidOption: vendor.invalidOption,
    build: (options, env) => vendor.build(options, env),
    serve,
    spoken: (text) => vendor.spoken(text),
    refusal: refusedAtOpen,
    hang: (clock) => hangingHandshake(serve, clock),
    timeoutMessage: /timed out after 10 s/,
    socket: true,
    drop: { pushes: ["One two three four five six seven eight."], resumes: "word" },
    exhaustedMessage: /3 reconnect attempts failed/,
    strayFrame: vendor.strayFrame,
  };
}

const cartesia = (): TtsAdapter =>
  socketAdapter({
    name: "cartesia",
    keyVariable: "CARTESIA_API_KEY",
    invalidOption: { options: { voice: 42 }, message: /tts.options.voice/ },
    build: (options, env, runtime = {}) => cartesiaTts({ kind: "cartesia", options }, env, runtime),
    start: (settings) => startFakeCartesia(settings),
    textField: "transcript",
    notSpoken: "", // the end of a context
    resentAt: 0,
    checkResent(first, second) {
      // A new context on the new socket, ended as every context is.
      expect(second.messages[0]!.context_id).not.toBe(first.messages[0]!.context_id);
      expect(second.messages.at(-1)).toMatchObject({ transcript: "", continue: false });
    },
    cancelled: (contextId) => ({ context_id: contextId, cancel: true }),
    spoken: (text) => text,
    strayFrame: '{"type":"chunk","context_id":"nobody","data":"AAAA"}',
  });

const VOICE = "voice-abc";

const elevenLabs = (): TtsAdapter =>
  socketAdapter({
    name: "elevenlabs",
    keyVariable: "ELEVENLABS_API_KEY",
    invalidOption: { options: { voiceSettings: "loud" }, message: /tts\.options\.voiceSettings/ },
    build: (options, env, runtime = {}) => elevenLabsTts({ kind: "elevenlabs", options: { voiceId: VOICE, ...options } }, env, runtime),
    start: (settings) => startFakeElevenLabs(settings),
    textField: "text",
    notSpoken: " ", // a context opens with " " (the voice settings' carrier)
    resentAt: 1,
    checkResent(first, second) {
      const [opening, resent, close] = second.messages;
      expect(opening).toMatchObject({ text: " " });
      expect(resent!.context_id).not.toBe(first.messages[0]!.context_id);
      expect(resent!.flush).toBe(true);
      expect(close).toEqual({ context_id: resent!.context_id, close_context: true });
    },
    cancelled: (contextId) => ({ context_id: contextId, close_context: true }),
    // The adapter ends every chunk with a space (docs/vendors.md (ElevenLabs)).
    spoken: (text) => (text.endsWith(" ") ? text : `${text} `),
    strayFrame: '{"audio":"AAAA","contextId":"nobody"}',
  });

/** 10 ms a character at 24 kHz: 240 samples, 480 bytes. */
const OPENAI_BYTES_PER_CHAR = 480;

function openAi(): TtsAdapter {
  const build = (options: Record<string, unknown>, env: Env, runtime: Runtime & { fetch?: typeof fetch } = {}): TtsProvider => openAiTts({ kind: "openai", options }, env, runtime);
  const serve = async (settings: Settings = {}): Promise<Served> => {
    // Body writes of one character's audio, so a drop and a cancel land mid-segment.
    const fake = closing(await startFakeOpenAiTts({ chunkBytes: OPENAI_BYTES_PER_CHAR, ...(settings.chunkDelayMs === undefined ? {} : { chunkDelayMs: settings.chunkDelayMs }) }));
    const provider = (options: Record<string, unknown> = {}, env: Env = { OPENAI_API_KEY: KEY }, runtime: Runtime = {}): TtsProvider => build({ baseURL: fake.url, ...options }, env, runtime);
    return {
      provider,
      open: (runtime) => openOn(provider({}, undefined, runtime)),
      texts: () => stringsOf(fake.messages, "input"),
      received: () => fake.requests,
      attempts: () => fake.requests.length,
      refusals: () => fake.unauthorized,
      dropSoon: () => fake.dropNextAfterBytes(OPENAI_BYTES_PER_CHAR * 3),
      resent: () => stringsOf(fake.messages.slice(1), "input"),
      checkResent: () => expect(fake.messages.map((m) => m.input)).toEqual(["Dropped halfway. ", "Dropped halfway. ", "Then the rest."]),
      async failForGood(stream) {
        fake.failNext(503, 4);
        stream.push("Never.");
        stream.end();
        return Promise.resolve();
      },
      checkCancelled() {
        // The request in flight is aborted; the queued segment is never requested.
        expect(fake.aborted).toBe(1);
        expect(fake.messages).toHaveLength(1);
      },
      sendRaw: () => {
        throw new Error("openai tts: HTTP, no frames to send");
      },
      close: () => fake.close(),
    };
  };
  return {
    name: "openai",
    keyVariable: "OPENAI_API_KEY",
    invalidOption: { options: { speed: 9 }, message: /tts.options.speed/ },
    build,
    serve,
    spoken: (text) => text,
    async refusal(provider) {
      const session = closing(await provider.open({ sampleRate: 24000 }));
      const rec = ttsRecorder();
      const stream = session.stream(rec.events);
      stream.push("Hello.");
      stream.end();
      return rec.ended;
    },
    async hang(clock) {
      const hang: typeof fetch = (_url, init) =>
        new Promise((_resolve, reject) => {
          init?.signal?.addEventListener("abort", () => reject(new Error("aborted")));
        });
      const session = await openOn(build({}, { OPENAI_API_KEY: KEY }, { clock, fetch: hang, retryDelaysMs: [] }));
      const rec = ttsRecorder();
      const stream = session.stream(rec.events);
      stream.push("Hello?");
      stream.end();
      return { settled: rec.ended.then((outcome) => (outcome === "done" ? "done" : outcome.message)), heard: () => rec.order };
    },
    timeoutMessage: /no response within 10 s/,
    socket: false,
    drop: { pushes: ["Dropped halfway. ", "Then the rest."], resumes: "segment" },
    exhaustedMessage: /3 retries failed/,
  };
}

const ADAPTERS = [cartesia(), elevenLabs(), openAi()];
const SOCKETS = ADAPTERS.filter((a) => a.socket);

describe.each(ADAPTERS)("TTS keys: $name", (adapter) => {
  it("a missing key fails at construction with MissingKeyError naming the variable; options.apiKeyEnv names another", () => {
    const key = { [adapter.keyVariable]: KEY };
    expect(() => adapter.build({}, {})).toThrow(MissingKeyError);
    expect(() => adapter.build({}, {})).toThrow(new RegExp(`set ${adapter.keyVariable}`));
    expect(() => adapter.build({ apiKeyEnv: "TEAM_TTS_KEY" }, key)).toThrow(/set TEAM_TTS_KEY/);
    expect(adapter.build({ apiKeyEnv: "TEAM_TTS_KEY" }, { TEAM_TTS_KEY: KEY }).kind).toBe(adapter.name);
    expect(() => adapter.build(adapter.invalidOption.options, key)).toThrow(adapter.invalidOption.message);
    expect(adapter.build({}, key).kind).toBe(adapter.name);
  });

  it("a refused key is a fatal tts error naming the variable (and options.apiKeyEnv), never the key, not retried", async () => {
    const served = await adapter.serve();
    for (const [options, variable] of [[{}, adapter.keyVariable], [{ apiKeyEnv: "TEAM_TTS_KEY" }, "TEAM_TTS_KEY"]] as const) {
      const failure = await adapter.refusal(served.provider(options, { [variable]: "sk-wrong-key" }));
      expect(failure).toBeInstanceOf(GatewayError);
      const error = failure as GatewayError;
      expect(error.message).toMatch(new RegExp(`HTTP 401.*${variable}`));
      // OpenAI's error body echoes the key's first characters ("sk-"): the message must not.
      expect(error.message).not.toMatch(/sk-/);
      expect(error.fatal).toBe(true);
      expect(error.code).toBe("tts");
    }
    expect(served.attempts()).toBe(0);
    // One refusal a try: not retried.
    expect(served.refusals() ?? 2).toBe(2);
  });
});

describe.each(ADAPTERS)("TTS opening: $name", (adapter) => {
  it("no answer in 10 s is an error (and nothing before it)", async () => {
    const clock = virtualClock();
    const { settled, heard } = await adapter.hang(clock);
    let outcome: string | undefined;
    void settled.then((message) => (outcome = message));
    await sleep(30);
    await clock.advance(9_999);
    await sleep(10);
    expect(outcome).toBeUndefined();
    expect(heard()).toEqual([]);
    await clock.advance(1);
    expect(await settled).toMatch(adapter.timeoutMessage);
  });

  it("open() with an aborted signal rejects", async () => {
    const served = await adapter.serve();
    const controller = new AbortController();
    controller.abort();
    const failure = await served
      .provider()
      .open({ sampleRate: SAMPLE_RATE, signal: controller.signal })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as Error).message).toMatch(/aborted/);
    expect(served.attempts()).toBe(0);
  });
});

describe.each(SOCKETS)("TTS opening a socket: $name", (adapter) => {
  it("open() rejects when its signal aborts during the handshake", async () => {
    const served = await adapter.serve({ hangHandshake: true });
    const controller = new AbortController();
    const opening = served.provider().open({ sampleRate: SAMPLE_RATE, signal: controller.signal });
    controller.abort();
    await expect(opening).rejects.toThrow(/aborted/);
  });
});

describe.each(ADAPTERS)("TTS streams: $name", (adapter) => {
  it("a drop mid-stream is retried; the caller hears the whole text (sockets: from the first unspoken word, nothing twice)", async () => {
    const served = await adapter.serve({ chunkDelayMs: 5 });
    const session = await served.open({ retryDelaysMs: [20, 20, 20] });
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    served.dropSoon();
    for (const text of adapter.drop.pushes) stream.push(text);
    stream.end();
    expect(await rec.ended).toBe("done");

    const said = adapter.drop.pushes.map((text) => adapter.spoken(text)).join("");
    const heard = textFromPcm(rec.pcm(), session.sampleRate);
    const [resent = "", ...rest] = served.resent();
    served.checkResent();
    if (adapter.drop.resumes === "word") {
      expect(served.attempts()).toBe(2);
      // A suffix starting at a word, shorter than the whole: the spoken words were skipped.
      expect(said.endsWith(resent)).toBe(true);
      expect(resent.length).toBeLessThan(said.trimEnd().length);
      expect(resent).toMatch(/^(three|four) /);
      // What the caller heard is the whole text, once, and the timings run on from the first sample.
      expect(heard).toBe(said);
      const eight = rec.words.at(-1)!;
      expect(eight.word).toBe("eight.");
      expect(eight.startMs).toBeCloseTo(said.indexOf("eight.") * 10);
    } else {
      // The segment in progress, asked for again whole; the start of it was heard before the drop.
      expect(resent).toBe(adapter.drop.pushes[0]);
      expect(rest).toEqual(adapter.drop.pushes.slice(1));
      const tail = Buffer.concat(adapter.drop.pushes.map((text) => pcmForText(text, session.sampleRate)));
      const pcm = rec.pcm();
      expect(pcm.length).toBeGreaterThan(tail.length);
      expect(pcm.subarray(pcm.length - tail.length).equals(tail)).toBe(true);
    }
  });

  it("once the retry budget is spent the stream fails", async () => {
    const served = await adapter.serve({ chunkDelayMs: 20 });
    const session = await served.open({ retryDelaysMs: [10, 10, 10] });
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    await served.failForGood(stream, rec);
    const outcome = await rec.ended;
    expect(outcome).toBeInstanceOf(GatewayError);
    expect((outcome as Error).message).toMatch(adapter.exhaustedMessage);
  });

  it.each([false, true])("cancel is a barrier: no event after it, the vendor is told, later pushes dropped, the next stream speaks (end() first: %s)", async (endedFirst) => {
    const served = await adapter.serve({ chunkDelayMs: 15 });
    const session = await served.open();
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    stream.push("one two three four five six seven eight nine ten. ");
    stream.push("A second sentence that must never be requested. ");
    if (endedFirst) stream.end();
    await rec.firstAudio;
    stream.cancel();
    const atCancel = rec.order.length;
    await sleep(120);
    expect(rec.order.slice(atCancel)).toEqual([]);
    expect(rec.order).not.toContain("done");
    await vi.waitFor(() => served.checkCancelled());
    // Pushes after cancel are ignored; the session still serves the next stream.
    stream.push("more");
    stream.end();
    const next = ttsRecorder();
    const again = session.stream(next.events);
    again.push("Next turn. ");
    again.end();
    expect(await next.ended).toBe("done");
    expect(textFromPcm(next.pcm(), session.sampleRate)).toBe(adapter.spoken("Next turn. "));
    expect(served.texts().filter((text) => text.startsWith("more"))).toEqual([]);
  });

  it("an empty stream is done without asking the vendor; a closed session's stream reports an error", async () => {
    const served = await adapter.serve();
    const session = await served.open({ log: silentLogger });
    const rec = ttsRecorder();
    session.stream(rec.events).end();
    expect(await rec.ended).toBe("done");
    expect(served.received()).toEqual([]);
    await session.close();
    const late = ttsRecorder();
    session.stream(late.events).push("late");
    expect(await late.ended).toBeInstanceOf(Error);
  });
});

describe.each(SOCKETS)("TTS socket streams: $name", (adapter) => {
  it("malformed JSON and a frame for an unknown context are ignored with a log line", async () => {
    const served = await adapter.serve({ chunkDelayMs: 10 });
    const warnings: string[] = [];
    const log = { warn: (_obj: object, msg: string) => void warnings.push(msg), debug: () => undefined };
    const session = await served.open({ log });
    const rec = ttsRecorder();
    const stream = session.stream(rec.events);
    stream.push("Still fine after noise. ");
    stream.end();
    await rec.firstAudio;
    for (let i = 0; i < 3; i++) served.sendRaw("{not json");
    served.sendRaw(adapter.strayFrame!);
    expect(await rec.ended).toBe("done");
    expect(textFromPcm(rec.pcm(), session.sampleRate)).toBe("Still fine after noise. ");
    // Logged once an interval, however many come.
    expect(warnings.filter((w) => /malformed JSON/.test(w))).toHaveLength(1);
  });
});
