/**
 * The soak's callers, in the runner's process (bench/soak/run.ts): one session of a kind from connect
 * to close. Every session waits for its greeting, then takes turns until its lifetime is up (at
 * least one), then leaves in one of three ways: a normal close, a close while a reply is under
 * way, or a dropped socket (no close frame).
 *
 * - text: `user_text` → first `agent-transcript.updated` (latency) → `reply.completed`, whose
 *   committed text must carry the turn's tag. A long turn is cut with `cancel`.
 * - pipeline: 200 ms of tagged mic "speech" (bench/shared/protocol.ts), then the runner has the bench STT
 *   say the final in the gateway process; latency is final asked → first audio frame. A long turn
 *   (a 2 s reply) is barged in on: 600 ms of speech 300 ms into the audio, which then becomes the
 *   next turn.
 * - s2s (browser socket) and phone (a Twilio media stream, fakes/carrier.ts): loud mic
 *   audio the Realtime fake's VAD hears (bench/soak/fake-realtime.ts); 500 ms of it asks for the order
 *   tool. Latency is end of speech → first agent audio (the fake waits 120 ms of quiet first). A
 *   long turn is barged in on 200 ms into the reply. A phone turn ends when the line has been
 *   quiet for 400 ms with nothing left to play.
 *
 * Browser kinds sometimes send a malformed `user_text` first: it must earn exactly one non-fatal
 * `protocol` error (provoked, not counted against the gateway). Anything else — an
 * `error.reported`, a close the caller did not start, a wait over `STALL_MS`, a reply without its
 * tag, a tool turn without a settled tool call — is an unexpected error.
 */
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import { encodeMulaw } from "../../src/audio/g711.js";
import { FakeCarrier } from "../../fakes/carrier.js";
import { micFrame, replyTag, userLine } from "../shared/protocol.js";
import { intentOf, type Kind, type SoakUrls } from "./protocol.js";
import { monoMs } from "../shared/stats.js";

/** Longest wait for anything the gateway owes a caller (ms); past it the session counts as stalled. */
export const STALL_MS = 15_000;
const FRAME_MS = 20;
/** Share of turns on a browser socket that start with a malformed command. */
const PROVOKE_RATE = 0.03;
/** A phone reply is over once the line has been quiet this long (ms). */
const PHONE_QUIET_MS = 400;
/** Loud μ-law (a constant at −12 dBFS), for phone "speech". */
const LOUD_MULAW = Buffer.from(encodeMulaw(new Int16Array(8000).fill(8000)));

/** What every session of a run counts into. */
export class Tally {
  readonly opened: Record<Kind, number> = { text: 0, pipeline: 0, s2s: 0, phone: 0 };
  readonly turns: Record<Kind, number> = { text: 0, pipeline: 0, s2s: 0, phone: 0 };
  /** Turns per session, for sessions that have ended. */
  readonly turnsPerSession: number[] = [];
  /** Sessions that ended before the run's end (and were replaced). */
  churned = 0;
  readonly endings = { close: 0, cut: 0, drop: 0 };
  /** [ms since the run began, kind index, latency ms] per turn. */
  readonly latencies: number[] = [];
  bargeIns = 0;
  /** Barge-in attempts whose reply finished first (no cancel): timing, not an error. */
  bargeMissed = 0;
  cancels = 0;
  toolCalls = 0;
  /** Malformed commands sent on purpose, and the `error.reported` they earned. */
  provokedSent = 0;
  provoked = 0;
  stalls = 0;
  readonly errors = new Map<string, { count: number; example: string; atS: number }>();
  readonly #began = monoMs();

  /** ms since the tally began (the run's clock). */
  now(): number {
    return monoMs() - this.#began;
  }

  /** An unexpected error; `key` groups repeats (no client or turn numbers in it). */
  error(key: string, example = key): void {
    const entry = this.errors.get(key);
    if (entry !== undefined) entry.count += 1;
    else this.errors.set(key, { count: 1, example, atS: this.now() / 1000 });
  }

