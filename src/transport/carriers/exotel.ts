/** Exotel Voicebot applet codec, bidirectional (vendors.md §8d). Pure; decode never throws. */
import {
  encodeBase64,
  ignored,
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
  nestedMark,
  unknownEvent,
  type StartFields,
} from "./json-events.js";

/** Default is raw/slin: 16-bit little-endian PCM. */
function encodingOf(name: string): CarrierEncoding | undefined {
  const base = name.split(";")[0]?.trim().toLowerCase();
  if (base === "audio/x-raw" || base === "raw" || base === "slin" || base === "audio/l16") return "l16";
  if (base === "audio/x-mulaw") return "mulaw";
  return undefined;
}

const START_FIELDS: StartFields = {
  streamIdKey: "stream_sid",
  streamIdSources: ["frame", "start"],
  formatKey: "media_format",
  defaultEncoding: "audio/x-raw",
  encodingOf,
  rateKey: "sample_rate",
  defaultRate: () => 8000,
  callIdKey: "call_sid",
  customParameters: (_frame, start) => stringRecord(start["custom_parameters"]),
};

function decodeFrame(frame: JsonObject): CarrierInbound {
  const event = frame["event"];
  switch (event) {
    case "connected":
      return ignored("connected");
    case "start":
      return decodeStartWith(frame, START_FIELDS);
    case "media":
      // Exotel streams only the caller; should a track ever appear, keep the inbound one.
      return callerMedia(frame);
    case "mark":
      return nestedMark(frame);
    case "dtmf":
      return nestedDtmf(frame);
    case "stop":
      return { kind: "stop" };
    default:
      return unknownEvent(event);
  }
}

/**
 * Outbound media must be 3.2 KB–100 KB and a multiple of 320 bytes (vendors.md §8d); chunking to that
 * is the caller's job, this codec only frames what it is given.
 */
export const exotelCodec: CarrierCodec = {
  carrier: "exotel",
  decode(frame, isBinary) {
    return decodeJsonFrame(frame, isBinary, decodeFrame);
  },
  encodeMedia(streamId, payload) {
    return JSON.stringify({ event: "media", stream_sid: streamId, media: { payload: encodeBase64(payload) } });
  },
  encodeMark(streamId, name) {
    return JSON.stringify({ event: "mark", stream_sid: streamId, mark: { name } });
  },
  encodeClear(streamId) {
    return JSON.stringify({ event: "clear", stream_sid: streamId });
  },
};
