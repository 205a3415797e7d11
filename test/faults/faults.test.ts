// Fault injection against the real gateway over real sockets: a TCP fault proxy
// (test/helpers/fault-proxy.ts) sits between the gateway and each loopback vendor fake (Deepgram
// STT, Cartesia TTS, an OpenAI-compatible LLM, OpenAI Realtime) and between the client and the
// gateway, and cuts, stalls or slows the bytes mid-stream. Each scenario asserts what the caller
// must still get (docs/protocol.md "Behaviour in detail": "STT drops", "s2s drops", a client that
// stops reading; fatal or not as "Error codes" says), not only that nothing crashed. Cut points come from a seeded
// generator (`SEED`), and `npm run faults` runs every scenario more often (`runs()`) and writes
// the figures to docs/reliability.md.
import { connect as tcpConnect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock, type Clock } from "../../src/clock.js";
import { createLogger, silentLogger } from "../../src/log.js";
import { agent, seededRandom, tool, withTools } from "../../src/manifest/index.js";
import { createGateway, HEADERS_TIMEOUT_MS } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { CLOSE_HANDSHAKE_MS } from "../../src/server/upgrade.js";
import { reportRow, runs, SEED } from "../fuzz/figures.js";
import { startFakeCartesia, textFromPcm, type FakeCartesia } from "../../fakes/cartesia.js";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram, type FakeDeepgramConnection } from "../../fakes/deepgram.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { startFaultProxy, type FaultProxy } from "../helpers/fault-proxy.js";
import { connect, TestClient } from "../helpers/ws-client.js";

const FIGURES = ["fault (survived)", "injected", "checked"];

/** A small seeded generator (mulberry32), one stream per scenario, so every cut point reproduces. */
function random(salt: number): (min: number, max: number) => number {
  const unit = seededRandom((SEED ^ Math.imul(salt, 0x9e3779b1)) >>> 0);
  return (min, max) => min + Math.floor(unit() * (max - min + 1));
}

/** Resolve once `check()` holds (polled every 5 ms); the timeout is a ceiling for a failing test, never a latency bar. */
async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The agent audio a client received (binary frames, 24 kHz PCM16), in order. */
function recordAudio(client: TestClient): Buffer[] {
  const chunks: Buffer[] = [];
  client.ws.on("message", (data, isBinary) => {
    if (isBinary) chunks.push(Buffer.from(data as Buffer));
  });
  return chunks;
}

/** Open a session through `proxy` and wait for its greeting to have been played and committed. */
async function greeted(proxy: FaultProxy): Promise<{ client: TestClient; audio: Buffer[] }> {
  const client = await connect(proxy.url("ws", "/websocket"));
  const audio = recordAudio(client);
  await client.next("reply.completed", 0);
  return { client, audio };
}

/** Close a client and wait for the socket to be gone. */
async function hangUp(client: TestClient): Promise<void> {
  client.close();
  await client.closed;
}

// ── The pipeline gateway: STT, TTS and LLM each behind a fault proxy ────────────────────────

/** Audio per character of the fake TTS (ms): short, so a whole reply plays in well under a second. */
const MS_PER_CHAR = 4;
const PLAYBACK_RATE = 24_000;
const ERROR_PHRASE = "Sorry, I lost my train of thought.";