  get errorCount(): number {
    let n = 0;
    for (const { count } of this.errors.values()) n += count;
    return n;
  }
}

/** What a session needs from the runner. */
export interface SessionEnv {
  readonly urls: SoakUrls;
  readonly tally: Tally;
  /** Has the bench STT in the gateway say `turn`'s final for `client`. */
  final(client: number, turn: number): void;
  /** True once the run is over: sessions finish their turn and close. */
  stopping(): boolean;
}

class Stall extends Error {}

type Event = { readonly type: string } & Record<string, unknown>;
type Ending = "close" | "cut" | "drop";

interface Driver {
  greet(): Promise<void>;
  /** One turn; resolves true when the caller's speech already began the next one (a barge-in). */
  turn(turn: number, spoken: boolean): Promise<boolean>;
  /** Starts `turn` and hangs up once its reply is under way. */
  cut(turn: number): Promise<void>;
  close(ending: "close" | "drop"): Promise<void>;
}

const KIND_INDEX: Record<Kind, number> = { text: 0, pipeline: 1, s2s: 2, phone: 3 };
const is =
  (...types: string[]) =>
  (event: Event): boolean =>
    types.includes(event.type);

/** A waiter with a deadline; a rejection nobody awaits is not an unhandled one. */
function deadline<T>(register: (resolve: (value: T) => void, reject: (error: Error) => void) => () => void, what: string): Promise<T> {
  let unregister = (): void => undefined;
  const promise = new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      unregister();
      reject(new Stall(`stalled: no ${what} within ${STALL_MS / 1000} s`));
    }, STALL_MS);
    unregister = register(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
  promise.catch(() => undefined);
  return promise;
}

// ── a mic ───────────────────────────────────────────────────────────────────────────────

/** A 20 ms frame every 20 ms (out of phase with other callers'), speech when asked. */
class Mic {
  readonly #send: (frame: Buffer) => void;
  readonly #speech: Buffer;
  readonly #silence: Buffer;
  #timer: NodeJS.Timeout | undefined;
  #left = 0;
  #spoken: (() => void) | undefined;

  constructor(client: number, send: (frame: Buffer) => void) {
    this.#send = send;
    this.#speech = micFrame(client, true);
    this.#silence = micFrame(client, false);
    this.#timer = setTimeout(() => (this.#timer = setInterval(() => this.#tick(), FRAME_MS)), Math.random() * FRAME_MS);
  }

