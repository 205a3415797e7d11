/** Twilio Media Streams codec (vendors.md §8a). Pure; decode never throws. */
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
  type CarrierInbound,
  type JsonObject,
} from "./carrier.js";

function decodeStart(frame: JsonObject): CarrierInbound {
  const start = obj(frame, "start");
  if (start === undefined) return ignored("start without a start object");
  const streamId = str(frame, "streamSid") ?? str(start, "streamSid");
  if (streamId === undefined || streamId.length === 0) return ignored("start without streamSid");
  const format = obj(start, "mediaFormat");
  const encodingName = format === undefined ? "audio/x-mulaw" : str(format, "encoding");
  if (encodingName !== "audio/x-mulaw") return ignored(`unsupported encoding ${label(encodingName)}`);
  const rateRaw = format?.["sampleRate"];
  const sampleRate = rateRaw === undefined ? 8000 : intField(rateRaw);
  if (sampleRate === undefined || sampleRate === 0) return ignored("start with an invalid sampleRate");
  const callId = str(start, "callSid");
  const customParameters = stringRecord(start["customParameters"]);
  return callId === undefined
    ? { kind: "start", streamId, customParameters, encoding: "mulaw", sampleRate }
    : { kind: "start", streamId, callId, customParameters, encoding: "mulaw", sampleRate };
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
      if (dtmf === undefined) return ignored("dtmf without a dtmf object");
      const track = dtmf["track"];
      if (track !== undefined && track !== "inbound_track" && track !== "inbound") {
        return ignored(`dtmf on track ${label(track)}`);
      }
      return dtmfDigit(dtmf["digit"]);
    }
    case "stop":
      return { kind: "stop" };
    default:
      return ignored(typeof event === "string" ? `unknown event ${event.slice(0, 64)}` : "frame without an event");
  }
}

export const twilioCodec: CarrierCodec = {
  carrier: "twilio",
  decode(frame, isBinary) {
    return safely(() => {
      const parsed = parseTextFrame(frame, isBinary);
      return typeof parsed === "string" ? ignored(parsed) : decodeFrame(parsed);
    });
  },
  encodeMedia(streamId, payload) {
    return JSON.stringify({ event: "media", streamSid: streamId, media: { payload: encodeBase64(payload) } });
  },
  encodeMark(streamId, name) {
    return JSON.stringify({ event: "mark", streamSid: streamId, mark: { name } });
  },
  encodeClear(streamId) {
    return JSON.stringify({ event: "clear", streamSid: streamId });
  },
};
