// The agent's `events` observers (src/session/observers.ts): what they receive, when, and how a
// throwing, rejecting, hanging or slow observer is kept off the session's path.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { virtualClock, type Clock } from "../../../src/clock.js";
import { createLogger } from "../../../src/log.js";
import { agent, type AgentEvents, type ObservedEvent, type ResolvedAgentDef, type SessionInfo } from "../../../src/manifest/index.js";
import { EventObservers, MAX_OBSERVER_CALLS_IN_FLIGHT, OBSERVER_BUDGET_MS, SLOW_OBSERVER_MS, type EventObserversOptions } from "../../../src/session/observers.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";
import { stamp, type EventBody } from "../../../src/transport/protocol.js";

const INFO: SessionInfo = { sessionId: "s1", mode: "text" };

function capture(): { log: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) }) });
  return { log, lines };
}

/** Observers under a virtual clock, with their deferred drains counted. */
function observe(events: AgentEvents, options: Partial<EventObserversOptions> = {}) {
  const clock = virtualClock();
  const { log, lines } = capture();
  let deferred = 0;
  const observers = EventObservers.for(events, INFO, {
    clock,
    log,
    defer: (run) => {
      deferred += 1;
      setImmediate(run);
    },
    ...options,
  });
  if (observers === undefined) throw new Error("expected observers");
  return { observers, clock, lines, deferred: () => deferred };
}

const delta = (text: string): EventBody => ({ type: "agent-transcript.updated", text });

describe("event observers receive the events of their type", () => {
  it("after the emit, never during it: each gets a deep-frozen copy of the stamped event, with {sessionId, mode}", async () => {
    const seen: [ObservedEvent, SessionInfo][] = [];
    const { observers, clock } = observe({ "tool.called": (event, info) => void seen.push([event, info]) });
    const body: EventBody = { type: "tool.called", toolCallId: "c1", toolName: "lookup", args: { order: { id: 42 } } };
    const sent = stamp(body, clock.now());
    observers.observe(body, sent);
    expect(seen).toEqual([]);
    await clock.advance(0);
    expect(seen).toHaveLength(1);
    const [event, info] = seen[0]!;
    expect(event).toEqual(sent);
    expect(info).toEqual(INFO);
    expect(Object.isFrozen(event)).toBe(true);
    expect(Object.isFrozen((event as { args: { order: object } }).args.order)).toBe(true);
    expect(Object.isFrozen(event.meta)).toBe(true);
    // The client's event is not the observer's: neither frozen nor reachable from it.
    expect(Object.isFrozen(sent)).toBe(false);
    expect(() => ((event as { args: { order: { id: number } } }).args.order.id = 1)).toThrow(TypeError);
    expect(sent).toMatchObject({ args: { order: { id: 42 } } });
  });

  it("of their own type only; '*' sees every event; each in emit order, in the order of their keys", async () => {
    const calls: string[] = [];
    const { observers, clock } = observe({
      "reply.completed": (event) => void calls.push(`reply:${event.type}`),
      "*": (event) => void calls.push(`*:${event.type}`),
      "tool.called": (event) => void calls.push(`tool:${event.toolName}`),
    });
    for (const body of [delta("Hi"), { type: "reply.completed" }, { type: "tool.called", toolCallId: "c", toolName: "t", args: {} }] as EventBody[]) observers.observe(body, stamp(body, clock.now()));
    await clock.advance(0);
    expect(calls).toEqual(["*:agent-transcript.updated", "reply:reply.completed", "*:reply.completed", "*:tool.called", "tool:t"]);
  });

  it("on a link that shows no events (a phone call), the event is stamped for them on the session's clock", async () => {
    const seen: ObservedEvent[] = [];
    const { observers, clock } = observe({ "audio.completed": (event) => void seen.push(event) });
    await clock.advance(1234);
    observers.observe({ type: "audio.completed" }, undefined);
    await clock.advance(0);
    expect(seen).toEqual([{ type: "audio.completed", meta: { id: expect.stringMatching(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/) as string, at: clock.now() } }]);
  });

  it("see session.configured without its resume key: the key that takes a live session over stays with the client", async () => {
    const seen: ObservedEvent[] = [];
    const { observers, clock } = observe({ "session.configured": (event) => void seen.push(event) });
    const body: EventBody = { type: "session.configured", audioFormat: "pcm16", sampleRate: 16000, ttsSampleRate: 24000, sessionId: "s1", resumeKey: "secret-key", mode: "text" };
    const sent = stamp(body, clock.now());
    observers.observe(body, sent);
    await clock.advance(0);
    expect(seen).toEqual([{ ...sent, resumeKey: "[redacted]" }]);
    expect(sent).toMatchObject({ resumeKey: "secret-key" });
  });
});