  /** Resolves once `frames` frames of speech have gone out. */
  speak(frames: number): Promise<void> {
    this.#left = frames;
    return new Promise((resolve) => (this.#spoken = resolve));
  }

  stop(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#timer);
    this.#spoken?.();
  }

  #tick(): void {
    const speaking = this.#left > 0;
    this.#send(speaking ? this.#speech : this.#silence);
    if (!speaking) return;
    this.#left -= 1;
    if (this.#left === 0) this.#spoken?.();
  }
}

// ── a browser socket (text, pipeline, s2s) ──────────────────────────────────────────────

class Browser {
  readonly ws: WebSocket;
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  /**
   * The greeting's `reply.completed`, waited for from the start: the upgrade response and the first
   * frames can arrive in one read, so they are dispatched before `open` has resumed anyone.
   */
  readonly greeted: Promise<Event>;
  /** The last `agent-transcript.committed` text. */
  committed = "";
  toolsCompleted = 0;
  #closing = false;
  #provoked = 0;
  readonly #waiters = new Set<{ readonly match: (event: Event | "audio") => boolean; readonly resolve: (event: Event | "audio") => void; readonly reject: (error: Error) => void }>();
  readonly #fail: (key: string, example?: string) => void;
  readonly #tally: Tally;

  constructor(url: string, tally: Tally, fail: (key: string, example?: string) => void) {
    this.#tally = tally;
    this.#fail = fail;
    this.ws = new WebSocket(url, { perMessageDeflate: false });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
    });
    this.opened.catch(() => undefined);
    this.closed = new Promise((resolve) =>
      this.ws.once("close", (code, reason) => {
        if (!this.#closing) fail(`the gateway closed the socket (${code} ${reason.toString()})`);
        else if (code !== 1000 && code !== 1005 && code !== 1006) fail(`closed with ${code} ${reason.toString()} after the caller's close`);
        for (const waiter of this.#waiters) waiter.reject(new Error("socket closed"));
        this.#waiters.clear();
        resolve();
      }),
    );
    this.ws.on("error", (err) => {
      if (!this.#closing) fail(`socket error: ${err.message}`);
    });
    this.ws.on("message", (data, isBinary) => this.#receive(data as Buffer, isBinary));
    this.greeted = this.wait(is("reply.completed"), "greeting reply.completed");
  }

  send(command: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(command));
  }

  sendAudio(frame: Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame);
  }

  wait(match: (event: Event) => boolean, what: string): Promise<Event> {
    return deadline<Event | "audio">((resolve, reject) => {
      const waiter = { match: (e: Event | "audio") => e !== "audio" && match(e), resolve, reject };
      this.#waiters.add(waiter);
      return () => this.#waiters.delete(waiter);
    }, what) as Promise<Event>;
  }

  audio(what: string): Promise<void> {
    return deadline<Event | "audio">((resolve, reject) => {
      const waiter = { match: (e: Event | "audio") => e === "audio", resolve, reject };
      this.#waiters.add(waiter);
      return () => this.#waiters.delete(waiter);
    }, what).then(() => undefined);
  }

  /** Sometimes, a malformed `user_text`: it must earn one non-fatal `protocol` error before the turn ends. */
  maybeProvoke(): void {
    if (Math.random() >= PROVOKE_RATE) return;
    this.#provoked += 1;
    this.#tally.provokedSent += 1;
    this.send({ type: "user_text" });
  }

  /** At a turn's end: every malformed command so far was answered. */
  checkProvoked(): void {
    if (this.#provoked > 0) this.#fail("a malformed command earned no error.reported");
    this.#provoked = 0;
  }

  async close(ending: "close" | "drop"): Promise<void> {
    this.#closing = true;
    if (ending === "drop") this.ws.terminate();
    else if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000, "soak caller done");
    await Promise.race([this.closed, sleep(5000)]);
    if (this.ws.readyState !== WebSocket.CLOSED) {
      this.#fail("the socket did not close within 5 s of the caller's close");
      this.ws.terminate();
    }
  }

  #dispatch(event: Event | "audio"): void {
    for (const waiter of this.#waiters) {
      if (!waiter.match(event)) continue;
      this.#waiters.delete(waiter);
      waiter.resolve(event);
    }
  }

  #receive(data: Buffer, isBinary: boolean): void {
    if (isBinary) return this.#dispatch("audio");
    const event = JSON.parse(data.toString("utf8")) as Event;
    if (event.type === "error.reported") {
      if (event.code === "protocol" && event.fatal === false && this.#provoked > 0) {
        this.#provoked -= 1;
        this.#tally.provoked += 1;
      } else {
        this.#fail(`error.reported ${String(event.code)}${event.fatal === true ? " (fatal)" : ""}: ${String(event.message).slice(0, 120)}`);
      }
    } else if (event.type === "agent-transcript.committed") {
      this.committed = String(event.text);
    } else if (event.type === "tool.completed") {
      this.toolsCompleted += 1;
      if (event.isError === true) this.#fail(`tool.completed with an error: ${String(event.result).slice(0, 120)}`);
    }
    this.#dispatch(event);
  }
}

