// The s2s command model over real sockets: a client on a real gateway, the real OpenAI Realtime
// adapter on a real WebSocket to the loopback fake service, which the test plays event by event
// (`manualResponses`) — and which drops, refuses a reconnect, closes. Time is virtual (one clock for
// the gateway, the session and the adapter's backoff): only socket I/O runs in real time, and every
// wait for it is a wait for a frame or an event, with a timeout.
//
// The adapter's sockets are built by a watching factory: it sees every frame the adapter writes and
// reads, in order, per socket, and the state of the socket at each write. The invariants are read
// from that (what the adapter did) and from the fake (what the service received).
import fc from "fast-check";
import { Type } from "@sinclair/typebox";
import { WebSocket, type RawData } from "ws";
import { describe, expect, it } from "vitest";
import { virtualClock, type VirtualClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log.js";
import { agent, tool, withTools } from "../../src/manifest/index.js";
import type { SocketFactory } from "../../src/providers/ws-connect.js";
import { openAiRealtime } from "../../src/s2s/providers/openai-realtime.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { connect, type TestClient } from "../helpers/ws-client.js";
import { report, runs, SEED } from "./figures.js";

/** The adapter's reconnect backoff (virtual ms): three attempts since the link last proved healthy. */
const DELAYS = [100, 200, 400] as const;
const BUDGET = DELAYS.length;
/** Virtual time that fires any armed reconnect. */
const BACKOFF_MS = Math.max(...DELAYS);
/** The adapter's wait for `session.updated` (virtual ms). */
const OPEN_TIMEOUT_MS = 5000;
/** What the adapter reconnects after (openai-realtime.ts): going away, abnormal, server error, restart, try again. */
const TRANSIENT = new Set([1001, 1006, 1011, 1012, 1013]);
/** Real time allowed for any one socket round trip to show up (a shared, loaded machine). */
const WAIT_MS = 5000;

/** What the service or the client does next. */
type Step =
  | { readonly kind: "respond" }
  | { readonly kind: "speak"; readonly ms: number; readonly pick: number }
  | { readonly kind: "call"; readonly mode: "quick" | "slow" | "throws"; readonly ms: number }
  | { readonly kind: "done"; readonly status: "completed" | "cancelled"; readonly pick: number }
  | { readonly kind: "speech" }
  | { readonly kind: "silence" }
  | { readonly kind: "said"; readonly text: string }
  | { readonly kind: "mic"; readonly ms: number }
  | { readonly kind: "typed"; readonly text: string }
  | { readonly kind: "cancel" }
  | { readonly kind: "reset" }
  | { readonly kind: "wait"; readonly ms: number }
  | { readonly kind: "drop" }
  | { readonly kind: "refuse" }
  | { readonly kind: "flaky"; readonly on: "session.update" | "conversation.item.create" }
  | { readonly kind: "stall" }
  | { readonly kind: "reconnect" }
  | { readonly kind: "error" }
  | { readonly kind: "close"; readonly code: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "respond" as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("speak" as const), ms: fc.integer({ min: 20, max: 1500 }), pick: fc.nat(3) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("call" as const), mode: fc.constantFrom("quick" as const, "slow" as const, "throws" as const), ms: fc.integer({ min: 50, max: 4000 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("done" as const), status: fc.constantFrom("completed" as const, "cancelled" as const), pick: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "speech" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "silence" as const }) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map((text) => ({ kind: "said" as const, text })) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 200 }).map((ms) => ({ kind: "mic" as const, ms })) },
  { weight: 1, arbitrary: fc.constantFrom("where is my order", "thanks").map((text) => ({ kind: "typed" as const, text })) },
  { weight: 1, arbitrary: fc.constant({ kind: "cancel" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 3000 }).map((ms) => ({ kind: "wait" as const, ms })) },
  { weight: 4, arbitrary: fc.constant({ kind: "drop" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "refuse" as const }) },
  { weight: 1, arbitrary: fc.constantFrom("session.update" as const, "conversation.item.create" as const).map((on) => ({ kind: "flaky" as const, on })) },
  { weight: 1, arbitrary: fc.constant({ kind: "stall" as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: "reconnect" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "error" as const }) },
  { weight: 1, arbitrary: fc.constantFrom(1000, 1001, 1008, 1011, 1012, 4001).map((code) => ({ kind: "close" as const, code })) },
);

