/** Telnyx media streaming codec, `rtp` bidirectional mode (vendors.md §8b). Pure; decode never throws. */
import {
  dtmfDigit,
  encodeBase64,
  ignored,
  label,
  intField,
  markName,
  mediaFrom,
  obj,
  parseTextFrame,
  safely,
  str,
  stringRecord,
  type CarrierCodec,
  type CarrierEncoding,
  type CarrierInbound,
  type JsonObject,
} from "./carrier.js";

const ENCODINGS: Record<string, CarrierEncoding> = {
  PCMU: "mulaw",
  "audio/x-mulaw": "mulaw",
  PCMA: "alaw",
  "audio/x-alaw": "alaw",
  L16: "l16",
};

function decodeStart(frame: JsonObject): CarrierInbound {
  const start = obj(frame, "start");
  if (start === undefined) return ignored("start without a start object");
  const streamId = str(frame, "stream_id");
  if (streamId === undefined || streamId.length === 0) return ignored("start without stream_id");
  const format = obj(start, "media_format");
  const encodingName = format === undefined ? "PCMU" : str(format, "encoding");
  const encoding = encodingName === undefined ? undefined : ENCODINGS[encodingName];
  if (encoding === undefined || !Object.hasOwn(ENCODINGS, encodingName ?? "")) {
    return ignored(`unsupported encoding ${label(encodingName)}`);
  }
  const rateRaw = format?.["sample_rate"];
  const sampleRate = rateRaw === undefined ? (encoding === "l16" ? 16000 : 8000) : intField(rateRaw);
  if (sampleRate === undefined || sampleRate === 0) return ignored("start with an invalid sample_rate");
  const callId = str(start, "call_control_id");
  const customParameters = stringRecord(start["custom_parameters"]);
  return callId === undefined
    ? { kind: "start", streamId, customParameters, encoding, sampleRate }
    : { kind: "start", streamId, callId, customParameters, encoding, sampleRate };
}

function decodeFrame(frame: JsonObject): CarrierInbound {
  const event = frame["event"];
  switch (event) {
    case "connected":
      return ignored("connected");
    case "start":
      return decodeStart(frame);
    case "media": {
      const media = obj(frame, "media");
      if (media === undefined) return ignored("media without a media object");
      const track = media["track"];
      if (track !== undefined && track !== "inbound") return ignored(`track ${label(track)} is not the caller`);
      return mediaFrom(media["payload"], media["timestamp"]);
    }
    case "mark": {
      const mark = obj(frame, "mark");
      return mark === undefined ? ignored("mark without a mark object") : markName(mark["name"]);
    }
    case "dtmf": {
      const dtmf = obj(frame, "dtmf");
      return dtmf === undefined ? ignored("dtmf without a dtmf object") : dtmfDigit(dtmf["digit"]);
    }
    case "error": {
      const payload = obj(frame, "payload");
      const title = payload === undefined ? undefined : str(payload, "title");
      return ignored(`carrier error ${title === undefined ? "" : title.slice(0, 64)}`.trimEnd());
    }
    case "stop":
      return { kind: "stop" };
    default:
      return ignored(typeof event === "string" ? `unknown event ${event.slice(0, 64)}` : "frame without an event");
  }
}

/** Outbound frames carry no stream id: Telnyx does not need one (vendors.md §8b). */
export const telnyxCodec: CarrierCodec = {
  carrier: "telnyx",
  decode(frame, isBinary) {
    return safely(() => {
      const parsed = parseTextFrame(frame, isBinary);
      return typeof parsed === "string" ? ignored(parsed) : decodeFrame(parsed);
    });
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
