/** Exotel Voicebot applet codec, bidirectional (vendors.md §8d). Pure; decode never throws. */
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

/** Default is raw/slin: 16-bit little-endian PCM. */
function encodingOf(name: string): CarrierEncoding | undefined {
  const base = name.split(";")[0]?.trim().toLowerCase();
  if (base === "audio/x-raw" || base === "raw" || base === "slin" || base === "audio/l16") return "l16";
  if (base === "audio/x-mulaw") return "mulaw";
  return undefined;
}

function decodeStart(frame: JsonObject): CarrierInbound {
  const start = obj(frame, "start");
  if (start === undefined) return ignored("start without a start object");
  const streamId = str(frame, "stream_sid") ?? str(start, "stream_sid");
  if (streamId === undefined || streamId.length === 0) return ignored("start without stream_sid");
  const format = obj(start, "media_format");
  const encodingName = format === undefined ? "audio/x-raw" : str(format, "encoding");
  const encoding = encodingName === undefined ? undefined : encodingOf(encodingName);
  if (encoding === undefined) return ignored(`unsupported encoding ${label(encodingName)}`);
  const rateRaw = format?.["sample_rate"];
  const sampleRate = rateRaw === undefined ? 8000 : intField(rateRaw);
  if (sampleRate === undefined || sampleRate === 0) return ignored("start with an invalid sample_rate");
  const callId = str(start, "call_sid");
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
      // Exotel streams only the caller; should a track ever appear, keep the inbound one.
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
    case "stop":
      return { kind: "stop" };
    default:
      return ignored(typeof event === "string" ? `unknown event ${event.slice(0, 64)}` : "frame without an event");
  }
}

/**
 * Outbound media must be 3.2 KB–100 KB and a multiple of 320 bytes (vendors.md §8d); chunking to that
 * is the caller's job, this codec only frames what it is given.
 */
export const exotelCodec: CarrierCodec = {
  carrier: "exotel",
  decode(frame, isBinary) {
    return safely(() => {
      const parsed = parseTextFrame(frame, isBinary);
      return typeof parsed === "string" ? ignored(parsed) : decodeFrame(parsed);
    });
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
