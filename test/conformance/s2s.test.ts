/**
 * The s2s port's conformance suite (src/s2s/s2s-port.ts), run against every adapter on its
 * loopback fake (fakes/openai-realtime.ts, fakes/gemini-live.ts); a vendor's own test file
 * (test/unit/s2s/<vendor>.test.ts) keeps what only that vendor does.
 *
 * Keys: without its key an adapter fails at construction with MissingKeyError naming the variable
 * (`options.apiKeyEnv` names another); a key refused at the upgrade (HTTP 401) rejects open() with
 * a fatal error naming the variable, never the key, without a retry or a session event.
 *
 * Opening: the setup (OpenAI `session.update`, Gemini `setup`) must be confirmed in time (10 s by
 * default, `openTimeoutMs`), and an abort while it is pending rejects open() with the abort's
 * reason; either way the socket is closed and no session event is reported.
 *
 * A session: close() reports closed({expected:true}) once and leaves no socket; a transient close
 * (1012) reconnects with one setup and no error; past the reconnect budget there is exactly one
 * fatal `connection` error, then closed({expected:false}), and no further attempt; mic audio over
 * the socket's backlog limit is dropped and counted (`droppedAudioBytes`).
 */
import { describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { virtualClock, type Clock, type VirtualClock } from "../../src/clock.js";
import { GatewayError, MissingKeyError } from "../../src/errors.js";
import { MAX_PROVIDER_BACKLOG_BYTES } from "../../src/providers/ws-backlog.js";
import type { SocketFactory } from "../../src/providers/ws-connect.js";
import { geminiLive } from "../../src/s2s/providers/gemini-live.js";
import { openAiRealtime } from "../../src/s2s/providers/openai-realtime.js";
import type { S2sEvents, S2sProvider, S2sSession, S2sSetup } from "../../src/s2s/s2s-port.js";
import { FAKE_GEMINI_KEY, startFakeGeminiLive } from "../../fakes/gemini-live.js";
import { startFakeOpenAiRealtime } from "../../fakes/openai-realtime.js";
import { closeAfterEach } from "../helpers/cleanups.js";

type Env = Record<string, string>;

/** The adapter's runtime knobs the cases set. */
interface Runtime {
  readonly clock?: Clock;
  readonly reconnectDelaysMs?: readonly number[];
  readonly openTimeoutMs?: number;
  readonly connect?: SocketFactory;
}

/** One fake for one test, and the adapter on it. */
interface Served {
  /** The adapter on this fake: `env` defaults to the key the fake accepts. */
  provider(options?: Record<string, unknown>, env?: Env, runtime?: Runtime): S2sProvider;
  /** The setup reached the fake (and is held when the fake was started with `holdSetup`). */
  setupSent(): Promise<void>;
  /** Setup messages on each connection, in order. */
  setups(): number[];
  /** Sockets the fake still holds open. */
  openSockets(): number;
  /** Upgrades the fake accepted. */
  accepted(): number;
  /** Upgrades attempted: accepted or refused. */
  attempts(): number;
  /** Refuse every upgrade from now on with `status` (undefined: accept again). */
  refuseUpgrades(status: number | undefined): void;
  /** A network drop: no close frame. */
  drop(): void;
  closeWith(code: number, reason: string): void;
  /** Mic audio frames the fake received on connection `index`. */
  audioFrames(index: number): number;
  /** What else the vendor shows after a clean close(). */
  checkClosedCleanly(): Promise<void>;
}

interface S2sAdapter {
  readonly name: string;
  /** The environment variable the key is read from by default. */
  readonly keyVariable: string;
  /** The adapter with no fake behind it (construction only). */
  build(options: Record<string, unknown>, env: Env): S2sProvider;
  /** A fresh fake (closed after the test); `holdSetup`: the setup is never confirmed. */
  serve(settings?: { readonly holdSetup?: boolean }): Promise<Served>;
  /** The timeout's message for `ms`. */
  timeoutMessage(ms: number): RegExp;
}

const SETUP: S2sSetup = {
  instructions: "You are a phone agent.",
  tools: [{ name: "lookup_order", description: "Find an order.", parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } }],
  toolChoice: "auto",
  interruptResponse: true,
};

