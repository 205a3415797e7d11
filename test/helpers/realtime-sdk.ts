// What the Agents SDK's RealtimeSession saw of a gateway's /v1/realtime, for the tests that drive
// it: every server event its transport received (`transport_event`, parsed or not, in order), its
// errors, and the audio it was handed per response. Waits poll: nothing is timed but the deadline.
import type { RealtimeSession } from "@openai/agents-realtime";
import type { RealtimeServerEvent } from "openai/resources/realtime/realtime";

export interface SdkEvents {
  /** The server events received, in order (as the gateway sent them: the GA shapes). */
  readonly events: RealtimeServerEvent[];
  /** The session's `error` events. */
  readonly errors: unknown[];
  of<K extends RealtimeServerEvent["type"]>(type: K): Extract<RealtimeServerEvent, { type: K }>[];
  types(): string[];
  /** Bytes of audio the session was handed for response `responseId` (all responses without it). */
  audioBytes(responseId?: string): number;
  /** Resolves once `done()` holds (checked every 50 ms); fails after `ms`, naming `what` and the events seen. */
  until(done: () => boolean, what: string, ms: number): Promise<void>;
}

export function sdkEvents(session: RealtimeSession): SdkEvents {
  const events: RealtimeServerEvent[] = [];
  const errors: unknown[] = [];
  const audio = new Map<string, number>();
  session.on("transport_event", (event) => events.push(event as unknown as RealtimeServerEvent));
  session.on("error", (error) => errors.push(error));
  session.on("audio", (event) => audio.set(event.responseId, (audio.get(event.responseId) ?? 0) + event.data.byteLength));
  const types = (): string[] => events.map((e) => e.type);
  return {
    events,
    errors,
    of: <K extends RealtimeServerEvent["type"]>(type: K) => events.filter((e): e is Extract<RealtimeServerEvent, { type: K }> => e.type === type),
    types,
    audioBytes: (responseId) => (responseId === undefined ? [...audio.values()].reduce((sum, n) => sum + n, 0) : (audio.get(responseId) ?? 0)),
    until: async (done, what, ms) => {
      const deadline = Date.now() + ms;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}; events: ${types().join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}
