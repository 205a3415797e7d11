/** Twilio Media Streams codec (vendors.md §8a). Pure; decode never throws. */
import {
  dtmfDigit,
  encodeBase64,
  ignored,
  label,
  obj,
  stringRecord,
  type CarrierCodec,
  type CarrierInbound,
  type JsonObject,
} from "./carrier.js";
import {
  callerMedia,
  decodeJsonFrame,
  decodeStartWith,
  nestedMark,
  unknownEvent,
  type StartFields,
} from "./json-events.js";

const START_FIELDS: StartFields = {
  streamIdKey: "streamSid",
  streamIdSources: ["frame", "start"],
  formatKey: "mediaFormat",
  defaultEncoding: "audio/x-mulaw",
  encodingOf: (name) => (name === "audio/x-mulaw" ? "mulaw" : undefined),
  rateKey: "sampleRate",
  defaultRate: () => 8000,
  callIdKey: "callSid",
  customParameters: (_frame, start) => stringRecord(start["customParameters"]),
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
      return unknownEvent(event);
  }
}

export const twilioCodec: CarrierCodec = {
  carrier: "twilio",
  decode(frame, isBinary) {
    return decodeJsonFrame(frame, isBinary, decodeFrame);
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
