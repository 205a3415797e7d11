import { EVENT_TYPES, type EventType, type ServerEvent } from "../events.js";
import type { SessionInfo } from "./agent.js";
import { didYouMean, kindOf, type IssueList } from "./errors.js";

/** The `events` key whose observer sees every event the session emits (docs/config.md "Event observers"). */
export const EVERY_EVENT = "*";

/** What `events` may be keyed by: a client-protocol event type (docs/protocol.md), or `"*"`. */
export const OBSERVABLE_KEYS: readonly string[] = [...EVENT_TYPES, EVERY_EVENT];

type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/**
 * An event as an observer receives it: a deep-frozen copy of the event as the client received it
 * (its JSON, `meta` included), taken when the session emitted it. `session.configured` carries
 * `resumeKey: "[redacted]"`: the key that takes a live session over stays with the client.
 */
export type ObservedEvent<K extends EventType = EventType> = DeepReadonly<Extract<ServerEvent, { type: K }>>;

/**
 * A server-side observer of one kind of event. It may be async; the session never waits for it
 * (docs/config.md "Event observers": queued after the emit, time-bounded, its failures logged).
 */
export type EventObserver<E> = (event: E, info: SessionInfo) => void | Promise<void>;

/** Observers of the session's client-protocol events, keyed by event type, or `"*"` for every event. */
export type AgentEvents = { readonly [K in EventType]?: EventObserver<ObservedEvent<K>> | undefined } & {
  readonly [EVERY_EVENT]?: EventObserver<ObservedEvent> | undefined;
};

/** The keys of `events` that name an observer, in the author's order (`check` lists them). */
export function observedKeys(events: unknown): string[] {
  if (typeof events !== "object" || events === null) return [];
  return Object.entries(events).flatMap(([key, observer]) => (observer === undefined ? [] : [key]));
}

/**
 * Refuse an `events` field the session could not honour: not a record, a key that is no
 * client-protocol event type (a typo would observe nothing, silently), a value that is no function.
 */
export function checkEventObservers(issues: IssueList, events: unknown): void {
  if (events === undefined) return;
  if (typeof events !== "object" || events === null || Array.isArray(events)) {
    issues.add("events", `is an object keyed by event type, e.g. { "tool.completed": (event, { sessionId }) => … } (got ${kindOf(events)}).`);
    return;
  }
  for (const [key, observer] of Object.entries(events)) {
    const path = `events[${JSON.stringify(key)}]`;
    if (!OBSERVABLE_KEYS.includes(key)) {
      issues.add(path, `${JSON.stringify(key)} is not a client-protocol event type.${didYouMean(key, OBSERVABLE_KEYS)} Observable: ${OBSERVABLE_KEYS.join(", ")} (docs/protocol.md).`);
    } else if (observer !== undefined && typeof observer !== "function") {
      issues.add(path, `an observer is a function (event, { sessionId, mode }) => void (got ${kindOf(observer)}).`);
    }
  }
}
