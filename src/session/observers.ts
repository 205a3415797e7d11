import type { Clock, Timer } from "../clock.js";
import { messageOf } from "../errors.js";
import { LogThrottle, type Logger } from "../log.js";
import { EVERY_EVENT, type AgentEvents, type ObservedEvent, type SessionInfo } from "../manifest/index.js";
import { EVENT_TYPES, stamp, type EventBody, type EventType, type ServerEvent } from "../transport/protocol.js";

/** How long one async observer call may run before the session stops waiting on it and logs it (ms). */
export const OBSERVER_BUDGET_MS = 5_000;
/**
 * Async calls of one observer a session may have unsettled at once, abandoned ones included (a
 * promise that never settles keeps its slot): a hung observer holds at most this many promises,
 * and its further calls are dropped and counted until some settle.
 */
export const MAX_OBSERVER_CALLS_IN_FLIGHT = 64;
/** Calls a session may have queued and not yet run (each holds its event's copy); past it, dropped and counted. */
export const MAX_QUEUED_OBSERVER_CALLS = 1_000;
/** A call that held the event loop this long (ms, on the session's clock) is logged: JS cannot preempt it. */
export const SLOW_OBSERVER_MS = 20;
/** What an observer sees in place of `session.configured`'s `resumeKey`. */
export const REDACTED = "[redacted]";

type AnyObserver = (event: ObservedEvent, info: SessionInfo) => unknown;

interface Observer {
  /** Its key in `events`: an event type, or "*". */
  readonly key: string;
  readonly fn: AnyObserver;
  /** Async calls started and not yet settled, abandoned ones included. */
  unsettled: number;
}

interface Call {
  readonly observer: Observer;
  readonly event: ObservedEvent;
}

/** What a session's observers came to: calls run, and the ones that failed, ran over, were dropped or held the loop. */
export interface ObserverStats {
  readonly calls: number;
  readonly failed: number;
  readonly abandoned: number;
  readonly dropped: number;
  readonly slow: number;
}

export interface EventObserversOptions {
  readonly clock: Clock;
  readonly log: Logger;
  /** Default OBSERVER_BUDGET_MS. */
  readonly budgetMs?: number;
  /** Default MAX_OBSERVER_CALLS_IN_FLIGHT. */
  readonly maxInFlight?: number;
  /** Default MAX_QUEUED_OBSERVER_CALLS. */
  readonly maxQueued?: number;
  /** Runs the queued calls later, off the session's path. Default `setImmediate`: after the current task, its promise jobs and pending I/O. */
  readonly defer?: (run: () => void) => void;
}

/**
 * One throttle per agent's observer table, shared by its sessions: an observer that throws in
 * every one of a thousand sessions writes one line per kind per interval, with the rest counted.
 */
const THROTTLES = new WeakMap<object, LogThrottle>();

/**
 * A session's event observers (the agent's `events`): each event the session emits is copied
 * once (the client's JSON, deep-frozen, the resume key redacted) and queued for the observers of
 * its type and of "*", which run after the emit — never awaited by the session. A throw or a
 * rejection is logged; an async call past its budget is abandoned and logged; calls past the
 * bounds are dropped and counted. An event type nobody observes costs one map lookup: no copy, no
 * stamp, no queue entry.
 */
export class EventObservers {
  readonly #byType: ReadonlyMap<EventType, readonly Observer[]>;
  readonly #info: SessionInfo;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #throttle: LogThrottle;
  readonly #budgetMs: number;
  readonly #maxInFlight: number;
  readonly #maxQueued: number;
  readonly #defer: (run: () => void) => void;
  #queue: Call[] = [];
  #scheduled = false;
  #stats = { calls: 0, failed: 0, abandoned: 0, dropped: 0, slow: 0 };

  /** The session's observers, or `undefined` when the agent has none (the session then does nothing per event). */
  static for(events: AgentEvents | undefined, info: SessionInfo, options: EventObserversOptions): EventObservers | undefined {
    if (events === undefined) return undefined;
    const observers = Object.entries(events as Readonly<Record<string, unknown>>).flatMap(([key, fn]): Observer[] =>
      typeof fn === "function" ? [{ key, fn: fn as AnyObserver, unsettled: 0 }] : [],
    );
    if (observers.length === 0) return undefined;
    let throttle = THROTTLES.get(events);
    if (throttle === undefined) {
      throttle = new LogThrottle(() => options.clock.now());
      THROTTLES.set(events, throttle);
    }
    return new EventObservers(observers, info, throttle, options);
  }

