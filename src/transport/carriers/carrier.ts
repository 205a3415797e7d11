/**
 * Carrier-neutral types and shared, pure helpers for the telephony codecs (docs/vendors.md (Carriers)).
 * One codec file per carrier; decoding never throws, whatever the input.
 */
import { Base64Audio, type AudioPayload } from "../../audio/audio-payload.js";
import { canonicalBase64, strictBase64, strictBase64Length } from "../../audio/strict-base64.js";

export type CarrierName = "twilio" | "telnyx" | "plivo" | "exotel" | "vonage";
export type CarrierEncoding = "mulaw" | "alaw" | "l16";

/** What a carrier frame means, carrier-neutral. */
export type CarrierInbound =
  | {
      kind: "start";
      streamId: string;
      callId?: string;
      customParameters: Record<string, string>;
      encoding: CarrierEncoding;
      sampleRate: number;
    }
  /**
   * Raw codec bytes of the CALLER track only; `chunk` numbers media frames in order (Telnyx may
   * deliver them out of order). A JSON frame's payload stays the carrier's base64 text, checked
   * and not decoded (`Base64Audio`), when that is exactly the text `base64Of` would write for its
   * bytes (canonical), so it can be forwarded as is; otherwise it is the decoded bytes.
   */
  | { kind: "media"; payload: AudioPayload; timestampMs?: number; chunk?: number }
  /** A mark we sent was played. */
  | { kind: "mark"; name: string }
  | { kind: "dtmf"; digit: string }
  | { kind: "stop" }
  /** Unknown event, outbound track, malformed frame. */
  | { kind: "ignored"; reason: string };

/** The stream's audio, as its `start` negotiated it. */
export interface MediaFormat {
  readonly encoding: CarrierEncoding;
  readonly sampleRate: number;
}

/** A stream's media frames: made once a stream, its `encode` called for every frame of agent audio. */
export interface MediaEncoder {
  encode(payload: Uint8Array): string | Uint8Array;
}

/** How a carrier wants outbound audio cut (bytes of its payload); `minBytes` ≥ `multipleOf`. */
export interface OutboundFraming {
  /** Every frame a multiple of this (Vonage: one 20 ms frame; Exotel: 320 bytes). */
  readonly multipleOf: number;
  /** Frames shorter than this wait for more audio; a segment's last one is padded with silence. */
  readonly minBytes: number;
  readonly maxBytes: number;
}

export interface CarrierCodec {
  readonly carrier: CarrierName;
  /** The carrier echoes a mark once the audio sent before it has played (Vonage has no marks). */
  readonly marks: boolean;
  /** Never throws, whatever the input. */
  decode(frame: string | Uint8Array, isBinary: boolean): CarrierInbound;
  /**
   * The stream's outbound audio frames, echoing its id: made once a stream (the frame's JSON
   * around the audio is built then, not per frame; audio/base64-frame.ts). `format` is the
   * stream's negotiated audio: a carrier whose frames declare their format (Plivo `playAudio`)
   * must declare exactly that.
   */
  mediaEncoder(streamId: string, format: MediaFormat): MediaEncoder;
  /** `undefined` where the carrier has no marks. */
  encodeMark(streamId: string, name: string): string | undefined;
  encodeClear(streamId: string): string | undefined;
  /** Outbound frame sizes the carrier requires for this format; absent = any whole number of samples. */
  framing?(encoding: CarrierEncoding, sampleRate: number): OutboundFraming;
}

/** Largest decoded media payload accepted (bytes). */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Largest text frame parsed at all (characters): a 1 MiB payload in base64 plus envelope. */
export const MAX_TEXT_FRAME_CHARS = Math.ceil((MAX_PAYLOAD_BYTES * 4) / 3) + 64 * 1024;

export type JsonObject = Record<string, unknown>;