describe("an event type nobody observes costs nothing per event (by construction)", () => {
  it("no observers at all, or only empty keys: the session holds no observers", () => {
    const options = { clock: virtualClock(), log: capture().log };
    expect(EventObservers.for(undefined, INFO, options)).toBeUndefined();
    expect(EventObservers.for({}, INFO, options)).toBeUndefined();
    expect(EventObservers.for({ "tool.called": undefined }, INFO, options)).toBeUndefined();
  });

  it("observers of other types: no stamp, no copy, no queue, no drain for a transcript delta", async () => {
    let reads = 0;
    const base = virtualClock();
    const clock: Clock = { ...base, now: () => (reads += 1, base.now()) };
    const called: string[] = [];
    const { observers, deferred } = observe({ "tool.completed": (event) => void called.push(event.type) }, { clock });
    expect(observers.observedTypes).toEqual(["tool.completed"]);
    const body = delta("Hello");
    for (let i = 0; i < 10_000; i++) observers.observe(body, undefined);
    await base.advance(0);
    expect({ reads, deferred: deferred(), frozen: Object.isFrozen(body), calls: observers.stats.calls, called }).toEqual({ reads: 0, deferred: 0, frozen: false, calls: 0, called: [] });
  });

  it("a burst of observed events in one task is drained once, not once per event", async () => {
    let count = 0;
    const { observers, clock, deferred } = observe({ "agent-transcript.updated": () => void (count += 1) });
    for (let i = 0; i < 100; i++) observers.observe(delta(`${i}`), undefined);
    await clock.advance(0);
    expect({ count, deferred: deferred() }).toEqual({ count: 100, deferred: 1 });
  });
});

