/** OpenAI Realtime: `s2s.options` read and validated, and the audio formats (docs/vendors.md (OpenAI Realtime)). */
import { G711_SAMPLE_RATE } from "../../../audio/rates.js";
import { GatewayError, MissingKeyError } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { isRecord } from "../../../providers/ws-frames.js";
import type { S2sAudioFormat } from "../../s2s-port.js";

export const KIND = "openai-realtime";
export const VENDOR = "OpenAI Realtime";
/** docs/vendors.md (OpenAI Realtime), "URL": the SDK's base URL + `/realtime`; `?model=` is appended. */
const DEFAULT_URL = "wss://api.openai.com/v1/realtime";
const DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY";
/** docs/vendors.md (OpenAI Realtime), `session.update`: `audio/pcm` takes 24000 Hz only; `audio/pcmu` and `audio/pcma` are G.711 at 8 kHz. */
const SAMPLE_RATE = 24_000;
export const AUDIO_FORMATS: readonly S2sAudioFormat[] = ["pcm16", "pcmu", "pcma"];
const TURN_DETECTION_TYPES: ReadonlySet<unknown> = new Set(["server_vad", "semantic_vad"]);

/** The wire format object, the rate, and bytes per millisecond (PCM16 at 24 kHz: 48; G.711: 8). */
export function wireFormat(format: S2sAudioFormat): { readonly json: object; readonly rate: number; readonly bytesPerMs: number } {
  if (format === "pcm16") return { json: { type: "audio/pcm", rate: SAMPLE_RATE }, rate: SAMPLE_RATE, bytesPerMs: (SAMPLE_RATE * 2) / 1000 };
  return { json: { type: `audio/${format}` }, rate: G711_SAMPLE_RATE, bytesPerMs: G711_SAMPLE_RATE / 1000 };
}

/** `descriptor.options`, read and validated at construction. */
export interface RealtimeConfig {
  readonly url: string;
  readonly apiKey: string;
  readonly keyVariable: string;
  readonly model: string;
  readonly voice: string | Readonly<Record<string, unknown>>;
  /** The transcription model, or false for none. */
  readonly transcription: string | false;
  /** `audio.input.turn_detection` without `create_response`/`interrupt_response` (set per session). */
  readonly turnDetection: Readonly<Record<string, unknown>>;
}

/**
 * Options (`s2s.options.*`): `model` ("gpt-realtime"), `voice` ("marin"), `transcription` (a model,
 * "gpt-4o-mini-transcribe"; `false` for none), `turnDetection` ("server_vad" | "semantic_vad" | an
 * object passed through), `url`, `apiKeyEnv` ("OPENAI_API_KEY"). A missing key throws MissingKeyError.
 */
export function readConfig(descriptor: ProviderDescriptor, env: Readonly<Record<string, string | undefined>>): RealtimeConfig {
  const options = descriptor.options;
  const fail = (message: string): never => {
    throw new GatewayError("internal", `s2s.options.${message}`, { fatal: true });
  };
  const string = (name: string): string | undefined => {
    const value = options[name];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.trim() === "") return fail(`${name} must be a non-empty string.`);
    return value;
  };

  const keyVariable = string("apiKeyEnv") ?? DEFAULT_KEY_VARIABLE;
  const apiKey = env[keyVariable];
  if (apiKey === undefined || apiKey === "") throw new MissingKeyError(descriptor.kind, keyVariable);

  const model = string("model") ?? "gpt-realtime";
  const base = string("url") ?? DEFAULT_URL;
  if (!/^wss?:\/\//.test(base)) fail(`url must be a ws:// or wss:// URL, got "${base}".`);
  const url = new URL(base);
  url.searchParams.set("model", model); // docs/vendors.md (OpenAI Realtime): exactly one of model / intent / call_id

  // docs/vendors.md (OpenAI Realtime): a voice name, or {"id":"voice_…"} for a custom voice.
  const rawVoice = options.voice;
  let voice: RealtimeConfig["voice"] = "marin";
  if (isRecord(rawVoice) && typeof rawVoice.id === "string") voice = rawVoice;
  else if (rawVoice !== undefined) voice = string("voice") ?? voice;

  const rawTranscription = options.transcription;
  const transcription = rawTranscription === false ? false : rawTranscription === true ? "gpt-4o-mini-transcribe" : (string("transcription") ?? "gpt-4o-mini-transcribe");

  const rawTurn = options.turnDetection ?? "server_vad";
  let turnDetection: Record<string, unknown>;
  if (typeof rawTurn === "string" && TURN_DETECTION_TYPES.has(rawTurn)) turnDetection = { type: rawTurn };
  else if (isRecord(rawTurn) && TURN_DETECTION_TYPES.has(rawTurn.type)) turnDetection = { ...rawTurn };
  else return fail('turnDetection must be "server_vad", "semantic_vad" or an object with one of those as its type.');

  return { url: url.toString(), apiKey, keyVariable, model, voice, transcription, turnDetection };
}