export function ignored(reason: string): CarrierInbound {
  return { kind: "ignored", reason };
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function str(obj: JsonObject, key: string): string | undefined {
  const v = obj[key];
  return typeof v === "string" ? v : undefined;
}

export function obj(parent: JsonObject, key: string): JsonObject | undefined {
  const v = parent[key];
  return isObject(v) ? v : undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Parse a text frame as one JSON object, or say why not. Never throws. */
export function parseTextFrame(frame: string | Uint8Array, isBinary: boolean): JsonObject | string {
  if (isBinary) return "unexpected binary frame";
  let text: string;
  if (typeof frame === "string") {
    text = frame;
  } else if (frame instanceof Uint8Array) {
    if (frame.byteLength > MAX_TEXT_FRAME_CHARS) return "frame too large";
    try {
      text = utf8.decode(frame);
    } catch {
      return "text frame is not valid UTF-8";
    }
  } else {
    return "frame is neither text nor bytes";
  }
  if (text.length > MAX_TEXT_FRAME_CHARS) return "frame too large";
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "malformed JSON";
  }
  return isObject(parsed) ? parsed : "frame is not a JSON object";
}

/**
 * A media frame's base64 payload, strictly checked (standard alphabet, padded); a reason string on
 * garbage, empty or oversized input. Canonical text (what `base64Of` writes for its bytes, so
 * nearly always) is kept as text, checked without decoding (`Base64Audio`); any other strict text
 * is decoded now, so what is forwarded as text is exactly what re-encoding would have written.
 */
export function mediaPayload(b64: unknown): AudioPayload | string {
  if (typeof b64 !== "string") return "payload is not a string";
  if (b64.length === 0) return "empty payload";
  if ((b64.length / 4) * 3 > MAX_PAYLOAD_BYTES + 2) return "payload too large";
  const length = strictBase64Length(b64);
  if (length === undefined) return "payload is not valid base64";
  if (length > MAX_PAYLOAD_BYTES) return "payload too large";
  return canonicalBase64(b64) ? new Base64Audio(b64, length) : (strictBase64(b64) ?? "payload is not valid base64");
}

/** Digits in a digit string read as an integer at most: 15 stay below 2^53, so every one is exact. */
const MAX_DIGITS = 15;

/**
 * A non-negative integer from a number or a digit string (vendors send both: Twilio a media frame's
 * `chunk` and `timestamp` as strings, two on every 20 ms frame), read digit by digit rather than by
 * a regular expression and `Number`.
 */
export function intField(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_DIGITS) return undefined;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    n = n * 10 + digit;
  }
  return n;
}

/** Only the string-valued entries of an object (custom parameters, extra headers). */
export function stringRecord(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
}

const DTMF = /^[0-9*#A-Da-d]$/;

export function dtmfDigit(value: unknown): CarrierInbound {
  if (typeof value !== "string" || !DTMF.test(value)) return ignored("dtmf without a valid digit");
  return { kind: "dtmf", digit: value.toUpperCase() };
}

export function markName(value: unknown): CarrierInbound {
  if (typeof value !== "string" || value.length === 0) return ignored("mark without a name");
  return { kind: "mark", name: value };
}

/** `media` with an optional timestamp and chunk number, or `ignored` when the payload is bad. */
export function mediaFrom(payloadB64: unknown, timestamp: unknown, chunk?: unknown): CarrierInbound {
  const payload = mediaPayload(payloadB64);
  if (typeof payload === "string") return ignored(payload);
  const media: CarrierInbound & { kind: "media" } = { kind: "media", payload };
  const timestampMs = intField(timestamp);
  if (timestampMs !== undefined) media.timestampMs = timestampMs;
  const order = intField(chunk);
  if (order !== undefined) media.chunk = order;
  return media;
}

/** Run a decoder body; any surprise becomes `ignored` rather than a throw. */
export function safely(fn: () => CarrierInbound): CarrierInbound {
  try {
    return fn();
  } catch (err) {
    return ignored(`decode failed: ${err instanceof Error ? err.message : "unknown error"}`);
  }
}

/** A short, safe rendering of an untrusted value for an `ignored` reason. */
export function label(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value.slice(0, 64)) : typeof value;
}
