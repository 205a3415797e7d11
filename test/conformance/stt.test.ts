/**
 * The STT port's conformance suite (src/pipeline/stt-port.ts), run against every adapter; a
 * vendor's own test file (test/unit/pipeline/stt-<vendor>.test.ts) keeps what only that vendor does.
 *
 * Keys: a socket adapter without its key fails at construction with MissingKeyError naming the
 * variable (`options.apiKeyEnv` names another), and a key the vendor refuses at the upgrade (HTTP
 * 401) rejects open() with a fatal `stt` error naming the variable, never the key, before any event.
 *
 * The socket's lifecycle: an open the vendor never confirms times out (recoverable, in the
 * adapter's own words, the connection closed) and a refused connection is recoverable; an abort
 * while the open is pending rejects with its reason and closes the connection; while the socket's
 * backlog is over 1 MiB audio is dropped a whole frame at a time (Deepgram sends each chunk as it
 * comes, AssemblyAI batches 50 ms frames) and counted, control messages still go, and audio flows
 * again once it drains; close() sends the vendor's close message (CloseStream, Terminate),
 * delivers what was pending as a final, then closed({expected:true}) once, and drops a socket the
 * vendor does not close.
 *
 * The transcript contract: the
 * same utterances, spoken through each vendor's loopback fake the way the vendor documents it
 * (Deepgram: interims over the unfinalized audio and several `is_final` segments, the last with
 * `speech_final`; AssemblyAI v3: `Turn` messages whose `transcript` grows, then `end_of_turn`),
 * are replayed event by event through `UtteranceText`, the one place the voice loop assembles an
 * utterance. At every step the assembled text must be a prefix of what was said (no word
 * repeated), and the word counts barge-in and the turn limit read must be right. The local STT
 * runs the same replay over real audio (when pocketsphinx is installed).
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, type ClientOptions } from "ws";
import { readWav } from "../../src/audio/wav.js";
import { GatewayError, MissingKeyError } from "../../src/errors.js";
import { countWords, isBargeIn } from "../../src/pipeline/barge-in.js";
import { assemblyAiStt, type AssemblyAiSttOptions } from "../../src/pipeline/providers/stt/assemblyai.js";
import { deepgramStt, type DeepgramSttOptions } from "../../src/pipeline/providers/stt/deepgram.js";
import { localStt } from "../../src/pipeline/providers/stt/local.js";
import { LOCAL_STT_MODEL_DIR, localSttAvailable } from "../../src/pipeline/providers/stt/local-setup.js";
import { MAX_PROVIDER_BACKLOG_BYTES } from "../../src/providers/ws-backlog.js";
import { UtteranceText, type SttEvents, type SttOpenOptions, type SttProvider, type SttSession } from "../../src/pipeline/stt-port.js";
import { FAKE_ASSEMBLYAI_KEY, startFakeAssemblyAi, type FakeAssemblyAi } from "../../fakes/assemblyai.js";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "../../fakes/deepgram.js";
import { sttRecorder, type SttCall } from "../helpers/stt-recorder.js";

const OPEN: SttOpenOptions = { sampleRate: 16000, minSilenceMs: 400, maxSilenceMs: 1200 };

/** One caller turn: the stretches the vendor finalizes, in order, and whether the loop ends it with `finalize()` (push-to-talk). */
interface Turn {
  readonly segments: readonly string[];
  readonly finalized?: boolean;
}

interface Scenario {
  readonly name: string;
  readonly turns: readonly Turn[];
}

const SCENARIOS: readonly Scenario[] = [
  { name: "an utterance finalized in several segments", turns: [{ segments: ["what is the status", "of my order"] }] },
  { name: "a word repeated across a segment boundary", turns: [{ segments: ["wait", "wait"] }] },
  { name: "a one-word turn", turns: [{ segments: ["hello"] }] },
  { name: "two turns in a row: the second starts clean", turns: [{ segments: ["book a", "table"] }, { segments: ["for two", "please"] }] },
  { name: "a turn the loop ends with finalize() while a partial is pending", turns: [{ segments: ["what is the status", "of"], finalized: true }] },
];

/** Words as the contract compares them: vendor formatting (case, punctuation) does not count. */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s']/gu, "")
    .split(/\s+/)
    .filter((w) => w !== "");
}