const closing = closeAfterEach();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const waitFor = (check: () => void): Promise<void> => vi.waitFor(check, { timeout: 3000, interval: 5 });

/** Move virtual time in steps, letting real I/O run between them, until `done()` holds. */
async function advanceUntil(clock: VirtualClock, done: () => boolean, stepMs = 50, maxMs = 20_000): Promise<void> {
  for (let t = 0; t < maxMs && !done(); t += stepMs) {
    await clock.advance(stepMs);
    await sleep(5);
  }
  expect(done()).toBe(true);
}

type Call = { readonly name: string; readonly args: unknown[] };

/** Every session event, in order. */
function recorder() {
  const calls: Call[] = [];
  const push =
    (name: string) =>
    (...args: unknown[]): void => {
      calls.push({ name, args });
    };
  const names: readonly (keyof S2sEvents)[] = ["audio", "agentTranscript", "speechStarted", "speechStopped", "userTranscript", "responseStarted", "responseDone", "toolCall", "error", "closed"];
  const events = Object.fromEntries(names.map((name) => [name, push(name)])) as unknown as S2sEvents;
  const of = (name: string): unknown[][] => calls.filter((c) => c.name === name).map((c) => c.args);
  return { events, calls, of, errors: () => of("error").map(([error, info]) => ({ error: error as Error, fatal: (info as { fatal: boolean }).fatal })) };
}

async function open(served: Served, runtime: Runtime = {}): Promise<{ session: S2sSession; rec: ReturnType<typeof recorder> }> {
  const rec = recorder();
  const session = closing(await served.provider({}, undefined, runtime).open({ setup: SETUP, history: () => [] }, rec.events));
  return { session, rec };
}

function openAi(): S2sAdapter {
  const build = (options: Record<string, unknown>, env: Env, runtime: Runtime = {}): S2sProvider => openAiRealtime({ kind: "openai-realtime", options }, env, runtime);
  return {
    name: "openai-realtime",
    keyVariable: "OPENAI_API_KEY",
    build,
    async serve(settings = {}) {
      const fake = closing(await startFakeOpenAiRealtime({ holdSessionUpdated: settings.holdSetup === true }));
      return {
        provider: (options = {}, env = { OPENAI_API_KEY: "test-key" }, runtime = {}) => build({ url: fake.url, ...options }, env, runtime),
        setupSent: () => waitFor(() => expect(fake.sessionUpdates[0]).toBe(1)),
        setups: () => [...fake.sessionUpdates],
        openSockets: () => fake.openSockets(),
        accepted: () => fake.connections.length,
        attempts: () => fake.upgrades,
        refuseUpgrades: (status) => fake.refuse(status),
        drop: () => fake.drop(),
        closeWith: (code, reason) => fake.closeWith(code, reason),
        audioFrames: (index) => fake.messages.filter((m) => m.message.type === "input_audio_buffer.append" && m.connection === index).length,
        checkClosedCleanly: () => Promise.resolve(),
      };
    },
    timeoutMessage: (ms) => new RegExp(`within ${ms} ms`),
  };
}

function gemini(): S2sAdapter {
  const build = (options: Record<string, unknown>, env: Env, runtime: Runtime = {}): S2sProvider => geminiLive({ kind: "gemini-live", options }, env, runtime);
  return {
    name: "gemini-live",
    keyVariable: "GOOGLE_API_KEY",
    build,
    async serve(settings = {}) {
      const fake = closing(await startFakeGeminiLive({ completeSetup: settings.holdSetup !== true }));
      return {
        provider: (options = {}, env = { GOOGLE_API_KEY: FAKE_GEMINI_KEY }, runtime = {}) => build({ url: fake.url, ...options }, env, runtime),
        setupSent: async () => void (await fake.waitForMessage("setup")),
        setups: () => fake.connections.map((c) => c.setups.length),
        openSockets: () => fake.connections.filter((c) => !c.closed).length,
        accepted: () => fake.connections.length,
        attempts: () => fake.connections.length + fake.rejected.length,
        refuseUpgrades: (status) => fake.refuseUpgrades(status),
        drop: () => fake.drop(),
        closeWith: (code, reason) => fake.closeWith(code, reason),
        audioFrames: (index) => fake.connections[index]?.messages.filter((m) => typeof m === "object" && m !== null && "realtimeInput" in m).length ?? 0,
        async checkClosedCleanly() {
          const c = fake.latest;
          await fake.waitForClose(c);
          expect(c.closeCode).toBe(1000);
        },
      };
    },
    timeoutMessage: (ms) => new RegExp(`setup within ${ms} ms`),
  };
}