/** Shared by the browser kinds: the greeting, the reply's end and its checks. */
abstract class BrowserDriver implements Driver {
  readonly b: Browser;
  readonly client: number;
  readonly env: SessionEnv;
  readonly kind: Kind;
  readonly fail: (key: string, example?: string) => void;

  constructor(kind: Kind, b: Browser, client: number, env: SessionEnv, fail: (key: string, example?: string) => void) {
    this.kind = kind;
    this.b = b;
    this.client = client;
    this.env = env;
    this.fail = fail;
  }

  async greet(): Promise<void> {
    await this.b.greeted;
  }

  abstract turn(turn: number, spoken: boolean): Promise<boolean>;
  abstract cut(turn: number): Promise<void>;

  close(ending: "close" | "drop"): Promise<void> {
    return this.b.close(ending);
  }

  latency(from: number): void {
    this.env.tally.latencies.push(this.env.tally.now(), KIND_INDEX[this.kind], monoMs() - from);
  }

  /** A reply that ran to its end: it says whose turn it answered; a tool turn settled its call. */
  completed(end: Event, turn: number, toolsBefore: number, wantTool: boolean, checkTag = true): void {
    if (end.type !== "reply.completed") return this.fail(`${end.type} that the caller did not ask for`);
    if (checkTag && !this.b.committed.includes(replyTag(this.client, turn))) {
      this.fail("a reply committed without its turn's tag (cross-talk or a stale reply)", `client ${this.client} turn ${turn}: ${JSON.stringify(this.b.committed.slice(0, 80))}`);
    }
    if (wantTool) {
      if (this.b.toolsCompleted === toolsBefore) this.fail("a tool turn without tool.completed");
      else this.env.tally.toolCalls += 1;
    }
    this.b.checkProvoked();
  }
}

class TextDriver extends BrowserDriver {
  async turn(turn: number): Promise<boolean> {
    const intent = intentOf(this.client, turn);
    this.b.maybeProvoke();
    this.b.committed = "";
    const tools = this.b.toolsCompleted;
    const first = this.b.wait(is("agent-transcript.updated"), "agent-transcript.updated");
    const done = this.b.wait(is("reply.completed", "reply.cancelled"), "reply end");
    const t0 = monoMs();
    this.b.send({ type: "user_text", text: userLine(this.client, turn) });
    await first;
    this.latency(t0);
    if (intent === "long") {
      const cancelled = this.b.wait(is("reply.cancelled"), "reply.cancelled after cancel");
      this.b.send({ type: "cancel" });
      await Promise.all([cancelled, done]);
      this.env.tally.cancels += 1;
      this.b.checkProvoked();
      return false;
    }
    this.completed(await done, turn, tools, intent === "tool");
    return false;
  }

  async cut(turn: number): Promise<void> {
    const first = this.b.wait(is("agent-transcript.updated"), "agent-transcript.updated");
    this.b.send({ type: "user_text", text: userLine(this.client, turn) });
    await first;
  }
}

/** A browser session that speaks: a mic streaming all along, and barge-ins on the long replies. */
abstract class VoiceDriver extends BrowserDriver {
  readonly mic: Mic;

  constructor(kind: "pipeline" | "s2s", b: Browser, client: number, env: SessionEnv, fail: (key: string, example?: string) => void) {
    super(kind, b, client, env, fail);
    this.mic = new Mic(client, (frame) => b.sendAudio(frame));
  }

  /** Speak `frames` of speech `afterMs` into the reply, tally whether it cut the reply, and say the next turn is already spoken. */
  protected async bargeIn(afterMs: number, frames: number, done: Promise<Event>): Promise<true> {
    await sleep(afterMs);
    await this.mic.speak(frames);
    const end = await done;
    if (end.type === "reply.cancelled") this.env.tally.bargeIns += 1;
    else this.env.tally.bargeMissed += 1;
    this.b.checkProvoked();
    return true;
  }

  override close(ending: "close" | "drop"): Promise<void> {
    this.mic.stop();
    return super.close(ending);
  }
}