/** What the voice loop assembles from a session's events: the text after every partial/final, and each ended turn. */
function replay(calls: readonly SttCall[]): { steps: { turn: number; text: string; final: boolean }[]; turns: string[]; endsOfTurn: number } {
  const steps: { turn: number; text: string; final: boolean }[] = [];
  const turns: string[] = [];
  let utterance = new UtteranceText();
  let endsOfTurn = 0;
  for (const call of calls) {
    if (call.name === "partial") {
      utterance.partial(call.args[0] as string);
      steps.push({ turn: turns.length, text: utterance.text, final: false });
    } else if (call.name === "final") {
      utterance.final(call.args[0] as string);
      steps.push({ turn: turns.length, text: utterance.text, final: true });
      if ((call.args[1] as { endOfTurn: boolean }).endOfTurn) {
        endsOfTurn += 1;
        turns.push(utterance.text);
        utterance = new UtteranceText();
      }
    }
  }
  return { steps, turns, endsOfTurn };
}

async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const endsOfTurn = (calls: readonly SttCall[]): number => calls.filter((c) => c.name === "final" && (c.args[1] as { endOfTurn: boolean }).endOfTurn).length;

/** A vendor behind its loopback fake, and how a caller's turn reaches it. */
interface Adapter {
  readonly name: string;
  /** The environment variable the key is read from by default. */
  readonly keyVariable: string;
  /** The adapter on its fake with `options` (besides the fake's url) and `env`. */
  build(options: Record<string, unknown>, env: Record<string, string>): SttProvider;
  /** What the fake refused at the upgrade, in order. */
  rejected(): readonly { readonly status: number; readonly reason: string }[];
  /** How the vendor words its 401 (checked where the fake says it as the vendor does). */
  readonly unauthorizedReason?: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  open(events: SttEvents): Promise<SttSession>;
  /** A network drop of every socket (no close frame), and how the adapter words it. */
  drop(): void;
  readonly dropMessage: RegExp;
  /** The key the fake accepts. */
  readonly key: string;
  /** The caller says `turn` (the loop then calls `finalize()` when `turn.finalized`). */
  say(turn: Turn): void;
}

/** A vendor's fake, started by `start` and closed by `stop`; `server()` throws before `start`. */
function onFake<F extends { close(): Promise<void> }>(vendor: string, startFake: () => Promise<F>): { server: () => F; start: () => Promise<void>; stop: () => Promise<void> } {
  let fake: F | undefined;
  return {
    server: () => {
      if (fake === undefined) throw new Error(`fake ${vendor} not started`);
      return fake;
    },
    start: async () => {
      fake = await startFake();
    },
    stop: async () => {
      await fake?.close();
    },
  };
}

function deepgramAdapter(): Adapter {
  const { server, start, stop } = onFake<FakeDeepgram>("deepgram", () => startFakeDeepgram());
  return {
    name: "deepgram",
    keyVariable: "DEEPGRAM_API_KEY",
    build: (options, env) => deepgramStt({ kind: "deepgram", options: { url: server().url, ...options } }, env),
    rejected: () => server().rejected,
    unauthorizedReason: "Invalid credentials.",
    start,
    stop,
    open: (events) => deepgramStt({ kind: "deepgram", options: { url: server().url } }, { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY }).open(OPEN, events),
    drop: () => server().drop(),
    dropMessage: /deepgram connection closed unexpectedly \(code 1006\)/,
    key: FAKE_DEEPGRAM_KEY,
    say(turn) {
      const f = server();
      f.speechStarted();
      if (turn.finalized !== true) return f.speak(turn.segments);
      // Every segment but the last is finalized; the last is still interims when the loop asks for Finalize.
      f.speak(turn.segments.slice(0, -1), { speechFinal: false, utteranceEnd: false });
      const last = (turn.segments.at(-1) ?? "").split(" ");
      last.forEach((_, i) => f.partial(last.slice(0, i + 1).join(" ")));
    },
  };
}

