// The STT reconnect decorator through its own seam: a fake provider whose connections a test drops
// and whose opens it can refuse or hold (docs/protocol.md "STT drops", "Limits").
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { GatewayError } from "../../../src/errors.js";
import type { SttEvents, SttOpenOptions, SttProvider, SttSession } from "../../../src/pipeline/stt-port.js";
import { reconnectingStt, STT_RECONNECTS } from "../../../src/pipeline/stt-reconnect.js";

const RATE = 16000;
/** `ms` of 16 kHz PCM16 (32 bytes a millisecond), every byte `fill`, so the replay's order shows. */
const chunk = (fill: number, ms = 100): Uint8Array => new Uint8Array(32 * ms).fill(fill);

class Connection implements SttSession {
  readonly endpointing = true;
  droppedBytes = 0;
  finalizedAudioMs: number | undefined = undefined;
  /** The first byte of each chunk received, in order. */
  readonly received: number[] = [];
  finalizeCalls = 0;
  closed = false;
  constructor(readonly events: SttEvents) {}
  sendAudio(pcm: Uint8Array): void {
    if (!this.closed) this.received.push(pcm[0] ?? -1);
  }
  finalize(): void {
    this.finalizeCalls += 1;
  }
  close(): Promise<void> {
    this.closed = true;
    this.events.closed({ expected: true });
    return Promise.resolve();
  }
  drop(): void {
    this.closed = true;
    this.events.closed({ expected: false });
  }
}

class Provider implements SttProvider {
  readonly kind = "fake";
  readonly connections: Connection[] = [];
  opens = 0;
  refuse = 0;
  /** Thrown by the next opens instead of a plain refusal. */
  refuseWith: Error | undefined;
  /** While set, opens wait for it. */
  hold: Promise<void> | undefined;
  async open(_options: SttOpenOptions, events: SttEvents): Promise<SttSession> {
    this.opens += 1;
    if (this.hold !== undefined) await this.hold;
    if (this.refuseWith !== undefined) throw this.refuseWith;
    if (this.refuse > 0) {
      this.refuse -= 1;
      throw new Error("connection refused");
    }
    const connection = new Connection(events);
    this.connections.push(connection);
    return connection;
  }
  get current(): Connection {
    const connection = this.connections.at(-1);
    if (connection === undefined) throw new Error("nothing opened");
    return connection;
  }
}

async function setup() {
  const clock = virtualClock();
  const provider = new Provider();
  const seen = { partials: [] as string[], finals: [] as string[], closed: [] as boolean[], reconnected: 0, gaveUp: [] as GatewayError[] };
  const events: SttEvents = {
    partial: (text) => seen.partials.push(text),
    final: (text) => seen.finals.push(text),
    speechStarted: () => {},
    error: () => {},
    closed: (info) => seen.closed.push(info.expected),
  };
  const stt = reconnectingStt(provider, {
    clock,
    log: { debug: () => {}, warn: () => {} },
    reconnected: () => (seen.reconnected += 1),
    gaveUp: (error) => seen.gaveUp.push(error),
  });
  const session = await stt.open({ sampleRate: RATE, minSilenceMs: 300, maxSilenceMs: 1200 }, events);
  return { clock, provider, seen, session };
}

