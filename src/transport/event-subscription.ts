/**
 * Which events a `/websocket` client is sent (`?events=`, docs/protocol.md "Choosing events"): a
 * client that needs only some of them names those, and the rest never reach its socket (nor
 * cost their JSON). The events a client cannot work without always go out, named or not.
 */
import { EVENT_TYPES, type EventType } from "./protocol.js";

/**
 * Sent whatever the client chose: the handshake, errors, the two events that tell a player to
 * drop the audio it holds (a barge-in, a reset), the session's end, and the calls a client may
 * have to run itself (a client tool's `tool.called` is its only request to run it).
 */
export const ALWAYS_SENT: ReadonlySet<EventType> = new Set<EventType>(["session.configured", "error.reported", "reply.cancelled", "session.reset", "session.timed-out", "tool.called"]);

/** The events a client is sent: every one (no `?events=`), or those it named plus `ALWAYS_SENT`. */
export type EventSubscription = ReadonlySet<EventType> | "all";

/**
 * Read `?events=` (comma-separated event types; null: absent). An empty list keeps `ALWAYS_SENT`
 * only. A name that is no event type is refused, naming it and where the list is.
 */
export function parseEventSubscription(value: string | null): EventSubscription | { readonly error: string } {
  if (value === null) return "all";
  const names = value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const unknown = names.filter((name) => !(EVENT_TYPES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 3).map((name) => JSON.stringify(name.slice(0, 64)));
    return { error: `events: ${shown.join(", ")}${unknown.length > 3 ? ` and ${unknown.length - 3} more` : ""} ${unknown.length === 1 ? "is not an event type" : "are not event types"}; name event types from docs/protocol.md "Events", comma-separated` };
  }
  return new Set<EventType>([...ALWAYS_SENT, ...(names as EventType[])]);
}

/** Whether a client with this subscription is sent events of `type`. */
export function subscribed(subscription: EventSubscription, type: EventType): boolean {
  return subscription === "all" || subscription.has(type);
}