const ADAPTERS = [openAi(), gemini()];

describe.each(ADAPTERS)("s2s keys: $name", (adapter) => {
  it("a missing key throws MissingKeyError (fatal) naming the variable at construction; options.apiKeyEnv names another", () => {
    const missing = (options: Record<string, unknown>, env: Env): MissingKeyError => {
      try {
        adapter.build(options, env);
      } catch (error) {
        return error as MissingKeyError;
      }
      return expect.unreachable("built without a key");
    };
    const error = missing({}, {});
    expect(error).toBeInstanceOf(MissingKeyError);
    expect(error.variable).toBe(adapter.keyVariable);
    expect(error.fatal).toBe(true);
    const named = missing({ apiKeyEnv: "MY_KEY" }, { [adapter.keyVariable]: "k" });
    expect(named).toBeInstanceOf(MissingKeyError);
    expect(named.variable).toBe("MY_KEY");
    expect(named.message).toMatch(/MY_KEY/);
    expect(adapter.build({ apiKeyEnv: "MY_KEY" }, { MY_KEY: "k" }).kind).toBe(adapter.name);
  });

  it("a 401 at the upgrade rejects open() with a fatal error naming the key variable (never the key), not retried, no session event", async () => {
    const served = await adapter.serve();
    served.refuseUpgrades(401);
    const rec = recorder();
    const error = await served
      .provider({}, { [adapter.keyVariable]: "wrong-key-value" })
      .open({ setup: SETUP, history: () => [] }, rec.events)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).fatal).toBe(true);
    expect((error as GatewayError).message).toContain(adapter.keyVariable);
    expect((error as GatewayError).message).toContain("401");
    expect((error as GatewayError).message).not.toContain("wrong-key-value");
    expect(served.attempts()).toBe(1);
    expect(served.accepted()).toBe(0);
    expect(rec.calls).toEqual([]);
  });

  it("a refused key read from options.apiKeyEnv names that variable", async () => {
    const served = await adapter.serve();
    served.refuseUpgrades(401);
    const error = await served
      .provider({ apiKeyEnv: "TEAM_S2S_KEY" }, { TEAM_S2S_KEY: "wrong-key-value" })
      .open({ setup: SETUP, history: () => [] }, recorder().events)
      .catch((e: unknown) => e);
    expect((error as GatewayError).message).toContain("TEAM_S2S_KEY");
    expect((error as GatewayError).message).not.toContain(adapter.keyVariable);
  });
});

describe.each(ADAPTERS)("s2s opening: $name", (adapter) => {
  it("an abort while the setup is unconfirmed rejects open() with its reason and closes the socket", async () => {
    const served = await adapter.serve({ holdSetup: true });
    const rec = recorder();
    const controller = new AbortController();
    const opening = served
      .provider()
      .open({ setup: SETUP, history: () => [], signal: controller.signal }, rec.events)
      .catch((e: unknown) => e);
    await served.setupSent();
    controller.abort(new Error("caller hung up"));
    expect(await opening).toMatchObject({ message: "caller hung up" });
    await waitFor(() => expect(served.openSockets()).toBe(0));
    expect(served.accepted()).toBe(1);
    expect(served.setups()).toEqual([1]);
    expect(rec.calls).toEqual([]);
  });

  it.each([
    { openTimeoutMs: undefined, ms: 10_000 },
    { openTimeoutMs: 5000, ms: 5000 },
  ])("an unconfirmed setup times out after $ms ms on the injected clock (openTimeoutMs $openTimeoutMs) and closes the socket", async ({ openTimeoutMs, ms }) => {
    const served = await adapter.serve({ holdSetup: true });
    const clock = virtualClock();
    const rec = recorder();
    const opening = served
      .provider({}, undefined, { clock, ...(openTimeoutMs === undefined ? {} : { openTimeoutMs }) })
      .open({ setup: SETUP, history: () => [] }, rec.events)
      .catch((e: unknown) => e);
    let settled = false;
    void opening.then(() => (settled = true));
    await served.setupSent();
    await clock.advance(ms - 1);
    await sleep(10);
    expect(settled).toBe(false);
    expect(served.openSockets()).toBe(1);
    await clock.advance(1);
    const error = await opening;
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).message).toMatch(adapter.timeoutMessage(ms));
    await waitFor(() => expect(served.openSockets()).toBe(0));
    expect(rec.calls).toEqual([]);
  });
});