  private constructor(observers: readonly Observer[], info: SessionInfo, throttle: LogThrottle, options: EventObserversOptions) {
    const byType = new Map<EventType, readonly Observer[]>();
    for (const type of EVENT_TYPES) {
      const of = observers.filter((observer) => observer.key === type || observer.key === EVERY_EVENT);
      if (of.length > 0) byType.set(type, of);
    }
    this.#byType = byType;
    this.#info = Object.freeze({ sessionId: info.sessionId, mode: info.mode });
    this.#clock = options.clock;
    this.#log = options.log;
    this.#throttle = throttle;
    this.#budgetMs = options.budgetMs ?? OBSERVER_BUDGET_MS;
    this.#maxInFlight = options.maxInFlight ?? MAX_OBSERVER_CALLS_IN_FLIGHT;
    this.#maxQueued = options.maxQueued ?? MAX_QUEUED_OBSERVER_CALLS;
    this.#defer = options.defer ?? ((run) => void setImmediate(run));
  }

  /** Some observer of this session receives events of `type`. */
  observes(type: EventType): boolean {
    return this.#byType.has(type);
  }

  /** The event types some observer of this session receives. */
  get observedTypes(): readonly EventType[] {
    return [...this.#byType.keys()];
  }

  get stats(): ObserverStats {
    return { ...this.#stats };
  }

  /**
   * The session emitted `body`; `sent` is the event the link stamped for its client, or
   * `undefined` when the link shows no events (a phone call), in which case it is stamped here.
   */
  observe(body: EventBody, sent: ServerEvent | undefined): void {
    const observers = this.#byType.get(body.type);
    if (observers === undefined) return;
    const event = this.#copy(sent ?? stamp(body, this.#clock.now()));
    if (event === undefined) return;
    for (const observer of observers) {
      if (this.#queue.length >= this.#maxQueued) this.#drop(observer, event, "queue full");
      else this.#queue.push({ observer, event });
    }
    if (!this.#scheduled && this.#queue.length > 0) {
      this.#scheduled = true;
      this.#defer(this.#drain);
    }
  }

  /** At the session's end: one line when its observers failed, ran over, were dropped or held the loop. */
  ended(): void {
    const { failed, abandoned, dropped, slow } = this.#stats;
    if (failed + abandoned + dropped + slow > 0) this.#log.warn({ observers: this.stats }, "event observers misbehaved in this session");
  }

  readonly #drain = (): void => {
    this.#scheduled = false;
    const calls = this.#queue;
    this.#queue = [];
    for (const call of calls) this.#call(call);
  };

  #call({ observer, event }: Call): void {
    if (observer.unsettled >= this.#maxInFlight) {
      this.#drop(observer, event, "too many in flight");
      return;
    }
    this.#stats.calls += 1;
    const started = this.#clock.now();
    let pending: PromiseLike<unknown> | undefined;
    try {
      pending = thenable(observer.fn(event, this.#info));
    } catch (error) {
      this.#failed(observer, event, error);
    }
    const heldMs = this.#clock.now() - started;
    if (heldMs >= SLOW_OBSERVER_MS) {
      this.#stats.slow += 1;
      this.#throttle.warn(this.#log, { observer: observer.key, eventType: event.type, heldMs }, "an event observer held the event loop");
    }
    if (pending === undefined) return;
    observer.unsettled += 1;
    let budget: Timer | undefined = this.#clock.setTimeout(() => {
      budget = undefined;
      this.#stats.abandoned += 1;
      this.#throttle.warn(this.#log, { observer: observer.key, eventType: event.type, budgetMs: this.#budgetMs, unsettled: observer.unsettled }, "an event observer ran past its budget; abandoned");
    }, this.#budgetMs);
    const settled = (): void => {
      observer.unsettled -= 1;
      budget?.cancel();
      budget = undefined;
    };
    Promise.resolve(pending).then(settled, (error: unknown) => {
      settled();
      this.#failed(observer, event, error);
    });
  }

  #failed(observer: Observer, event: ObservedEvent, error: unknown): void {
    this.#stats.failed += 1;
    this.#throttle.warn(this.#log, { observer: observer.key, eventType: event.type, err: messageOf(error) }, "an event observer failed");
  }

  #drop(observer: Observer, event: ObservedEvent, reason: string): void {
    this.#stats.dropped += 1;
    this.#throttle.warn(this.#log, { observer: observer.key, eventType: event.type, reason, dropped: this.#stats.dropped }, "event observer calls dropped");
  }

  /** The event as the client received it (its JSON), deep-frozen, the resume key redacted. */
  #copy(event: ServerEvent): ObservedEvent | undefined {
    try {
      const copy = JSON.parse(JSON.stringify(event)) as Record<string, unknown>;
      if (copy.type === "session.configured") copy.resumeKey = REDACTED;
      return deepFreeze(copy) as unknown as ObservedEvent;
    } catch (error) {
      this.#throttle.warn(this.#log, { eventType: event.type, err: messageOf(error) }, "an event could not be copied for its observers");
      return undefined;
    }
  }
}

/** The promise an observer returned, if it returned one. */
function thenable(value: unknown): PromiseLike<unknown> | undefined {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return undefined;
  return typeof (value as { then?: unknown }).then === "function" ? (value as PromiseLike<unknown>) : undefined;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