/** A run: a greeting or none, the steps, and maybe the session ending early (at a step; `reconnecting`: in a reconnect's handshake). */
const scenario = fc.record({
  greeting: fc.boolean(),
  steps: fc.array(step, { minLength: 5, maxLength: 30, size: "max" }),
  early: fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({ at: fc.nat(), reconnecting: fc.boolean() }) }),
});

/** One frame the adapter wrote (`out`) or read (`in`) on a socket. */
interface Frame {
  readonly dir: "in" | "out";
  readonly type: string;
  readonly callId?: string | undefined;
  readonly itemType?: string | undefined;
  readonly outOfBand?: boolean | undefined;
}

/** One socket the adapter opened, as the watching factory saw it. */
interface Watched {
  readonly index: number;
  readonly ws: WebSocket;
  readonly frames: Frame[];
  /** `session.updated` read: the adapter's link is ready. */
  ready: boolean;
  /** Ready before the session was retired. */
  readyInRun: boolean;
  closed: number | undefined;
  /** The HTTP status of a refused upgrade. */
  refused: number | undefined;
  /** Still open when the session was retired: its close is ours, not the service's. */
  retired: boolean;
}

function parse(data: unknown): Record<string, unknown> {
  try {
    const text = typeof data === "string" ? data : Buffer.isBuffer(data) ? data.toString("utf8") : Array.isArray(data) ? Buffer.concat(data as Buffer[]).toString("utf8") : "";
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function frameOf(dir: "in" | "out", message: Record<string, unknown>): Frame {
  const type = typeof message.type === "string" ? message.type : "?";
  const item = (message.item ?? {}) as Record<string, unknown>;
  const response = (message.response ?? {}) as Record<string, unknown>;
  return {
    dir,
    type,
    callId: typeof message.call_id === "string" ? message.call_id : typeof item.call_id === "string" ? item.call_id : undefined,
    itemType: typeof item.type === "string" ? item.type : undefined,
    outOfBand: type === "response.created" ? response.conversation_id === null : undefined,
  };
}

/**
 * The adapter's view of the tool calls, read from its frames: a result is "consumed" once an
 * in-band response starts on its socket after it; one not consumed when its socket dies must be
 * replayed on the next socket that becomes ready (its call re-declared first), and none twice on one
 * socket or ever again once consumed. `final`: every call the adapter read has been answered.
 */
function answerProblems(sockets: readonly Watched[], final: boolean): { problems: string[]; seen: Set<string>; sent: Set<string> } {
  const problems: string[] = [];
  const seen = new Set<string>();
  const sent = new Set<string>();
  const consumed = new Set<string>();
  /** Results written and not consumed: the socket they last went on. */
  const owed = new Map<string, number>();
  for (const s of sockets) {
    const here = new Set<string>();
    const declared = new Set<string>();
    const carried = [...owed.keys()];
    for (const f of s.frames) {
      if (f.callId === undefined) {
        if (f.dir === "in" && f.type === "response.created" && f.outOfBand === false) {
          for (const c of here) {
            if (owed.get(c) !== s.index) continue;
            owed.delete(c);
            consumed.add(c);
          }
        }
        continue;
      }
      const c = f.callId;
      if (f.dir === "in" && f.type === "response.function_call_arguments.done") {
        seen.add(c);
        declared.add(c);
      } else if (f.dir === "out" && f.itemType === "function_call") declared.add(c);
      else if (f.dir === "out" && f.itemType === "function_call_output") {
        if (consumed.has(c)) problems.push(`${c} answered again on socket ${s.index} after a response consumed its result`);
        if (here.has(c)) problems.push(`${c} answered twice on socket ${s.index}`);
        if (!declared.has(c)) problems.push(`${c} answered on socket ${s.index}, whose conversation has no such call`);
        here.add(c);
        sent.add(c);
        owed.set(c, s.index);
      }
    }
    if (s.readyInRun) for (const c of carried) if (!here.has(c)) problems.push(`${c}'s unconsumed result was not replayed on socket ${s.index}`);
  }
  if (final) for (const c of seen) if (!sent.has(c)) problems.push(`${c} was never answered`);
  return { problems, seen, sent };
}

/** The adapter's reconnect policy replayed over what happened: why it must have given up, if it must. */
function mustGiveUp(sockets: readonly Watched[]): string | undefined {
  let attempts = 0;
  for (const s of sockets) {
    if (s.retired) break;
    for (const f of s.frames) if (f.dir === "in" && (f.type === "response.created" || f.type === "input_audio_buffer.speech_started")) attempts = 0;
    if (s.refused !== undefined) {
      if (!(s.refused >= 500 || s.refused === 408 || s.refused === 429)) return `socket ${s.index} refused (${s.refused})`;
    } else if (s.closed === undefined) {
      continue;
    } else if (!TRANSIENT.has(s.closed)) {
      return `socket ${s.index} closed ${s.closed}`;
    }
    if (attempts >= BUDGET) return `socket ${s.index} failed with the reconnect budget spent`;
    attempts++;
  }
  return undefined;
}

/** Everything one run needs: the fake service, the gateway, a client, the watched sockets. */
class Rig {
  readonly clock: VirtualClock = virtualClock();
  readonly sockets: Watched[] = [];
  readonly problems: string[] = [];
  /** Drops (or closes) that hit a call the adapter read and had not answered yet. */
  toolDrops = 0;
  retiring = false;
  gateway!: Gateway;
  client!: TestClient;
  #pokes = 0;
  readonly #waiters = new Set<() => void>();
  #probes = 0;

  private constructor(readonly fake: FakeOpenAiRealtime) {}

  static async start(greeting: string): Promise<Rig> {
    const rig = new Rig(await startFakeOpenAiRealtime({ manualResponses: true, chunkMs: 100 }));
    const { clock, fake } = rig;
    const lookup = tool({
      description: "Look up an order",
      parameters: Type.Object({ orderId: Type.String(), mode: Type.String(), ms: Type.Number() }),
      messages: { start: "One moment." },
      execute: async ({ orderId, mode, ms }, ctx) => {
        if (mode === "slow") await clock.sleep(ms, ctx.signal);
        if (mode === "throws") throw new Error("the warehouse is down");
        return `Order ${orderId} shipped.`;
      },
    });
    const env = { OPENAI_API_KEY: "test-key" };
    const def = withTools(agent({ name: "rt", greeting, idleTimeoutMs: 0, s2s: { kind: "openai-realtime", options: { url: fake.url } } }), { lookup });
    // Each socket names itself in its URL, so the fake's connection for it can be found.
    const watch: SocketFactory = (url, options) => rig.watch(new WebSocket(`${url}&socket=${rig.sockets.length}`, { perMessageDeflate: false, ...options }));
    rig.gateway = createGateway({
      agent: def,
      env,
      clock,
      logger: silentLogger,
      processMetrics: false,
      limits: { pingIntervalMs: 1e9 },
      s2s: (descriptor) => openAiRealtime(descriptor, env, { clock, reconnectDelaysMs: DELAYS, openTimeoutMs: OPEN_TIMEOUT_MS, connect: watch }),
    });
    try {
      const { port } = await rig.gateway.listen(0, "127.0.0.1");
      rig.client = await connect(`ws://127.0.0.1:${port}/websocket`);
    } catch (error) {
      await rig.gateway.close();
      await fake.close();
      throw error;
    }
    rig.client.ws.on("message", () => rig.poke());
    rig.client.ws.on("close", () => rig.poke());
    return rig;
  }

  poke(): void {
    this.#pokes++;
    for (const wake of [...this.#waiters]) wake();
  }

  /** Wrap a socket the adapter builds: its writes, reads and close are seen before the adapter's handlers run. */
  watch(ws: WebSocket): WebSocket {
    const s: Watched = { index: this.sockets.length, ws, frames: [], ready: false, readyInRun: false, closed: undefined, refused: undefined, retired: this.retiring };
    for (const earlier of this.sockets) {
      if (earlier.ws.readyState === WebSocket.OPEN || earlier.ws.readyState === WebSocket.CONNECTING) this.problems.push(`socket ${s.index} opened while socket ${earlier.index} is still live`);
    }
    this.sockets.push(s);
    const send = ws.send.bind(ws) as (data: unknown, cb?: (error?: Error) => void) => void;
    (ws as unknown as { send: (data: unknown, cb?: (error?: Error) => void) => void }).send = (data, cb) => {
      const frame = frameOf("out", parse(data));
      if (ws.readyState !== WebSocket.OPEN || s.closed !== undefined) this.problems.push(`socket ${s.index}: ${frame.type} written in state ${ws.readyState}${s.closed === undefined ? "" : " after its close"}`);
      if (s.index !== this.sockets.length - 1) this.problems.push(`socket ${s.index}: ${frame.type} written after socket ${this.sockets.length - 1} replaced it`);
      const updates = s.frames.filter((f) => f.dir === "out" && f.type === "session.update").length;
      if (frame.type === "session.update" && updates > 0) this.problems.push(`socket ${s.index}: a second session.update`);
      if (frame.type !== "session.update" && updates === 0) this.problems.push(`socket ${s.index}: ${frame.type} before session.update`);
      else if (frame.type !== "session.update" && !s.ready) this.problems.push(`socket ${s.index}: ${frame.type} before the service confirmed the setup`);
      s.frames.push(frame);
      send(data, cb);
      this.poke();
    };
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (isBinary) return;
      const frame = frameOf("in", parse(data));
      if (frame.type === "session.updated") {
        s.ready = true;
        s.readyInRun = !this.retiring;
      }
      s.frames.push(frame);
      this.poke();
    });
    ws.on("unexpected-response", (_request, response) => {
      s.refused = response.statusCode ?? 0;
      this.poke();
    });
    ws.on("close", (code: number) => {
      s.closed = code;
      if (s.ready && !s.retired && !this.dead) {
        const { seen, sent } = answerProblems(this.sockets, false);
        if ([...seen].some((c) => !sent.has(c))) this.toolDrops++;
      }
      // After the adapter's own close handler (registered after this one) has run.
      queueMicrotask(() => this.poke());
    });
    ws.on("error", () => undefined);
    return ws;
  }

  /** The service holds this socket's setup (`holdNextSetup`) and has its `session.update`: the handshake hangs. */
  held(s: Watched | undefined): boolean {
    if (s === undefined) return false;
    const c = this.fake.connections.find((c) => new URL(c.url, "ws://x").searchParams.get("socket") === String(s.index));
    return c !== undefined && c.holdSetup && (this.fake.sessionUpdates[c.index] ?? 0) > 0;
  }

  get last(): Watched | undefined {
    return this.sockets.at(-1);
  }

  get fatals(): number {
    return this.client.of("error.reported").filter((e) => e.fatal).length;
  }

  get dead(): boolean {
    return this.fatals > 0 || this.retiring;
  }

  /** A reconnect waits for a setup the service holds (until its open timeout, virtual). */
  get hanging(): boolean {
    const s = this.last;
    return !this.dead && s !== undefined && !s.ready && s.closed === undefined && this.held(s);
  }

  /** The adapter's link is ready and open, as far as the client end knows. */
  get up(): boolean {
    const s = this.last;
    return !this.dead && s !== undefined && s.ready && s.closed === undefined;
  }

  /** Resolve when `cond` holds (checked on every frame or event, and every 20 ms), or throw after WAIT_MS. */
  async until(cond: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, 20);
        this.#waiters.add(wake);
      });
    }
  }

  /** Let loopback I/O flow until nothing moves for a few turns of the event loop. */
  async quiet(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const before = this.#pokes + this.fake.messages.length;
      for (let j = 0; j < 3; j++) await new Promise<void>((resolve) => setImmediate(resolve));
      if (before === this.#pokes + this.fake.messages.length) return;
    }
  }

  /**
   * Bring the run to a known state: the adapter's link ready (a probe — an interim user transcript —
   * went service → adapter → session → client, so every frame before it was handled), or down with
   * its reconnect timer armed, or hanging in a setup the service holds, or dead (a fatal error reported).
   */
  async settle(): Promise<void> {
    await this.quiet();
    for (;;) {
      const s = this.last;
      if (s === undefined || this.dead) break;
      if (s.closed !== undefined) break;
      if (!s.ready) {
        await this.until(() => s.ready || s.closed !== undefined || this.dead || this.held(s), `socket ${s.index}'s handshake`);
        if (s.ready || s.closed !== undefined || this.dead) continue;
        // Hanging: the service never confirms the setup; the session goes on meanwhile, until the open timeout.
        break;
      }
      const probe = `probe${++this.#probes}`;
      const from = this.client.events.length;
      this.fake.send({ type: "conversation.item.input_audio_transcription.delta", item_id: probe, content_index: 0, delta: probe });
      const arrived = (): boolean => this.client.events.slice(from).some((e) => e.type === "user-transcript.updated" && e.text === probe);
      await this.until(() => arrived() || s.closed !== undefined || this.dead, `the probe on socket ${s.index}`);
      if (arrived()) break;
    }
    await this.quiet();
    const reason = mustGiveUp(this.sockets);
    if (reason !== undefined && !this.retiring) await this.until(() => this.fatals > 0, `the fatal error (${reason})`);
  }

  async advance(ms: number): Promise<void> {
    await this.clock.advance(ms);
    await this.settle();
  }

  /** The invariants that hold at every step. */
  check(): void {
    expect(this.problems).toEqual([]);
    expect(this.fake.violations).toEqual([]);
    for (const c of this.fake.connections) {
      expect(this.fake.sessionUpdates[c.index] ?? 0, `connection ${c.index}: session.update count`).toBeLessThanOrEqual(1);
      if (c.messages.length > 0) expect(c.messages[0]?.type, `connection ${c.index}: first message`).toBe("session.update");
    }
    const events = this.client.events;
    const fatal = events.findIndex((e) => e.type === "error.reported" && e.fatal);
    expect(this.fatals).toBeLessThanOrEqual(1);
    if (fatal >= 0) expect(events.slice(fatal + 1).map((e) => e.type), "events after the fatal error").toEqual([]);
    if (!this.retiring) {
      const reason = mustGiveUp(this.sockets);
      expect(this.fatals > 0 ? "fatal" : "alive", reason ?? "no reason to give up").toBe(reason === undefined ? "alive" : "fatal");
    }
    expect(answerProblems(this.sockets, false).problems).toEqual([]);
  }

  /** The session ends (the client hangs up): nothing of it may stay connected to the service. */
  async retire(): Promise<void> {
    this.retiring = true;
    for (const s of this.sockets) if (s.closed === undefined) s.retired = true;
    this.client.close();
    await this.until(() => this.client.ws.readyState === WebSocket.CLOSED, "the client's close");
    await this.until(() => this.gateway.sessions === 0, "the session's end");
    await this.until(() => this.sockets.every((s) => s.ws.readyState === WebSocket.CLOSED), "the adapter's sockets to close");
    await this.until(() => this.fake.openSockets() === 0, "the service to see every socket closed");
  }

  async close(): Promise<void> {
    if (this.client.ws.readyState !== WebSocket.CLOSED) this.client.ws.terminate();
    await this.gateway.close();
    await this.fake.close();
  }
}

