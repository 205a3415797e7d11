import type { S2sEvents } from "./s2s-port.js";

/**
 * The session's event handlers, each wrapped so that one that throws is reported and ignored: an
 * adapter's socket loop never dies of a handler's bug.
 */
export function shieldEvents(events: S2sEvents, threw: (event: string, error: unknown) => void): S2sEvents {
  const call = (name: string, deliver: () => void): void => {
    try {
      deliver();
    } catch (error) {
      threw(name, error);
    }
  };
  return {
    // Audio and transcript deltas come many times a second: caught in place, no closure per delta.
    audio: (pcm, info) => {
      try {
        events.audio(pcm, info);
      } catch (error) {
        threw("audio", error);
      }
    },
    agentTranscript: (delta, info) => {
      try {
        events.agentTranscript(delta, info);
      } catch (error) {
        threw("agentTranscript", error);
      }
    },
    speechStarted: () => call("speechStarted", () => events.speechStarted()),
    speechStopped: () => call("speechStopped", () => events.speechStopped()),
    userTranscript: (text, info) => call("userTranscript", () => events.userTranscript(text, info)),
    responseStarted: (info) => call("responseStarted", () => events.responseStarted(info)),
    responseDone: (info) => call("responseDone", () => events.responseDone(info)),
    toolCall: (toolCall) => call("toolCall", () => events.toolCall(toolCall)),
    error: (error, info) => call("error", () => events.error(error, info)),
    reconnected: () => call("reconnected", () => events.reconnected?.()),
    closed: (info) => call("closed", () => events.closed(info)),
  };
}