describe("reconnectingStt", () => {
  it("replays the audio not yet finalized, in order, on the new connection, at once", async () => {
    const { clock, provider, seen, session } = await setup();
    session.sendAudio(chunk(1));
    session.sendAudio(chunk(2));
    provider.current.finalizedAudioMs = 100; // the final covers chunk 1; chunk 2 was in flight
    provider.current.events.final("one", { endOfTurn: false });
    session.sendAudio(chunk(3));
    const first = provider.current;
    first.drop();
    await clock.advance(0);
    expect(provider.connections).toHaveLength(2);
    expect(provider.current.received).toEqual([2, 3]);
    expect(seen.reconnected).toBe(1);

    // The new stream starts with the replay: its final at 100 ms covers chunk 2 only.
    session.sendAudio(chunk(4));
    provider.current.finalizedAudioMs = 100;
    provider.current.events.final("two", { endOfTurn: false });
    provider.current.drop();
    await clock.advance(0);
    expect(provider.current.received).toEqual([3, 4]);
    // A dropped connection's late events are not passed on.
    first.events.partial("stale", {});
    expect(seen.partials).toEqual([]);
    expect(seen.finals).toEqual(["one", "two"]);
    expect(seen.closed).toEqual([]);
  });

  it("counts the audio every connection dropped, a dropped connection's too, once", async () => {
    const { clock, provider, session } = await setup();
    provider.current.droppedBytes = 640;
    provider.current.drop();
    expect(session.droppedBytes).toBe(640);
    await clock.advance(0);
    provider.current.droppedBytes = 320;
    expect(session.droppedBytes).toBe(960);
  });

  it("a refused key on reconnect ends the session at once with the provider's own error (naming the variable), not after the budget", async () => {
    const { clock, provider, seen } = await setup();
    const refusal = new GatewayError("stt", "Deepgram refused the API key (HTTP 401): check DEEPGRAM_API_KEY", { fatal: true });
    provider.refuseWith = refusal;
    provider.current.drop();
    await clock.advance(0);
    expect(provider.opens).toBe(2);
    expect(seen.gaveUp).toEqual([refusal]);
    expect(seen.closed).toEqual([false]);
    await clock.advance(5000);
    expect(provider.opens).toBe(2);
  });

  it("sends audio and finalize to the current connection", async () => {
    const { clock, provider, session } = await setup();
    const first = provider.current;
    first.drop();
    await clock.advance(0);
    session.sendAudio(chunk(5));
    session.finalize();
    expect(provider.current).not.toBe(first);
    expect(provider.current.received).toEqual([5]);
    expect(provider.current.finalizeCalls).toBe(1);
    expect(first.finalizeCalls).toBe(0);
  });

  it("tries at once, then 250 and 500 ms later, and gives up once, fatally", async () => {
    const { clock, provider, seen } = await setup();
    provider.refuse = 10;
    const first = provider.current;
    first.drop();
    await clock.advance(0);
    expect(provider.opens).toBe(2);
    await clock.advance(249);
    expect(provider.opens).toBe(2);
    await clock.advance(1);
    expect(provider.opens).toBe(3);
    await clock.advance(500);
    expect(provider.opens).toBe(1 + STT_RECONNECTS);
    expect(seen.gaveUp).toHaveLength(1);
    expect(seen.gaveUp[0]).toMatchObject({ code: "connection", fatal: true, message: "speech recognition was lost and 3 reconnects failed" });
    expect(seen.closed).toEqual([false]);
    expect(seen.reconnected).toBe(0);
    // Nothing more: another drop report, or time, starts nothing.
    first.events.closed({ expected: false });
    await clock.advance(10_000);
    expect(provider.opens).toBe(1 + STT_RECONNECTS);
    expect(seen.gaveUp).toHaveLength(1);
  });

  it("a budget spent on one drop starts over once a reconnect succeeded", async () => {
    const { clock, provider, seen } = await setup();
    provider.refuse = 2;
    provider.current.drop();
    await clock.advance(750);
    expect(seen.reconnected).toBe(1);
    provider.refuse = 2;
    provider.current.drop();
    await clock.advance(750);
    expect(seen.reconnected).toBe(2);
    expect(seen.gaveUp).toEqual([]);
  });

  it("does not reconnect an expected close, and passes it on", async () => {
    const { clock, provider, seen } = await setup();
    provider.current.events.closed({ expected: true });
    await clock.advance(5000);
    expect(provider.opens).toBe(1);
    expect(seen.closed).toEqual([true]);
  });

  it("close() during a pending reconnect closes the connection it opens, and reports nothing", async () => {
    const { clock, provider, seen, session } = await setup();
    let release = (): void => {};
    provider.hold = new Promise((resolve) => (release = resolve));
    provider.current.drop();
    await clock.advance(0);
    expect(provider.opens).toBe(2);
    await session.close();
    release();
    await clock.advance(5000);
    expect(provider.connections).toHaveLength(2);
    expect(provider.connections.every((c) => c.closed)).toBe(true);
    expect(provider.current.received).toEqual([]);
    expect(provider.opens).toBe(2);
    expect(seen).toMatchObject({ reconnected: 0, gaveUp: [] });
  });

  it("close() during the wait between attempts stops the schedule", async () => {
    const { clock, provider, seen, session } = await setup();
    provider.refuse = 1;
    provider.current.drop();
    await clock.advance(0);
    expect(provider.opens).toBe(2);
    await session.close();
    await clock.advance(5000);
    expect(provider.opens).toBe(2);
    expect(seen).toMatchObject({ reconnected: 0, gaveUp: [] });
  });

  it("passes a failure of the first open through unchanged", async () => {
    const provider = new Provider();
    provider.refuse = 1;
    const stt = reconnectingStt(provider, { clock: virtualClock(), log: { debug: () => {}, warn: () => {} }, reconnected: () => {}, gaveUp: () => {} });
    const events: SttEvents = { partial: () => {}, final: () => {}, speechStarted: () => {}, error: () => {}, closed: () => {} };
    await expect(stt.open({ sampleRate: RATE, minSilenceMs: 300, maxSilenceMs: 1200 }, events)).rejects.toThrow("connection refused");
  });
});