class PipelineDriver extends VoiceDriver {
  constructor(b: Browser, client: number, env: SessionEnv, fail: (key: string, example?: string) => void) {
    super("pipeline", b, client, env, fail);
  }

  async turn(turn: number, spoken: boolean): Promise<boolean> {
    const intent = intentOf(this.client, turn);
    this.b.maybeProvoke();
    if (!spoken) await this.mic.speak(10);
    this.b.committed = "";
    const tools = this.b.toolsCompleted;
    const first = this.b.audio("reply audio");
    const done = this.b.wait(is("reply.completed", "reply.cancelled"), "reply end");
    const t0 = monoMs();
    this.env.final(this.client, turn);
    await first;
    this.latency(t0);
    if (intent === "long") return this.bargeIn(300, 30, done);
    this.completed(await done, turn, tools, intent === "tool");
    return false;
  }

  async cut(turn: number): Promise<void> {
    await this.mic.speak(10);
    const first = this.b.audio("reply audio");
    this.env.final(this.client, turn);
    await first;
  }
}

class S2sDriver extends VoiceDriver {
  constructor(b: Browser, client: number, env: SessionEnv, fail: (key: string, example?: string) => void) {
    super("s2s", b, client, env, fail);
  }

  async turn(turn: number, spoken: boolean): Promise<boolean> {
    const intent = intentOf(this.client, turn);
    this.b.maybeProvoke();
    const tools = this.b.toolsCompleted;
    if (!spoken) await this.mic.speak(intent === "tool" ? 25 : 10);
    const first = this.b.audio("reply audio");
    const done = this.b.wait(is("reply.completed", "reply.cancelled"), "reply end");
    const t0 = monoMs();
    await first;
    this.latency(t0);
    if (intent === "long") return this.bargeIn(200, 15, done);
    // The service's transcript is not the caller's line: no tag to check.
    this.completed(await done, turn, tools, intent === "tool" && !spoken, false);
    return false;
  }

  async cut(): Promise<void> {
    await this.mic.speak(10);
    await this.b.audio("reply audio");
  }
}

// ── a phone call (Twilio media stream) ──────────────────────────────────────────────────

class PhoneDriver implements Driver {
  readonly carrier: FakeCarrier;
  readonly env: SessionEnv;
  readonly client: number;
  #closing = false;
  #lastMedia = 0;
  readonly #media = new Set<{ readonly resolve: () => void; readonly reject: (error: Error) => void }>();

