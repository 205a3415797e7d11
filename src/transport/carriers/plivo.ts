/** Plivo audio streams codec, bidirectional (docs/vendors.md (Carriers)). Pure; decode never throws. */
import { Base64Frame } from "../../audio/base64-frame.js";
import {
  ignored,
  isObject,
  markName,
  stringRecord,
  type CarrierCodec,
  type CarrierEncoding,
  type CarrierInbound,
  type JsonObject,
} from "./carrier.js";
import {
  callerMedia,
  decodeJsonFrame,
  decodeStartWith,
  nestedDtmf,
  unknownEvent,
  type StartFields,
} from "./json-events.js";

function encodingOf(name: string): CarrierEncoding | undefined {
  const base = name.split(";")[0]?.trim().toLowerCase();
  if (base === "audio/x-l16") return "l16";
  if (base === "audio/x-mulaw") return "mulaw";
  return undefined;
}

/** `extra_headers` arrives as a JSON string (sometimes an object); keep its string entries. */
function extraHeaders(value: unknown): Record<string, string> {
  if (isObject(value)) return stringRecord(value);
  if (typeof value !== "string" || value.length > 4096) return {};
  try {
    return stringRecord(JSON.parse(value));
  } catch {
    return {};
  }
}

const START_FIELDS: StartFields = {
  streamIdKey: "streamId",
  streamIdSources: ["start", "frame"],
  formatKey: "mediaFormat",
  defaultEncoding: "audio/x-l16",
  encodingOf,
  rateKey: "sampleRate",
  defaultRate: () => 8000,
  callIdKey: "callId",
  customParameters: (frame) => extraHeaders(frame["extra_headers"]),
};

function decodeFrame(frame: JsonObject): CarrierInbound {
  const event = frame["event"];
  switch (event) {
    case "start":
      return decodeStartWith(frame, START_FIELDS);
    case "media":
      return callerMedia(frame);
    case "playedStream":
      return markName(frame["name"]);
    case "clearedAudio":
      return ignored("clearedAudio");
    case "dtmf":
      return nestedDtmf(frame);
    case "stop":
      return { kind: "stop" };
    default:
      return unknownEvent(event);
  }
}

/**
 * Plivo plays a `playAudio` payload as the format it declares (docs.plivo.com "AudioStream":
 * `contentType` `audio/x-l16` or `audio/x-mulaw`, `sampleRate` 8000 or 16000), so each frame
 * declares the stream's own negotiated format — the answer XML asks for μ-law at 8 kHz, and μ-law
 * declared as L16 at 16 kHz plays as noise at 4x speed.
 */
export const plivoCodec: CarrierCodec = {
  carrier: "plivo",
  marks: true,
  decode(frame, isBinary) {
    return decodeJsonFrame(frame, isBinary, decodeFrame);
  },
  /** `playAudio` carries no stream id (docs/vendors.md (Carriers), "Stream ids"). */
  mediaEncoder(_streamId, format) {
    const contentType = format.encoding === "mulaw" ? "audio/x-mulaw" : "audio/x-l16";
    return new Base64Frame((payload) => ({ event: "playAudio", media: { contentType, sampleRate: format.sampleRate, payload } }));
  },
  encodeMark(streamId, name) {
    return JSON.stringify({ event: "checkpoint", streamId, name });
  },
  encodeClear(streamId) {
    return JSON.stringify({ event: "clearAudio", streamId });
  },
};
