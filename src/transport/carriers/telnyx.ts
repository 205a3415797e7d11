/** Telnyx media streaming codec, `rtp` bidirectional mode (vendors.md §8b). Pure; decode never throws. */
import {
  encodeBase64,
  ignored,
  obj,
  str,
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

const ENCODINGS: Record<string, CarrierEncoding> = {
  PCMU: "mulaw",
  "audio/x-mulaw": "mulaw",
  PCMA: "alaw",
  "audio/x-alaw": "alaw",
  L16: "l16",
};

const START_FIELDS: StartFields = {
  streamIdKey: "stream_id",
  streamIdSources: ["frame"],
  formatKey: "media_format",
  defaultEncoding: "PCMU",
  encodingOf: (name) => (Object.hasOwn(ENCODINGS, name) ? ENCODINGS[name] : undefined),
  rateKey: "sample_rate",
  defaultRate: (encoding) => (encoding === "l16" ? 16000 : 8000),
  callIdKey: "call_control_id",
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
      return callerMedia(frame);
    case "mark":
      return nestedMark(frame);
    case "dtmf":
      return nestedDtmf(frame);
    case "error": {
      const payload = obj(frame, "payload");
      const title = payload === undefined ? undefined : str(payload, "title");
      return ignored(`carrier error ${title === undefined ? "" : title.slice(0, 64)}`.trimEnd());
    }
    case "stop":
      return { kind: "stop" };
    default:
      return unknownEvent(event);
  }
}

/** Outbound frames carry no stream id: Telnyx does not need one (vendors.md §8b). */
export const telnyxCodec: CarrierCodec = {
  carrier: "telnyx",
  decode(frame, isBinary) {
    return decodeJsonFrame(frame, isBinary, decodeFrame);
  },
  encodeMedia(_streamId, payload) {
    return JSON.stringify({ event: "media", media: { payload: encodeBase64(payload) } });
  },
  encodeMark(_streamId, name) {
    return JSON.stringify({ event: "mark", mark: { name } });
  },
  encodeClear() {
    return JSON.stringify({ event: "clear" });
  },
};