describe("the s2s session over real sockets, with drops and reconnects", () => {
  it("answers every tool call once across sockets, sets each socket up once, never writes to a closed socket, and leaves nothing open", async () => {
    const n = runs(100);
    let steps = 0;
    let reconnects = 0;
    let toolDrops = 0;
    /** Runs that reached a reconnect after a drop, and a drop while a tool call was in flight (coverage floors below). */
    let reconnectRuns = 0;
    let toolDropRuns = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ greeting, steps: sequence, early }) => {
        const rig = await Rig.start(greeting ? "Hi! How can I help?" : "");
        const { fake, client } = rig;
        try {
          await rig.settle();
          expect(rig.up, "the session is up").toBe(true);
          const endAt = early === null ? undefined : early.at % sequence.length;
          for (const [index, s] of sequence.entries()) {
            if (index === endAt) break;
            steps += 1;
            if (rig.fatals > 0) break;
            const up = rig.up;
            const down = !rig.dead && !up;
            switch (s.kind) {
              case "respond":
                if (up) fake.startResponse();
                break;
              case "speak": {
                const running = fake.running();
                const target = running[s.pick % Math.max(1, running.length)];
                if (up && target !== undefined) fake.speakIn(target.id, "Some words here.", s.ms);
                break;
              }
              case "call": {
                // In the response running, or in one the service starts for it.
                const target = !up ? undefined : (fake.running().find((r) => !r.outOfBand) ?? fake.startResponse());
                if (target !== undefined && !target.outOfBand) fake.callIn(target.id, "lookup", { orderId: "A1", mode: s.mode, ms: s.ms });
                break;
              }
              case "done": {
                const running = fake.running();
                const target = running[s.pick % Math.max(1, running.length)];
                if (up && target !== undefined) fake.finish(target.id, s.status);
                break;
              }
              case "speech":
                if (up) fake.speechStarted();
                break;
              case "silence":
                if (up) fake.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: 2000, item_id: "item_speech" });
                break;
              case "said":
                if (up) fake.send({ type: "conversation.item.input_audio_transcription.completed", item_id: "item_said", content_index: 0, transcript: s.text });
                break;
              case "mic":
                if (!rig.dead) client.ws.send(Buffer.alloc(32 * s.ms));
                break;
              case "typed":
                if (!rig.dead) client.send({ type: "user_text", text: s.text });
                break;
              case "cancel":
              case "reset":
                if (!rig.dead) {
                  const from = client.events.length;
                  client.send({ type: s.kind });
                  const answer = s.kind === "cancel" ? "reply.cancelled" : "session.reset";
                  await rig.until(() => client.events.slice(from).some((e) => e.type === answer) || rig.dead, answer);
                }
                break;
              case "wait":
                await rig.clock.advance(s.ms);
                break;
              case "drop":
                if (up) fake.drop();
                break;
              case "refuse":
                fake.refuse(503, 1);
                break;
              case "flaky":
                fake.dropOn(s.on);
                break;
              case "stall":
                fake.holdNextSetup();
                break;
              case "reconnect":
                if (rig.hanging) await rig.clock.advance(OPEN_TIMEOUT_MS);
                else if (down) await rig.clock.advance(BACKOFF_MS);
                break;
              case "error":
                if (up) fake.send({ type: "error", error: { type: "server_error", code: "server_error", message: "The server had an error." } });
                break;
              case "close":
                if (up) fake.closeWith(s.code, "closing");
                break;
            }
            await rig.settle();
            rig.check();
          }

          if (endAt !== undefined) {
            // Retired mid-run, maybe in the middle of a reconnect's handshake: only the safety invariants, and nothing left open.
            if (early?.reconnecting === true && rig.up) {
              fake.drop();
              await rig.settle();
            }
            if (early?.reconnecting === true && !rig.dead && !rig.up && !rig.hanging) {
              fake.dropOn(undefined);
              fake.refuse(undefined);
              fake.holdNextSetup();
              const next = rig.sockets.length;
              await rig.clock.advance(BACKOFF_MS);
              await rig.until(() => rig.held(rig.sockets[next]) || rig.sockets[next]?.closed !== undefined || rig.dead, "a reconnect hanging in its setup");
            }
          } else {
            // Let everything in flight finish: no more faults, responses ended, tools settled, a live link.
            fake.dropOn(undefined);
            fake.refuse(undefined);
            for (let round = 0; round < 20 && !rig.dead; round++) {
              if (rig.up) for (const r of fake.running()) fake.finish(r.id, "cancelled");
              await rig.advance(rig.up || rig.hanging ? OPEN_TIMEOUT_MS : BACKOFF_MS);
              rig.check();
              const { seen, sent } = answerProblems(rig.sockets, false);
              if (rig.up && fake.running().length === 0 && [...seen].every((c) => sent.has(c))) break;
            }
            rig.check();
            if (!rig.dead) {
              expect(rig.up, "a live link after the faults stopped").toBe(true);
              expect(answerProblems(rig.sockets, true).problems).toEqual([]);
            }
          }
          await rig.retire();
          rig.check();
          const reconnected = rig.sockets.filter((s) => s.index > 0 && s.readyInRun).length;
          if (reconnected > 0) reconnectRuns += 1;
          reconnects += reconnected;
          if (rig.toolDrops > 0) toolDropRuns += 1;
          toolDrops += rig.toolDrops;
        } finally {
          await rig.close();
        }
      }),
      { seed: SEED, numRuns: n },
    );
    // The generator must keep reaching the hard cases, or the property proves little.
    expect(reconnectRuns / n).toBeGreaterThan(0.05);
    expect(toolDropRuns / n).toBeGreaterThan(0.05);
    report({ property: "s2s over real sockets: drops and reconnects", runs: n, inputs: steps, unit: `steps (${reconnects} reconnects, ${toolDrops} drops during a tool call)` });
  }, 300_000);
});