function assemblyAiAdapter(): Adapter {
  const { server, start, stop } = onFake<FakeAssemblyAi>("assemblyai", () => startFakeAssemblyAi());
  return {
    name: "assemblyai",
    keyVariable: "ASSEMBLYAI_API_KEY",
    build: (options, env) => assemblyAiStt({ kind: "assemblyai", options: { url: server().url, ...options } }, env),
    rejected: () => server().rejected,
    start,
    stop,
    // format_turns stays on (the adapter's default): finals are the formatted copies.
    open: (events) => assemblyAiStt({ kind: "assemblyai", options: { url: server().url } }, { ASSEMBLYAI_API_KEY: FAKE_ASSEMBLYAI_KEY }).open(OPEN, events),
    drop: () => server().drop(),
    dropMessage: /assemblyai connection closed \(code 1006/,
    key: FAKE_ASSEMBLYAI_KEY,
    say(turn) {
      const f = server();
      f.speechStarted();
      // AssemblyAI's unit is the turn: its segments are one growing transcript.
      const text = turn.segments.join(" ");
      if (turn.finalized !== true) return f.speak(text);
      const words = text.split(" ");
      words.forEach((word, i) => f.partial(words.slice(0, i).join(" "), { trailingWord: word }));
      f.partial(text); // every word final; ForceEndpoint ends the turn with them
    },
  };
}

describe.each([deepgramAdapter(), assemblyAiAdapter()])("STT keys: $name", (adapter) => {
  beforeAll(() => adapter.start());
  afterAll(() => adapter.stop());

  it("throws MissingKeyError naming the variable at construction; options.apiKeyEnv names another", () => {
    const key = { [adapter.keyVariable]: "k" };
    expect(() => adapter.build({}, {})).toThrow(MissingKeyError);
    expect(() => adapter.build({}, {})).toThrow(new RegExp(adapter.keyVariable));
    expect(() => adapter.build({ apiKeyEnv: "TEAM_KEY" }, key)).toThrow(/TEAM_KEY/);
    expect(adapter.build({ apiKeyEnv: "TEAM_KEY" }, { TEAM_KEY: "k" }).kind).toBe(adapter.name);
  });

  it("maps a 401 at upgrade to a fatal stt error naming the key variable (never the key), with no session events", async () => {
    for (const [options, variable] of [[{}, adapter.keyVariable], [{ apiKeyEnv: "TEAM_KEY" }, "TEAM_KEY"]] as const) {
      const before = adapter.rejected().length;
      const rec = sttRecorder();
      const failure = await adapter.build(options, { [variable]: "wrong-key-value" }).open(OPEN, rec.events).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(GatewayError);
      expect((failure as GatewayError).message).toMatch(new RegExp(`HTTP 401.*${variable}`));
      expect((failure as GatewayError).message).not.toContain("wrong-key-value");
      expect((failure as GatewayError).fatal).toBe(true);
      expect((failure as GatewayError).code).toBe("stt");
      const refused = adapter.rejected().slice(before);
      expect(refused.map((r) => r.status)).toEqual([401]);
      if (adapter.unauthorizedReason !== undefined) expect(refused[0]?.reason).toBe(adapter.unauthorizedReason);
      expect(rec.calls).toEqual([]);
    }
  });
});

describe.each([deepgramAdapter(), assemblyAiAdapter()])("STT sessions: $name", (adapter) => {
  beforeAll(() => adapter.start());
  afterAll(() => adapter.stop());

  it("an already aborted signal rejects open() with its reason, before any event", async () => {
    const rec = sttRecorder();
    const opening = adapter.build({}, { [adapter.keyVariable]: adapter.key }).open({ ...OPEN, signal: AbortSignal.abort(new Error("caller gave up")) }, rec.events);
    await expect(opening).rejects.toThrow("caller gave up");
    expect(rec.calls).toEqual([]);
  });

  it("an unexpected drop reports a recoverable error, then closed({expected:false}); then audio is ignored and close() resolves", async () => {
    const rec = sttRecorder();
    const session = await adapter.open(rec.events);
    adapter.drop();
    await rec.waitFor("closed");
    expect(rec.calls.map((c) => c.name)).toEqual(["error", "closed"]);
    const [error, info] = rec.of("error")[0]!.args as [GatewayError, { recoverable: boolean }];
    expect(info).toEqual({ recoverable: true });
    expect(error.message).toMatch(adapter.dropMessage);
    expect(rec.of("closed")[0]!.args).toEqual([{ expected: false }]);
    session.sendAudio(new Uint8Array(640)); // after the drop: ignored
    await session.close(); // resolves at once
    expect(rec.of("closed")).toHaveLength(1);
  });
});

// ---- the socket adapters' lifecycle: opening, backlog, closing ----

/** A socket adapter's runtime knobs the lifecycle cases set. */
interface SocketRuntime {
  readonly openTimeoutMs?: number;
  readonly closeTimeoutMs?: number;
  readonly connect?: (url: string, options: ClientOptions) => WebSocket;
}

type SocketFake = FakeDeepgram | FakeAssemblyAi;

/** An endpoint that takes the connection and never confirms the open. */
interface Hang {
  readonly url: string;
  connections(): number;
  /** Resolves once the connection is closed. */
  closed(): Promise<void>;
  stop(): Promise<void>;
}

interface Lifecycle {
  readonly name: string;
  /** The vendor's fake; it does not answer the control messages named in `ignore`. */
  startFake(ignore?: string[]): Promise<SocketFake>;
  build(url: string, runtime: SocketRuntime): SttProvider;
  hang(): Promise<Hang>;
  /** How the adapter words an open not confirmed within `ms`. */
  openTimeout(ms: number): RegExp;
  readonly finalizeMessage: string;
  readonly closeMessage: string;
  /** A partial pending at close(), and the final close() delivers for it. */
  readonly lastWords: { readonly partial: string; readonly final: readonly unknown[] };
  /** How many 20 ms chunks the adapter sends as one frame, and that frame's bytes. */
  readonly frame: { readonly chunks: number; readonly bytes: number };
}

/** 20 ms of PCM16 mono at 16 kHz. */
const CHUNK = new Uint8Array(640);

/** A TCP server that never answers the WebSocket upgrade. */
async function silentServer(path: string): Promise<Hang> {
  const sockets: Socket[] = [];
  let closedOne = (): void => {};
  const closed = new Promise<void>((resolve) => (closedOne = resolve));
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.resume(); // read (and drop) the upgrade request, so the client's end is seen
    socket.on("close", () => closedOne());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    connections: () => sockets.length,
    closed: () => closed,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function deepgramLifecycle(): Lifecycle {
  return {
    name: "deepgram",
    startFake: (ignore) => startFakeDeepgram(ignore === undefined ? {} : { ignore }),
    build: (url, runtime: DeepgramSttOptions) => deepgramStt({ kind: "deepgram", options: { url } }, { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY }, runtime),
    // Deepgram's open is the upgrade: a server that never answers it.
    hang: () => silentServer("/v1/listen"),
    openTimeout: (ms) => new RegExp(`did not open within ${ms} ms`),
    finalizeMessage: "Finalize",
    closeMessage: "CloseStream",
    lastWords: { partial: "last words", final: ["last words", { endOfTurn: true }] },
    frame: { chunks: 1, bytes: 640 },
  };
}

function assemblyAiLifecycle(): Lifecycle {
  return {
    name: "assemblyai",
    startFake: (ignore) => startFakeAssemblyAi(ignore === undefined ? {} : { ignore }),
    build: (url, runtime: AssemblyAiSttOptions) => assemblyAiStt({ kind: "assemblyai", options: { url } }, { ASSEMBLYAI_API_KEY: FAKE_ASSEMBLYAI_KEY }, runtime),
    // AssemblyAI's open is its `Begin` message: a fake whose socket opens and never says it.
    hang: async () => {
      const fake = await startFakeAssemblyAi({ begin: false });
      return { url: fake.url, connections: () => fake.connections.length, closed: () => fake.waitForClose(), stop: () => fake.close() };
    },
    openTimeout: (ms) => new RegExp(`did not begin a session within ${ms} ms`),
    finalizeMessage: "ForceEndpoint",
    closeMessage: "Terminate",
    lastWords: { partial: "goodbye then", final: ["Goodbye then.", { endOfTurn: true, eotConfidence: 0.9 }] },
    // Frames of 50 ms at least: three 20 ms chunks make one of 60 ms.
    frame: { chunks: 3, bytes: 1920 },
  };
}

describe.each([deepgramLifecycle(), assemblyAiLifecycle()])("STT socket lifecycle: $name", (adapter) => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });
  const hang = async (): Promise<Hang> => {
    const h = await adapter.hang();
    stops.push(() => h.stop());
    return h;
  };
  const fakeWith = async (ignore?: string[]): Promise<SocketFake> => {
    const fake = await adapter.startFake(ignore);
    stops.push(() => fake.close());
    return fake;
  };
  const opened = async (fake: SocketFake, runtime: SocketRuntime = {}): Promise<{ session: SttSession; rec: ReturnType<typeof sttRecorder> }> => {
    const rec = sttRecorder();
    const session = await adapter.build(fake.url, runtime).open(OPEN, rec.events);
    stops.push(() => session.close());
    return { session, rec };
  };

  it("an open never confirmed times out as recoverable, in the adapter's words, and closes the connection", async () => {
    const h = await hang();
    const rec = sttRecorder();
    const failure = await adapter.build(h.url, { openTimeoutMs: 60 }).open(OPEN, rec.events).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).message).toMatch(adapter.openTimeout(60));
    expect((failure as GatewayError).fatal).toBe(false);
    expect(h.connections()).toBe(1); // the connection itself was made
    await h.closed();
    expect(rec.calls).toEqual([]);
  });

  it("a refused connection rejects open() as recoverable", async () => {
    const failure = await adapter.build("ws://127.0.0.1:1/", {}).open(OPEN, sttRecorder().events).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).fatal).toBe(false);
  });

  it("an abort while the open is pending rejects with its reason and closes the connection", async () => {
    const h = await hang();
    const rec = sttRecorder();
    const controller = new AbortController();
    const pending = adapter.build(h.url, {}).open({ ...OPEN, signal: controller.signal }, rec.events);
    await until(() => h.connections() === 1, "the connection");
    controller.abort(new Error("caller left"));
    await expect(pending).rejects.toThrow("caller left");
    await h.closed();
    expect(rec.calls).toEqual([]);
  });

  it("drops and counts whole frames while the socket's backlog is over 1 MiB; control messages still go; audio flows once it drains", async () => {
    let congested = true;
    const connect = (url: string, options: ClientOptions): WebSocket => {
      const ws = new WebSocket(url, options);
      // Shadow the prototype getter on this socket (the real backlog stays tiny on loopback).
      Object.defineProperty(ws, "bufferedAmount", { get: () => (congested ? 2 * MAX_PROVIDER_BACKLOG_BYTES : 0) });
      return ws;
    };
    const fake = await fakeWith();
    const { session } = await opened(fake, { connect });
    session.finalize();
    await fake.waitForMessage(adapter.finalizeMessage);
    const { chunks, bytes } = adapter.frame;
    // Two whole frames and all but one chunk of a third: the frames are dropped, the rest waits.
    for (let i = 0; i < 3 * chunks - 1; i++) session.sendAudio(CHUNK);
    expect(session.droppedBytes).toBe(2 * bytes);
    expect(fake.audioBytes).toBe(0);
    congested = false;
    session.sendAudio(CHUNK);
    await fake.waitForAudio(bytes);
    expect(fake.audioBytes).toBe(bytes);
    expect(session.droppedBytes).toBe(2 * bytes);
    expect(fake.violations).toEqual([]);
  });

  it(`close() sends ${adapter.closeMessage}, delivers the pending words as a final, then closed({expected:true}) once`, async () => {
    const fake = await fakeWith();
    const { session, rec } = await opened(fake);
    fake.partial(adapter.lastWords.partial);
    await rec.waitFor("partial");
    await session.close();
    expect(fake.messages.map((m) => m.type)).toEqual([adapter.closeMessage]);
    expect(rec.calls.slice(1)).toEqual([
      { name: "final", args: adapter.lastWords.final },
      { name: "closed", args: [{ expected: true }] },
    ]);
    await fake.waitForClose();
    expect(fake.latest.closeCode).toBe(1000);
    await session.close(); // idempotent
    session.sendAudio(CHUNK); // after close: ignored, not counted
    expect(session.droppedBytes).toBe(0);
    expect(rec.of("closed")).toHaveLength(1);
  });

  it("close() drops the socket when the vendor does not close after the close message", async () => {
    const fake = await fakeWith([adapter.closeMessage]);
    const { session, rec } = await opened(fake, { closeTimeoutMs: 50 });
    const started = Date.now();
    await session.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(rec.calls).toEqual([{ name: "closed", args: [{ expected: true }] }]);
    await fake.waitForClose();
  });
});