  constructor(carrier: FakeCarrier, client: number, env: SessionEnv, fail: (key: string, example?: string) => void) {
    this.carrier = carrier;
    this.client = client;
    this.env = env;
    carrier.ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary || !data.includes('"event":"media"')) return;
      this.#lastMedia = monoMs();
      for (const waiter of this.#media) waiter.resolve();
      this.#media.clear();
    });
    void carrier.closed.then(({ code, reason }) => {
      if (!this.#closing) fail(`the gateway ended the call (${code} ${reason})`);
      for (const waiter of this.#media) waiter.reject(new Error("call closed"));
      this.#media.clear();
    });
  }

  static async dial(url: string, client: number, env: SessionEnv, fail: (key: string, example?: string) => void): Promise<PhoneDriver> {
    return new PhoneDriver(await FakeCarrier.dial({ url }), client, env, fail);
  }

  media(what: string): Promise<void> {
    return deadline<void>((resolve, reject) => {
      const waiter = { resolve: () => resolve(), reject };
      this.#media.add(waiter);
      return () => this.#media.delete(waiter);
    }, what);
  }

  /** The reply is over: no agent audio for `PHONE_QUIET_MS`, and nothing left to play. */
  async quiet(): Promise<void> {
    const began = monoMs();
    while (monoMs() - this.#lastMedia < PHONE_QUIET_MS || this.carrier.bufferedMs > 0) {
      if (monoMs() - began > STALL_MS) throw new Stall(`stalled: the phone reply did not end within ${STALL_MS / 1000} s`);
      if (this.carrier.ws.readyState !== WebSocket.OPEN) throw new Error("call closed");
      await sleep(50);
    }
  }

  async speak(ms: number): Promise<void> {
    this.carrier.say(LOUD_MULAW.subarray(0, ms * 8));
    await this.carrier.said();
  }

  async greet(): Promise<void> {
    await this.media("greeting audio");
    await this.quiet();
  }

  async turn(turn: number, spoken: boolean): Promise<boolean> {
    const intent = intentOf(this.client, turn);
    if (!spoken) await this.speak(intent === "tool" ? 500 : 200);
    const first = this.media("reply audio");
    const t0 = monoMs();
    await first;
    this.env.tally.latencies.push(this.env.tally.now(), KIND_INDEX.phone, monoMs() - t0);
    if (intent === "long") {
      await sleep(200);
      const clears = this.carrier.clears;
      await this.speak(300);
      if (this.carrier.clears > clears) this.env.tally.bargeIns += 1;
      else this.env.tally.bargeMissed += 1;
      return true;
    }
    await this.quiet();
    if (intent === "tool" && !spoken) this.env.tally.toolCalls += 1;
    return false;
  }

  async cut(): Promise<void> {
    await this.speak(200);
    await this.media("reply audio");
  }

  async close(ending: "close" | "drop"): Promise<void> {
    this.#closing = true;
    if (ending === "drop") this.carrier.close();
    else this.carrier.hangUp();
    await Promise.race([this.carrier.closed, sleep(5000)]);
  }
}

// ── one session, connect to close ───────────────────────────────────────────────────────

function pickEnding(): Ending {
  const r = Math.random();
  return r < 0.7 ? "close" : r < 0.85 ? "cut" : "drop";
}

async function connect(kind: Kind, client: number, env: SessionEnv, fail: (key: string, example?: string) => void): Promise<Driver> {
  if (kind === "phone") return PhoneDriver.dial(env.urls.phone, client, env, fail);
  const b = new Browser(env.urls[kind], env.tally, fail);
  await b.opened;
  if (kind === "text") return new TextDriver("text", b, client, env, fail);
  if (kind === "pipeline") return new PipelineDriver(b, client, env, fail);
  return new S2sDriver(b, client, env, fail);
}

/**
 * One session of `kind` as caller `client` (unique in the run): greet, take turns for
 * `lifetimeMs` (at least one), leave. Never throws: what goes wrong is in the tally.
 */
export async function runSession(kind: Kind, client: number, env: SessionEnv, lifetimeMs: number): Promise<void> {
  const { tally } = env;
  tally.opened[kind] += 1;
  const fail = (key: string, example?: string): void => tally.error(`${kind}: ${key}`, example === undefined ? undefined : `${kind}: ${example}`);
  const began = monoMs();
  let turns = 0;
  let driver: Driver | undefined;
  try {
    driver = await connect(kind, client, env, fail);
    await driver.greet();
    let spoken = false;
    while (turns === 0 || (monoMs() - began < lifetimeMs && !env.stopping())) {
      spoken = await driver.turn(turns + 1, spoken);
      turns += 1;
      tally.turns[kind] += 1;
      if (!spoken) await sleep(300 + Math.random() * 900);
    }
    const ending = env.stopping() ? "close" : pickEnding();
    tally.endings[ending] += 1;
    if (ending === "cut") await driver.cut(turns + 1);
    await driver.close(ending === "drop" ? "drop" : "close");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Stall) tally.stalls += 1;
    // A close the gateway started is already counted; what it broke off is not another error.
    if (message !== "socket closed" && message !== "call closed") fail(message.replace(/\d+/g, "N"), message);
    await driver?.close("drop");
  }
  tally.turnsPerSession.push(turns);
  if (!env.stopping()) tally.churned += 1;
}