describe("an observer that misbehaves never delays or breaks the session", () => {
  it("a throw or a rejection is logged and the other observers still run", async () => {
    const ran: string[] = [];
    const { observers, clock, lines } = observe({
      "reply.completed": () => {
        throw new Error("boom");
      },
      "reply.cancelled": () => Promise.reject(new Error("webhook down")),
      "*": (event) => void ran.push(event.type),
    });
    for (const type of ["reply.completed", "reply.cancelled"] as const) observers.observe({ type }, undefined);
    await clock.advance(0);
    expect(ran).toEqual(["reply.completed", "reply.cancelled"]);
    expect(observers.stats).toMatchObject({ calls: 4, failed: 2 });
    expect(lines.filter((l) => l.msg === "an event observer failed")[0]).toMatchObject({ level: 40, observer: "reply.completed", eventType: "reply.completed", err: "boom" });
  });

  it("a thousand throws log one line per interval, across every session of the agent, the rest counted", async () => {
    const events: AgentEvents = {
      "reply.completed": () => {
        throw new Error("boom");
      },
    };
    const clock = virtualClock();
    const { log, lines } = capture();
    const sessions = [0, 1].map((i) => EventObservers.for(events, { sessionId: `s${i}`, mode: "text" }, { clock, log })!);
    for (let i = 0; i < 500; i++) for (const session of sessions) session.observe({ type: "reply.completed" }, undefined);
    await clock.advance(0);
    expect(lines.filter((l) => l.msg === "an event observer failed")).toHaveLength(1);
    await clock.advance(10_000);
    sessions[0]!.observe({ type: "reply.completed" }, undefined);
    await clock.advance(0);
    expect(lines.filter((l) => l.msg === "an event observer failed").at(-1)).toMatchObject({ suppressed: 999 });
  });

  it("an async call that hangs is abandoned after its budget and logged; the session's next events still reach the others", async () => {
    const seen: string[] = [];
    const { observers, clock, lines } = observe({
      "reply.completed": () => new Promise<void>(() => {}),
      "*": (event) => void seen.push(event.type),
    });
    observers.observe({ type: "reply.completed" }, undefined);
    await clock.advance(OBSERVER_BUDGET_MS - 1);
    expect(observers.stats.abandoned).toBe(0);
    await clock.advance(1);
    expect(observers.stats.abandoned).toBe(1);
    expect(lines.find((l) => l.msg === "an event observer ran past its budget; abandoned")).toMatchObject({ observer: "reply.completed", budgetMs: OBSERVER_BUDGET_MS });
    observers.observe({ type: "reply.cancelled" }, undefined);
    await clock.advance(0);
    expect(seen).toEqual(["reply.completed", "reply.cancelled"]);
  });

  it("an async call that settles within its budget leaves no timer behind", async () => {
    const { observers, clock } = observe({ "reply.completed": () => clock.sleep(100) });
    observers.observe({ type: "reply.completed" }, undefined);
    await clock.advance(200);
    expect(clock.pending()).toBe(0);
    expect(observers.stats).toMatchObject({ calls: 1, abandoned: 0, failed: 0 });
  });

  it("a hung observer holds at most MAX_OBSERVER_CALLS_IN_FLIGHT promises: past them its calls are dropped and counted, and come back as they settle", async () => {
    const release: (() => void)[] = [];
    let other = 0;
    const { observers, clock, lines } = observe({
      "agent-transcript.updated": () => new Promise<void>((resolve) => release.push(resolve)),
      "*": () => void (other += 1),
    });
    for (let i = 0; i < MAX_OBSERVER_CALLS_IN_FLIGHT + 10; i++) observers.observe(delta(`${i}`), undefined);
    await clock.advance(OBSERVER_BUDGET_MS);
    expect(release).toHaveLength(MAX_OBSERVER_CALLS_IN_FLIGHT);
    expect(observers.stats).toMatchObject({ dropped: 10, abandoned: MAX_OBSERVER_CALLS_IN_FLIGHT });
    expect(other).toBe(MAX_OBSERVER_CALLS_IN_FLIGHT + 10);
    expect(lines.filter((l) => l.msg === "event observer calls dropped")).toMatchObject([{ reason: "too many in flight", observer: "agent-transcript.updated" }]);
    for (const resolve of release.splice(0, 5)) resolve();
    await clock.advance(0);
    for (let i = 0; i < 6; i++) observers.observe(delta("again"), undefined);
    await clock.advance(0);
    expect(release).toHaveLength(MAX_OBSERVER_CALLS_IN_FLIGHT);
    expect(observers.stats.dropped).toBe(11);
  });

  it("calls queued in one task past the queue's bound are dropped and counted", async () => {
    let count = 0;
    const { observers, clock } = observe({ "agent-transcript.updated": () => void (count += 1) }, { maxQueued: 10 });
    for (let i = 0; i < 25; i++) observers.observe(delta(`${i}`), undefined);
    await clock.advance(0);
    expect({ count, dropped: observers.stats.dropped }).toEqual({ count: 10, dropped: 15 });
  });

  it("a synchronous call that holds the event loop cannot be preempted: it is measured and logged", async () => {
    const base = virtualClock();
    let now = base.now();
    const clock: Clock = { ...base, now: () => now };
    const { observers, lines } = observe({ "reply.completed": () => void (now += SLOW_OBSERVER_MS + 5) }, { clock });
    observers.observe({ type: "reply.completed" }, undefined);
    await base.advance(0);
    expect(observers.stats.slow).toBe(1);
    expect(lines.find((l) => l.msg === "an event observer held the event loop")).toMatchObject({ observer: "reply.completed", heldMs: SLOW_OBSERVER_MS + 5 });
  });

  it("at the session's end, one line sums up what misbehaved; none when nothing did", async () => {
    const quiet = observe({ "reply.completed": () => {} });
    quiet.observers.observe({ type: "reply.completed" }, undefined);
    await quiet.clock.advance(0);
    quiet.observers.ended();
    expect(quiet.lines).toEqual([]);
    const noisy = observe({
      "reply.completed": () => {
        throw new Error("boom");
      },
    });
    noisy.observers.observe({ type: "reply.completed" }, undefined);
    await noisy.clock.advance(0);
    noisy.observers.ended();
    expect(noisy.lines.at(-1)).toMatchObject({ msg: "event observers misbehaved in this session", observers: { calls: 1, failed: 1, abandoned: 0, dropped: 0, slow: 0 } });
  });
});

describe("through a session", () => {
  it("an s2s phone session's observers get its events with {sessionId, mode: 's2s'}, the emit order kept", async () => {
    const seen: { type: string; info: SessionInfo }[] = [];
    const def = agent({ name: "phone", greeting: "Welcome.", s2s: { kind: "openai-realtime", options: {} }, telephony: true, events: { "*": (event, info) => void seen.push({ type: event.type, info }) } });
    const { clock, link, fake, session } = await s2sSession(def as ResolvedAgentDef, { transport: "twilio" });
    const greeting = fake.start(true);
    fake.speak(greeting, "Welcome.", 200);
    fake.done(greeting, "completed", true);
    await clock.advance(300);
    expect(seen.map((s) => s.type)).toEqual(link.types());
    expect(seen.map((s) => s.type)).toEqual(expect.arrayContaining(["session.configured", "agent-transcript.committed", "reply.completed"]));
    expect(seen.every((s) => s.info.sessionId === session.id && s.info.mode === "s2s")).toBe(true);
  });
});