describe.each([deepgramAdapter(), assemblyAiAdapter()])("STT transcript contract: $name", (adapter) => {
  let session: SttSession | undefined;

  beforeAll(() => adapter.start());
  afterAll(() => adapter.stop());
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  it.each(SCENARIOS)("$name: the assembled utterance never repeats a word and ends as said", async (scenario) => {
    const rec = sttRecorder();
    session = await adapter.open(rec.events);
    for (const [i, turn] of scenario.turns.entries()) {
      adapter.say(turn);
      if (turn.finalized === true) {
        const partials = turn.segments.join(" ").split(" ").length;
        await until(() => rec.of("partial").length >= partials, "the pending partials");
        session.finalize();
      }
      await until(() => endsOfTurn(rec.calls) >= i + 1, `end of turn ${i + 1}; got ${JSON.stringify(rec.calls.map((c) => [c.name, c.args[0]]))}`);
    }

    const { steps, turns, endsOfTurn: ended } = replay(rec.calls);
    const said = scenario.turns.map((t) => wordsOf(t.segments.join(" ")));
    expect(ended).toBe(scenario.turns.length);
    expect(turns.map(wordsOf)).toEqual(said);
    for (const step of steps) {
      const words = wordsOf(step.text);
      // A prefix of what was said: a word only once, in order.
      expect(words, `step "${step.text}" of turn ${step.turn + 1}`).toEqual(said[step.turn]?.slice(0, words.length));
    }
    // The caption grows to the whole turn and no further.
    for (const [t, words] of said.entries()) {
      const counts = steps.filter((s) => s.turn === t).map((s) => countWords(s.text));
      expect(Math.max(...counts)).toBe(words.length);
    }
  });

  it("'wait' + 'wait' counts two words: no barge-in at minWords 3, and userTurnLimit.maxWords 2 is not exceeded", async () => {
    const rec = sttRecorder();
    session = await adapter.open(rec.events);
    adapter.say({ segments: ["wait", "wait"] });
    await until(() => endsOfTurn(rec.calls) >= 1, "the end of the turn");
    const { steps } = replay(rec.calls);
    expect(steps.length).toBeGreaterThan(1);
    for (const step of steps) {
      const words = countWords(step.text);
      expect(words, step.text).toBeLessThanOrEqual(2);
      const evidence = { words, speechMs: Number.POSITIVE_INFINITY, final: step.final, agentAudible: true };
      expect(isBargeIn({ enabled: true, minWords: 3, minDurationMs: 0 }, evidence)).toBe(false);
    }
  });
});