describe.each(ADAPTERS)("s2s sessions: $name", (adapter) => {
  it("close() reports closed({expected:true}) once and leaves no socket", async () => {
    const served = await adapter.serve();
    const { session, rec } = await open(served);
    await Promise.all([session.close(), session.close()]);
    await session.close();
    await served.checkClosedCleanly();
    await waitFor(() => expect(served.openSockets()).toBe(0));
    expect(rec.of("closed")).toEqual([[{ expected: true }]]);
    expect(rec.errors()).toEqual([]);
  });

  it("a transient close (1012) reconnects with one setup, and no error or close is reported", async () => {
    const served = await adapter.serve();
    const clock = virtualClock();
    const { session, rec } = await open(served, { clock });
    served.closeWith(1012, "service restart");
    await advanceUntil(clock, () => served.setups()[1] === 1);
    expect(served.setups()).toEqual([1, 1]);
    expect(rec.errors()).toEqual([]);
    expect(rec.of("closed")).toEqual([]);
    // The new socket carries the mic audio.
    await waitFor(() => {
      session.sendAudio(new Uint8Array(640));
      expect(served.audioFrames(1)).toBeGreaterThan(0);
    });
  });

  it("past the reconnect budget: exactly one fatal connection error, then closed({expected:false}), no socket and no attempt left", async () => {
    const served = await adapter.serve();
    const clock = virtualClock();
    const { session, rec } = await open(served, { clock, reconnectDelaysMs: [100, 200, 300] });
    served.refuseUpgrades(503);
    served.drop();
    await advanceUntil(clock, () => rec.of("closed").length === 1);
    expect(served.attempts()).toBe(4); // the first socket + 3 attempts
    expect(served.accepted()).toBe(1);
    expect(rec.errors()).toHaveLength(1);
    expect(rec.errors()[0]!.fatal).toBe(true);
    expect(rec.errors()[0]!.error).toBeInstanceOf(GatewayError);
    expect((rec.errors()[0]!.error as GatewayError).code).toBe("connection");
    expect(rec.of("closed")).toEqual([[{ expected: false }]]);
    expect(rec.calls.at(-1)!.name).toBe("closed");
    expect(served.openSockets()).toBe(0);
    await clock.advance(10_000);
    await sleep(20);
    expect(served.attempts()).toBe(4);
    expect(rec.errors()).toHaveLength(1);
    expect(clock.pending()).toBe(0);
    session.sendAudio(new Uint8Array(640)); // a closed session ignores audio
    expect(rec.calls.at(-1)!.name).toBe("closed");
  });
});

describe.each(ADAPTERS)("s2s backlog: $name", (adapter) => {
  it("drops (and counts) mic audio while the socket backlog is over the limit", async () => {
    const served = await adapter.serve();
    let congested = false;
    const { session } = await open(served, {
      connect: (url, options) => {
        const ws = new WebSocket(url, options);
        Object.defineProperty(ws, "bufferedAmount", { get: () => (congested ? MAX_PROVIDER_BACKLOG_BYTES + 1 : 0) });
        return ws;
      },
    });
    congested = true;
    session.sendAudio(new Uint8Array(960));
    session.sendAudio(new Uint8Array(480));
    expect(session.droppedAudioBytes).toBe(1440);
    congested = false;
    session.sendAudio(new Uint8Array(960));
    await waitFor(() => expect(served.audioFrames(0)).toBe(1));
    expect(session.droppedAudioBytes).toBe(1440);
  });
});