describe("pipeline provider links under faults", () => {
  let stt: FakeDeepgram;
  let tts: FakeCartesia;
  let llm: FakeOpenAiServer;
  let sttProxy: FaultProxy;
  let ttsProxy: FaultProxy;
  let llmProxy: FaultProxy;
  let clientProxy: FaultProxy;
  let gateway: Gateway;
  let gatewayPort: number;

  beforeAll(async () => {
    [stt, tts, llm] = await Promise.all([startFakeDeepgram(), startFakeCartesia({ msPerChar: MS_PER_CHAR, chunkDelayMs: 2 }), startFakeOpenAiServer()]);
    [sttProxy, ttsProxy, llmProxy] = await Promise.all([
      startFaultProxy(Number(new URL(stt.url).port)),
      startFaultProxy(Number(new URL(tts.url).port)),
      startFaultProxy(Number(new URL(llm.url).port)),
    ]);
    const def = agent({
      name: "faults",
      greeting: "Hi.",
      errorPhrase: ERROR_PHRASE,
      stt: { kind: "deepgram", options: { url: sttProxy.url("ws", "/v1/listen") } },
      tts: { kind: "cartesia", options: { url: ttsProxy.url("ws", "/tts/websocket"), voice: "test-voice" } },
      llm: { kind: "openai-compatible", options: { baseURL: llmProxy.url("http", "/v1"), model: "fake-model" } },
      maxRetries: 0,
    });
    gateway = createGateway({ agent: def, logger: silentLogger, env: { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, CARTESIA_API_KEY: "test-key" }, processMetrics: false });
    gatewayPort = (await gateway.listen(0)).port;
    clientProxy = await startFaultProxy(gatewayPort);
  });

  afterAll(async () => {
    await gateway.close();
    await Promise.all([clientProxy.close(), sttProxy.close(), ttsProxy.close(), llmProxy.close()]);
    await Promise.all([stt.close(), tts.close(), llm.close()]);
  });

  // The caller's speech is synthetic and self-describing: 20 ms frames of 16 kHz PCM16 whose every
  // sample holds the frame's sequence number, WORD_FRAMES frames a word, then END_FRAMES frames of
  // END_MARK. The test plays Deepgram's recognizer from what each fake connection really received:
  // a word is heard only when all its frames arrived on that connection, a final arrives
  // LAG_FRAMES frames after the audio it covers (a real recognizer lags), with the stream offsets
  // (start, duration) of that connection, as Deepgram sends them.
  const WORDS = ["my", "pin", "is", "four", "five", "six", "seven", "please"];
  const FRAME_SAMPLES = 320;
  const WORD_FRAMES = 5;
  const END_MARK = 30_000;
  const END_FRAMES = 3;
  const LAG_FRAMES = 3;
  /** Segment finals (is_final, not speech_final) once this many words are heard. */
  const SEGMENTS = [3, 6];
  /** Bytes one 640-byte audio frame takes on the wire to the STT (masked client frame: 8-byte header). */
  const WIRE_FRAME_BYTES = 648;
  const seqOf = (word: number, frame: number): number => word * WORD_FRAMES + frame + 1;
  const wordOf = (seq: number): number => (seq === END_MARK ? WORDS.length : Math.floor((seq - 1) / WORD_FRAMES));

  function callerFrames(): Buffer[] {
    const values = [...WORDS.flatMap((_, w) => Array.from({ length: WORD_FRAMES }, (_, f) => seqOf(w, f))), ...Array<number>(END_FRAMES).fill(END_MARK)];
    return values.map((value) => {
      const frame = Buffer.alloc(FRAME_SAMPLES * 2);
      for (let i = 0; i < FRAME_SAMPLES; i++) frame.writeInt16LE(value, i * 2);
      return frame;
    });
  }

  /** Per sample value on a connection: how many samples arrived, and where (sample offsets in that connection's stream). */
  function heardOn(connection: FakeDeepgramConnection): Map<number, { count: number; first: number; last: number }> {
    const pcm = Buffer.concat(connection.frames);
    const heard = new Map<number, { count: number; first: number; last: number }>();
    for (let i = 0; i + 1 < pcm.length; i += 2) {
      const value = pcm.readInt16LE(i);
      const at = i / 2;
      const entry = heard.get(value);
      if (entry === undefined) heard.set(value, { count: 1, first: at, last: at });
      else {
        entry.count++;
        entry.last = at;
      }
    }
    return heard;
  }

  /** Deepgram's recognizer for one session, driven by what each of its connections received. */
  function recognizer(fromConnection: number): { readonly done: Map<FakeDeepgramConnection, Set<number>>; step(): boolean } {
    const done = new Map<FakeDeepgramConnection, Set<number>>();
    const segments = new Set<number>();
    const lastPartial = new Map<FakeDeepgramConnection, string>();
    const results = (connection: FakeDeepgramConnection, words: number[], isFinal: boolean, speechFinal: boolean): void => {
      const heard = heardOn(connection);
      const first = heard.get(seqOf(words[0] ?? 0, 0))?.first ?? 0;
      const last = words.length === 0 ? first : (heard.get(seqOf(words.at(-1) ?? 0, WORD_FRAMES - 1))?.last ?? first) + 1;
      const transcript = words.map((w) => WORDS[w]).join(" ");
      const message = {
        type: "Results",
        channel_index: [0, 1],
        start: first / 16_000,
        duration: (last - first) / 16_000,
        is_final: isFinal,
        speech_final: speechFinal,
        from_finalize: false,
        channel: { alternatives: [{ transcript, confidence: 0.99, words: words.map((w) => ({ word: WORDS[w], start: 0, end: 0, confidence: 0.99 })) }] },
      };
      if (!connection.closed && connection.socket.readyState === connection.socket.OPEN) connection.socket.send(JSON.stringify(message));
    };
    return {
      done,
      /** One look at the live connection; true once the end-of-turn final was sent. */
      step(): boolean {
        const connection = stt.connections.slice(fromConnection).findLast((c) => !c.closed);
        if (connection === undefined) return false;
        const mine = done.get(connection) ?? new Set<number>();
        done.set(connection, mine);
        const heard = heardOn(connection);
        const complete = (seq: number): boolean => (heard.get(seq)?.count ?? 0) >= FRAME_SAMPLES;
        const pending = WORDS.map((_, w) => w).filter((w) => !mine.has(w) && Array.from({ length: WORD_FRAMES }, (_, f) => seqOf(w, f)).every(complete));
        if ((heard.get(END_MARK)?.count ?? 0) > 0) {
          results(connection, pending, true, true);
          for (const w of pending) mine.add(w);
          return true;
        }
        for (const boundary of SEGMENTS) {
          if (segments.has(boundary) || !complete(seqOf(boundary, LAG_FRAMES - 1))) continue;
          segments.add(boundary);
          const covered = pending.filter((w) => w < boundary);
          if (covered.length === 0) continue;
          results(connection, covered, true, false);
          for (const w of covered) mine.add(w);
          return false;
        }
        const partial = pending.map((w) => WORDS[w]).join(" ");
        if (partial !== "" && lastPartial.get(connection) !== partial) {
          lastPartial.set(connection, partial);
          results(connection, pending, false, false);
        }
        return false;
      },
    };
  }

  it("STT drop mid-utterance: the link is replaced, the unfinalized audio replayed, and no word is lost", async () => {
    const cutAt = random(1);
    const count = runs(3);
    const frames = callerFrames();
    let replayedFrames = 0;
    for (let run = 0; run < count; run++) {
      const base = stt.connections.length;
      const { client } = await greeted(clientProxy);
      await until(() => stt.connections.length > base, "the session's STT connection");
      llm.enqueue({ text: "Got it." });
      // Some latency on the STT link (finals come later still), then a cut after a random number
      // of audio bytes: anywhere from the first word to the last.
      const latencyMs = cutAt(0, 30);
      sttProxy.delay(latencyMs);
      const bytes = cutAt(3 * WIRE_FRAME_BYTES, (WORDS.length * WORD_FRAMES - 1) * WIRE_FRAME_BYTES);
      let cut = false;
      void sttProxy.severAfter(bytes, "upstream").then(() => (cut = true));
      const recognize = recognizer(base);
      const after = client.events.length;
      let ended = false;
      const listening = (async () => {
        while (!ended) {
          ended = recognize.step();
          await sleep(3);
        }
      })();
      for (const frame of frames) {
        client.ws.send(frame);
        await sleep(10);
      }
      const committed = await client.next("user-transcript.committed", after);
      await listening;
      await client.next("reply.completed", after);
      await hangUp(client);
      sttProxy.delay(0);

      const context = `run ${run}, cut after ${bytes} bytes, ${latencyMs} ms latency`;
      expect(cut, context).toBe(true);
      // No word the caller said was lost, and none was heard twice.
      expect(committed.text, context).toBe(WORDS.join(" "));
      expect(client.of("user-transcript.committed").length, context).toBe(1);
      // The link was replaced once, and the new connection received every frame the old one had
      // not finalized: the replayed audio.
      const [first, second, ...more] = stt.connections.slice(base);
      expect(first?.closed, context).toBe(true);
      expect(second, context).toBeDefined();
      expect(more, context).toEqual([]);
      if (first === undefined || second === undefined) continue;
      const finalized = recognize.done.get(first) ?? new Set<number>();
      const onSecond = heardOn(second);
      for (const [value, { count: samples }] of heardOn(first)) {
        if (value === 0 || finalized.has(wordOf(value))) continue;
        expect(onSecond.get(value)?.count ?? 0, `${context}: frame ${value} replayed`).toBeGreaterThanOrEqual(FRAME_SAMPLES);
        if (value !== END_MARK && samples > 0) replayedFrames++;
      }
    }
    expect(replayedFrames).toBeGreaterThan(0);
    reportRow("faults", FIGURES, ["STT link cut mid-utterance (Deepgram)", count, `every word committed once, unfinalized audio replayed (${replayedFrames} frames)`]);
  }, 60_000);

  it("TTS drop mid-sentence: the link is replaced and the rest of the reply is spoken, nothing twice", async () => {
    const REPLY = "Your parcel left the warehouse this morning. It is on the truck now, and it should reach you by Tuesday afternoon.";
    // Each word goes out as a `chunk` of base64 PCM (MS_PER_CHAR ms a character at 24 kHz), after its `timestamps`.
    const audioBytes = Math.ceil((REPLY.length * ((PLAYBACK_RATE * MS_PER_CHAR) / 1000) * 2) / 3) * 4;
    const cutAt = random(2);
    const count = runs(3);
    for (let run = 0; run < count; run++) {
      const { client, audio } = await greeted(clientProxy);
      const connections = tts.connections.length;
      llm.enqueue({ text: REPLY });
      // Cut the TTS link after a random share of the reply's audio has come down it.
      const bytes = cutAt(600, Math.floor(audioBytes * 0.85));
      let cut = false;
      void ttsProxy.severAfter(bytes, "downstream").then(() => (cut = true));
      const heardFrom = audio.length;
      const after = client.events.length;
      client.send({ type: "user_text", text: "where is my parcel?" });
      await client.next("reply.completed", after);
      await hangUp(client);

      const context = `run ${run}, cut after ${bytes} bytes`;
      expect(cut, context).toBe(true);
      expect(tts.connections.length, context).toBeGreaterThan(connections);
      expect(client.of("error.reported"), context).toEqual([]);
      // The caller heard the whole reply exactly once: the fake's audio spells its text.
      expect(textFromPcm(Buffer.concat(audio.slice(heardFrom)), PLAYBACK_RATE, MS_PER_CHAR), context).toBe(REPLY);
      expect(client.of("agent-transcript.committed").at(-1)?.text, context).toBe(REPLY);
    }
    reportRow("faults", FIGURES, ["TTS link cut mid-sentence (Cartesia)", count, "the caller's audio spells the whole reply once; transcript committed whole"]);
  }, 60_000);

  it("LLM stream cut mid-reply: a non-fatal llm error, the errorPhrase spoken, and the next turn answered", async () => {
    const CUT_REPLY = "Let me see, your parcel left the warehouse this morning and it is now on the truck heading your way.";
    const NEXT_REPLY = "Yes, it should arrive by Tuesday.";
    const cutAt = random(3);
    const count = runs(2);
    for (let run = 0; run < count; run++) {
      const { client, audio } = await greeted(clientProxy);
      const requests = llm.requests.length;
      llm.enqueue({ text: CUT_REPLY, chunkDelayMs: 15 }, { text: NEXT_REPLY });
      // The SSE response is some 4 KB: cut after the headers and a few chunks, before the end.
      const bytes = cutAt(350, 2400);
      let cut = false;
      void llmProxy.severAfter(bytes, "downstream").then(() => (cut = true));
      const heardFrom = audio.length;
      const after = client.events.length;
      client.send({ type: "user_text", text: "where is my parcel?" });
      await client.next("reply.completed", after);
      const failed = client.events.slice(after);
      const heard = textFromPcm(Buffer.concat(audio.slice(heardFrom)), PLAYBACK_RATE, MS_PER_CHAR);

      const next = client.events.length;
      const nextAudio = audio.length;
      client.send({ type: "user_text", text: "will it come soon?" });
      await client.next("reply.completed", next);
      const answered = client.events.slice(next);
      await hangUp(client);

      const context = `run ${run}, cut after ${bytes} bytes`;
      expect(cut, context).toBe(true);
      const errors = failed.filter((e) => e.type === "error.reported");
      expect(errors, context).toMatchObject([{ code: "llm", fatal: false }]);
      expect(failed.filter((e) => e.type === "agent-transcript.committed"), context).toMatchObject([{ text: ERROR_PHRASE }]);
      // Whatever of the reply was spoken before the cut, the caller then hears the error phrase.
      expect(heard.endsWith(ERROR_PHRASE), `${context}: heard ${JSON.stringify(heard)}`).toBe(true);
      expect(CUT_REPLY.startsWith(heard.slice(0, -ERROR_PHRASE.length).trim()), context).toBe(true);
      // The session goes on: the next turn is answered in full, with no further error.
      expect(answered.filter((e) => e.type === "error.reported"), context).toEqual([]);
      expect(answered.filter((e) => e.type === "agent-transcript.committed"), context).toMatchObject([{ text: NEXT_REPLY }]);
      expect(textFromPcm(Buffer.concat(audio.slice(nextAudio)), PLAYBACK_RATE, MS_PER_CHAR), context).toBe(NEXT_REPLY);
      expect(llm.requests.length - requests, context).toBe(2);
    }
    expect(llm.violations).toEqual([]);
    reportRow("faults", FIGURES, ["LLM stream cut mid-reply (SSE)", count, "one non-fatal llm error, errorPhrase spoken and committed, next turn answered"]);
  }, 60_000);

  it("a slow-loris upgrade is timed out and closed while other sessions are served", async () => {
    // Headers dribbled a byte at a time never finish: only the server's headers timeout ends them
    // (1 s here instead of HEADERS_TIMEOUT_MS; Node checks it every TIMEOUT_CHECK_INTERVAL_MS).
    gateway.server.headersTimeout = 1000;
    const count = runs(2);
    const request = `GET /websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Padding: ${"a".repeat(10_000)}`;
    const loris = Array.from({ length: count }, () => {
      const socket: Socket = tcpConnect(gatewayPort, "127.0.0.1");
      const state = { answer: "", sent: 0, closed: false, socket };
      socket.on("data", (data: Buffer) => (state.answer += data.toString("latin1")));
      socket.on("error", () => {});
      socket.on("close", () => (state.closed = true));
      const drip = setInterval(() => {
        if (state.closed || state.sent >= request.length) return;
        socket.write(request.charAt(state.sent++));
      }, 50);
      socket.on("close", () => clearInterval(drip));
      return state;
    });
    try {
      // Meanwhile a caller is served as usual.
      await until(() => loris.every((l) => l.sent > 3), "the slow upgrades to start");
      const { client, audio } = await greeted(clientProxy);
      llm.enqueue({ text: "It left this morning." });
      const after = client.events.length;
      const heardFrom = audio.length;
      client.send({ type: "user_text", text: "where is my parcel?" });
      await client.next("reply.completed", after);
      await hangUp(client);
      expect(client.events.slice(after).filter((e) => e.type === "agent-transcript.committed")).toMatchObject([{ text: "It left this morning." }]);
      expect(textFromPcm(Buffer.concat(audio.slice(heardFrom)), PLAYBACK_RATE, MS_PER_CHAR)).toBe("It left this morning.");
      // Every slow upgrade was answered 408 and closed by the server, still unfinished.
      await until(() => loris.every((l) => l.closed), "the server to close the slow upgrades", 30_000);
      for (const l of loris) {
        expect(l.answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(l.sent).toBeLessThan(request.length);
      }
    } finally {
      gateway.server.headersTimeout = HEADERS_TIMEOUT_MS;
      for (const l of loris) l.socket.destroy();
    }
    reportRow("faults", FIGURES, ["slow-loris WebSocket upgrade", count, "answered 408 and closed unfinished; a session served meanwhile"]);
  }, 60_000);
});

// ── Speech-to-speech: the OpenAI Realtime socket drops while a tool runs ────────────────────

describe("the speech-to-speech link under faults", () => {
  let service: FakeOpenAiRealtime;
  let s2sProxy: FaultProxy;
  let clientProxy: FaultProxy;
  let gateway: Gateway;
  let toolRuns = 0;
  let toolStarted: () => void = () => {};
  let toolRelease: Promise<void> = Promise.resolve();

  const lookupOrder = tool({
    description: "Look up an order",
    parameters: Type.Object({ orderId: Type.String() }),
    execute: async ({ orderId }) => {
      toolRuns++;
      toolStarted();
      await toolRelease;
      return `Order ${orderId} shipped on Friday.`;
    },
  });

  beforeAll(async () => {
    service = await startFakeOpenAiRealtime({ paceMs: 5 });
    s2sProxy = await startFaultProxy(Number(new URL(service.url).port));
    const def = withTools(agent({ name: "realtime", greeting: "Hi.", s2s: { kind: "openai-realtime", options: { url: s2sProxy.url("ws", "/v1/realtime") } } }), { lookup_order: lookupOrder });
    gateway = createGateway({ agent: def, logger: silentLogger, env: { OPENAI_API_KEY: "test-key" }, processMetrics: false });
    clientProxy = await startFaultProxy((await gateway.listen(0)).port);
  });

  afterAll(async () => {
    await gateway.close();
    await Promise.all([clientProxy.close(), s2sProxy.close()]);
    await service.close();
  });

  /** Responses the gateway has settled (`switchboard_turns_total`): a tool step counts once its `response.done` is handled. */
  async function settledTurns(): Promise<number> {
    return Number(/^switchboard_turns_total\{mode="s2s"\} (\S+)$/m.exec(await gateway.metrics.text())?.[1] ?? "0");
  }

  it("s2s drop during a tool call: the gateway reconnects, the tool ran once and its result is delivered once", async () => {
    const pause = random(4);
    const count = runs(3);
    for (let run = 0; run < count; run++) {
      service.enqueue({ say: "Hi.", audioMs: 60 });
      const { client } = await greeted(clientProxy);
      const socketIndex = service.connections.length - 1;
      const runsBefore = toolRuns;
      const started = new Promise<void>((resolve) => (toolStarted = resolve));
      let release: () => void = () => {};
      toolRelease = new Promise<void>((resolve) => (release = resolve));
      service.enqueue({ toolCall: { name: "lookup_order", args: { orderId: `A${run}` } } }, { say: "Your order shipped on Friday.", audioMs: 100 });
      const turns = await settledTurns();
      const after = client.events.length;
      await service.userSays("where is my order?");
      await started;
      const called = await client.next("tool.called", after);
      // The tool call's response is over at the gateway; the tool is still running.
      const deadline = Date.now() + 15_000;
      while ((await settledTurns()) <= turns && Date.now() < deadline) await sleep(5);
      expect(await settledTurns(), "the tool step settled").toBeGreaterThan(turns);
      // Drop the socket, and let the tool finish a random while later: during the reconnect
      // (first retry after 250 ms) or once the new socket is up.
      const waitMs = pause(0, 700);
      s2sProxy.sever();
      await sleep(waitMs);
      release();
      const committed = await client.next("agent-transcript.committed", after);
      await client.next("reply.completed", after);
      await hangUp(client);

      const context = `run ${run}, tool finished ${waitMs} ms after the drop`;
      expect(toolRuns - runsBefore, context).toBe(1);
      expect(committed.text, context).toBe("Your order shipped on Friday.");
      expect(client.of("error.reported"), context).toEqual([]);
      expect(service.connections.length, context).toBe(socketIndex + 2);
      const items = service.messages.filter((m) => m.message.type === "conversation.item.create" && (m.message.item as { call_id?: string } | undefined)?.call_id === called.toolCallId);
      const outputs = items.filter((m) => (m.message.item as { type?: string }).type === "function_call_output");
      // Delivered exactly once over both sockets, on the new one, after its call was re-declared there.
      expect(outputs.length, context).toBe(1);
      expect(outputs[0]?.connection, context).toBe(socketIndex + 1);
      expect(items.map((m) => `${m.connection} ${(m.message.item as { type?: string }).type}`), context).toEqual([`${socketIndex + 1} function_call`, `${socketIndex + 1} function_call_output`]);
    }
    expect(service.violations).toEqual([]);
    reportRow("faults", FIGURES, ["s2s socket dropped during a tool call (OpenAI Realtime)", count, "reconnected; tool ran once; result delivered once, on the new socket; reply spoken"]);
  }, 60_000);
});

// ── A client that stops reading ──────────────────────────────────────────────────────────────

/**
 * The real clock, run `rate` times faster while a test says so. A peer that stops reading on
 * loopback only backs the gateway's socket up once the kernel's send buffer (autotuned to some
 * 4 MB there) is full: ~90 s of 24 kHz agent audio at the pacer's real-time rate. Speeding the
 * gateway's clock up fills it in seconds; the fault, the buffers and the backlog check are real.
 */
function adjustableClock(): Clock & { rate: number } {
  let anchor = { real: Date.now(), virtual: Date.now() };
  let rate = 1;
  const now = (): number => anchor.virtual + (Date.now() - anchor.real) * rate;
  const clock: Clock & { rate: number } = {
    get rate() {
      return rate;
    },
    set rate(next: number) {
      anchor = { real: Date.now(), virtual: now() };
      rate = next;
    },
    now,
    setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms / rate),
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        const aborted = (): Error => (signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
        if (signal?.aborted === true) return reject(aborted());
        const onAbort = (): void => {
          timer.cancel();
          reject(aborted());
        };
        const timer = clock.setTimeout(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
  };
  return clock;
}

describe("a client that stops reading", () => {
  /** Audio per character (ms): long, so one reply outlasts the kernel's buffers. */
  const SLOW_MS_PER_CHAR = 100;
  const MAX_BACKLOG = 256 * 1024;
  const SPEEDUP = 64;
  let stt: FakeDeepgram;
  let tts: FakeCartesia;
  let llm: FakeOpenAiServer;
  let gateway: Gateway;
  let stalling: FaultProxy;
  let direct: FaultProxy;
  const clock = adjustableClock();
  const warnings: string[] = [];

  beforeAll(async () => {
    [stt, tts, llm] = await Promise.all([startFakeDeepgram(), startFakeCartesia({ msPerChar: SLOW_MS_PER_CHAR }), startFakeOpenAiServer()]);
    const def = agent({
      name: "backlog",
      greeting: "Hi.",
      idleTimeoutMs: 0,
      silence: { deadAirCoverMs: 0 },
      stt: { kind: "deepgram", options: { url: stt.url } },
      tts: { kind: "cartesia", options: { url: tts.url, voice: "test-voice" } },
      llm: { kind: "openai-compatible", options: { baseURL: llm.url, model: "fake-model" } },
      maxRetries: 0,
    });
    gateway = createGateway({
      agent: def,
      clock,
      // Pings would catch this peer too (it cannot answer them); this scenario is about the backlog.
      limits: { maxBacklogBytes: MAX_BACKLOG, pingIntervalMs: 3_600_000 },
      logger: createLogger({ level: "warn", destination: { write: (line: string) => void warnings.push(line) } }),
      env: { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, CARTESIA_API_KEY: "test-key" },
      processMetrics: false,
    });
    const { port } = await gateway.listen(0);
    [stalling, direct] = await Promise.all([startFaultProxy(port), startFaultProxy(port)]);
  });

  afterAll(async () => {
    clock.rate = 1;
    await gateway.close();
    await Promise.all([stalling.close(), direct.close()]);
    await Promise.all([stt.close(), tts.close(), llm.close()]);
  });

  /** A typed turn of `caller`, answered with `reply`: committed, and spoken in full. */
  async function answers(caller: { client: TestClient; audio: Buffer[] }, text: string, reply: string): Promise<void> {
    llm.enqueue({ text: reply });
    const after = caller.client.events.length;
    const heardFrom = caller.audio.length;
    caller.client.send({ type: "user_text", text });
    await caller.client.next("reply.completed", after);
    expect(caller.client.events.slice(after).filter((e) => e.type === "agent-transcript.committed")).toMatchObject([{ text: reply }]);
    expect(textFromPcm(Buffer.concat(caller.audio.slice(heardFrom)), PLAYBACK_RATE, SLOW_MS_PER_CHAR)).toBe(reply);
  }

  it("is closed at the backlog limit and its session ends while it reads nothing, while another session keeps talking", async () => {
    // Some 260 s of speech (12 MB at 24 kHz): more than the kernel's buffers and the backlog hold.
    const LONG = "Let me tell you the whole story of your parcel from the very beginning. ".repeat(36).trim();
    const count = Math.min(runs(1), 3);
    for (let run = 0; run < count; run++) {
      warnings.length = 0;
      const other = await greeted(direct);
      // The stuck caller stops reading right after the upgrade (before it read anything the
      // kernel could tune its receive buffer on), and asks for a long reply.
      const stuck = new TestClient(stalling.url("ws", "/websocket"));
      const stuckAudio = recordAudio(stuck);
      await stuck.opened;
      stalling.stall("downstream");
      const requests = llm.requests.length;
      llm.enqueue({ text: LONG });
      stuck.send({ type: "user_text", text: "tell me everything" });
      await until(() => llm.requests.length > requests, "the long reply's request");
      clock.rate = SPEEDUP;
      try {
        // Meanwhile the other caller is answered as usual.
        await answers(other, "is it on its way?", "Yes, it is.");
        // The gateway gives up on the stuck link once its socket's backlog passes the limit.
        await until(() => warnings.some((w) => w.includes("client stopped reading")), "the backlog limit", 30_000).catch((error: unknown) => {
          throw new Error(`${String(error)}; the gateway warned: ${warnings.join("")}`);
        });
      } finally {
        clock.rate = 1;
      }
      const warning = JSON.parse(warnings.find((w) => w.includes("client stopped reading")) ?? "{}") as { backlog?: number };
      expect(warning.backlog).toBeGreaterThan(MAX_BACKLOG);
      // Its session ends while it still reads nothing: the close handshake it cannot answer is
      // given CLOSE_HANDSHAKE_MS, not ws's 30 s.
      await until(() => gateway.sessions === 1, "the stuck session to end", CLOSE_HANDSHAKE_MS + 5_000);
      // When the stuck client reads again it finds what reached its side before the socket was
      // cut: the greeting whole, the long reply cut short, and no close frame (it was queued
      // behind the backlog): 1006.
      stalling.unstall();
      expect((await stuck.closed).code).toBe(1006);
      expect(stuck.of("agent-transcript.committed")).toMatchObject([{ text: "Hi." }]);
      expect(stuck.of("reply.completed")).toHaveLength(1);
      const heard = textFromPcm(Buffer.concat(stuckAudio), PLAYBACK_RATE, SLOW_MS_PER_CHAR);
      expect(heard.startsWith("Hi.")).toBe(true);
      expect(heard.length).toBeGreaterThan("Hi.".length);
      expect(LONG.startsWith(heard.slice("Hi.".length))).toBe(true);
      expect(heard.length).toBeLessThan("Hi.".length + LONG.length);
      // The other session is still live and answers again.
      await answers(other, "thanks", "Bye.");
      await hangUp(other.client);
      await until(() => gateway.sessions === 0, "the other session to end");
    }
    reportRow("faults", FIGURES, ["client stops reading mid-reply", count, "closed past the backlog limit (1008 sent, socket cut after the close handshake timeout), its session ended while it still read nothing; another session answered meanwhile and after"]);
  }, 60_000);
});