// ---- the local STT: no text to script, so the same replay runs over what pocketsphinx hears ----

const localInstalled = (await localSttAvailable()) && existsSync(`${LOCAL_STT_MODEL_DIR}/en-us/mdef`);
/** Why the local contract cannot run here, or undefined: said once in the output, and in the suite's name. */
const LOCAL_SKIPPED = localInstalled ? undefined : "pocketsphinx or its en-us model is not installed (sudo apt-get install pocketsphinx pocketsphinx-en-us)";
if (LOCAL_SKIPPED !== undefined) console.warn(`skipped: ${LOCAL_SKIPPED}`);

function clip(name: string): Uint8Array {
  const wav = readWav(new Uint8Array(readFileSync(new URL(`../../fixtures/audio/${name}`, import.meta.url))));
  return new Uint8Array(wav.samples.buffer, wav.samples.byteOffset, wav.samples.byteLength);
}

/** A microphone's noise floor: ±20 LSB, deterministic (as in stt-local.test.ts). */
function noise(ms: number): Uint8Array {
  const samples = new Int16Array((ms * 16000) / 1000);
  let state = 7;
  for (let i = 0; i < samples.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    samples[i] = (state % 41) - 20;
  }
  return new Uint8Array(samples.buffer);
}

/** 20 ms frames at 4× real time (the recognizer keeps up; no latency is asserted). */
async function play(session: SttSession, pcm: Uint8Array): Promise<void> {
  for (let offset = 0; offset < pcm.byteLength; offset += 640) {
    session.sendAudio(pcm.subarray(offset, offset + 640));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.skipIf(!localInstalled)(`STT transcript contract: local${LOCAL_SKIPPED === undefined ? "" : ` — skipped: ${LOCAL_SKIPPED}`}`, () => {
  it("two utterances: each turn assembles to its one final, with no partial repeating it", { timeout: 45_000 }, async () => {
    const rec = sttRecorder({ timeoutMs: 30_000 });
    const session = await localStt({ kind: "local", options: {} }).open(OPEN, rec.events);
    try {
      for (const name of ["hello.wav", "pin.wav"]) {
        await play(session, noise(500));
        await play(session, clip(name));
        await play(session, noise(1000));
      }
      // Two turns with words (a loaded machine may end a turn empty before its line comes; the line still counts).
      await until(() => rec.finals().filter((f) => f !== "").length >= 2, "two finals with words", 30_000);
    } finally {
      await session.close();
    }
    const { steps } = replay(rec.calls);
    // An empty final (pocketsphinx heard no words) ends a turn with nothing to assemble.
    const turns = replay(rec.calls).turns.filter((t) => t !== "");
    const finals = rec.finals().filter((f) => f !== "");
    expect(rec.of("partial")).toEqual([]);
    expect(turns.map(wordsOf)).toEqual(finals.map(wordsOf));
    expect(turns[0]).toContain("hello");
    expect(turns[1]).toContain("four five six seven");
    for (const step of steps) expect(countWords(step.text)).toBeLessThanOrEqual(Math.max(...finals.map(countWords)));
  });
});
