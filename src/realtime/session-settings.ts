/**
 * What a Realtime client may set with `session.update` and what it is shown (docs/realtime.md
 * "Audio", "Turns"): the audio formats each way, and turn detection as the agent really takes
 * turns. Pure: the binding holds the settings; this decides an update against them.
 */
import { PCM24, type RealtimeAudioFormat } from "./audio-format.js";
import type { SessionUpdate } from "./client-events.js";
import type { Modality } from "./server-events.js";
import { spread } from "../spread.js";

/** How the agent takes spoken turns: its own turn-taking (`auto`, shown as `server_vad`), or push-to-talk (`manual`, `turn_detection: null`). */
export type AgentTurns = "auto" | "manual";

export interface RealtimeSettings {
  readonly modality: Modality;
  /** The agent's `turnTaking.detection` (docs/config.md); a text agent takes no spoken turns. */
  readonly turns: AgentTurns;
  /** The agent's speech over a reply interrupts it (its `interruption` is not `"off"`): shown as `interrupt_response`. */
  readonly interrupts: boolean;
  readonly input: RealtimeAudioFormat;
  readonly output: RealtimeAudioFormat;
}

/** The settings a connection starts with (the Realtime defaults). */
export function initialSettings(modality: Modality, turns: AgentTurns, interrupts = true): RealtimeSettings {
  return { modality, turns, interrupts, input: PCM24, output: PCM24 };
}

/** A refused update: nothing of it applies. */
export interface UpdateRefusal {
  readonly code: string;
  readonly message: string;
  readonly param: string;
}

const sameFormat = (a: RealtimeAudioFormat, b: RealtimeAudioFormat): boolean => a.type === b.type;

/**
 * An update against the current settings: the new settings, or why it is refused. `audioSent`:
 * the open response has sent audio — a response's audio is in one format, so the output format
 * changes only before a response's first audio (a greeting's included: the link converts where its
 * paced audio leaves) or between responses; the input's applies from the next append, at any time.
 */
export function applySessionUpdate(update: SessionUpdate, current: RealtimeSettings, audioSent: boolean): RealtimeSettings | UpdateRefusal {
  const wanted = update.outputModalities?.[0];
  if (wanted !== undefined && wanted !== current.modality) {
    const agent = current.modality === "text" ? "a text agent: it answers in text" : "a voice agent: it answers in audio with its transcript";
    return { code: "unsupported_value", message: `session.update: output_modalities ["${wanted}"] is not what this agent speaks: it is ${agent}`, param: "session.output_modalities" };
  }
  // A text agent takes no spoken turns (ignored); a manual agent's turns are the client's whatever it names (ignored: session.updated shows null).
  if (update.turnDetection === null && current.modality === "audio" && current.turns === "auto") {
    return {
      code: "unsupported_value",
      message: 'session.update: turn_detection null (the client commits turns) needs an agent that takes push-to-talk turns: set turnTaking.detection: "manual" in the agent; this one takes turns by its own turn-taking (server_vad)',
      param: "session.audio.input.turn_detection",
    };
  }
  const output = update.outputFormat ?? current.output;
  if (audioSent && !sameFormat(output, current.output)) {
    return { code: "active_response", message: "session.update: audio.output.format cannot change once a response's audio has started: send it after response.done", param: "session.audio.output.format" };
  }
  return spread(current, { input: update.inputFormat ?? current.input, output });
}

/** Server VAD as the session shows it: the agent answers each turn itself, and cuts its reply at a barge-in unless its `interruption` is `"off"`. */
export interface ShownServerVad {
  readonly type: "server_vad";
  readonly create_response: true;
  readonly interrupt_response: boolean;
}

/**
 * Turn detection as the session shows it: the agent's own turn-taking stands for server VAD
 * (`interrupt_response` true when the gateway itself cancels a reply the user speaks over: the
 * Agents SDK then sends no `response.cancel` of its own at `speech_started`); push-to-talk and text
 * agents show null.
 */
export function shownTurnDetection(settings: RealtimeSettings): ShownServerVad | null {
  return settings.modality === "audio" && settings.turns === "auto" ? { type: "server_vad", create_response: true, interrupt_response: settings.interrupts } : null;
}

/** The agent takes Realtime's push-to-talk (`turn_detection: null`): a voice agent with `turnTaking.detection: "manual"`. */
export function takesPushToTalk(settings: RealtimeSettings): boolean {
  return settings.modality === "audio" && settings.turns === "manual";
}

/** Why `input_audio_buffer.commit` or `clear` is refused (undefined: push-to-talk takes it). */
export function bufferEventRefusal(settings: RealtimeSettings, type: string): { readonly code: string; readonly message: string } | undefined {
  if (takesPushToTalk(settings)) return undefined;
  const why = settings.modality === "text" ? "a text agent takes no audio" : 'this agent\'s own turn-taking commits turns (server_vad): for push-to-talk set turnTaking.detection: "manual" in the agent';
  return { code: "unsupported_event", message: `${type}: ${why}` };
}
