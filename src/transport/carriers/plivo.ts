/** Plivo audio streams codec, bidirectional (vendors.md §8c). Pure; decode never throws. */
import {
  dtmfDigit,
  encodeBase64,
  ignored,
  label,
  intField,
  isObject,
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

/** What `playAudio` frames declare: must match the `<Stream contentType>` of the call. */
export interface PlivoOutputFormat {
  readonly contentType: "audio/x-l16" | "audio/x-mulaw";
  readonly sampleRate: 8000 | 16000;
}

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

function decodeStart(frame: JsonObject): CarrierInbound {
  const start = obj(frame, "start");
  if (start === undefined) return ignored("start without a start object");
  const streamId = str(start, "streamId") ?? str(frame, "streamId");
  if (streamId === undefined || streamId.length === 0) return ignored("start without streamId");
  const format = obj(start, "mediaFormat");
  const encodingName = format === undefined ? "audio/x-l16" : str(format, "encoding");
  const encoding = encodingName === undefined ? undefined : encodingOf(encodingName);
  if (encoding === undefined) return ignored(`unsupported encoding ${label(encodingName)}`);
  const rateRaw = format?.["sampleRate"];
  const sampleRate = rateRaw === undefined ? 8000 : intField(rateRaw);
  if (sampleRate === undefined || sampleRate === 0) return ignored("start with an invalid sampleRate");
  const callId = str(start, "callId");
  const customParameters = extraHeaders(frame["extra_headers"]);
  return callId === undefined
    ? { kind: "start", streamId, customParameters, encoding, sampleRate }
    : { kind: "start", streamId, callId, customParameters, encoding, sampleRate };
}

function decodeFrame(frame: JsonObject): CarrierInbound {
  const event = frame["event"];
  switch (event) {
    case "start":
      return decodeStart(frame);
    case "media": {
      const media = obj(frame, "media");
      if (media === undefined) return ignored("media without a media object");
      const track = media["track"];
      if (track !== undefined && track !== "inbound") return ignored(`track ${label(track)} is not the caller`);
      return mediaFrom(media["payload"], media["timestamp"]);
    }
    case "playedStream":
      return markName(frame["name"]);
    case "clearedAudio":
      return ignored("clearedAudio");
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

export function createPlivoCodec(
  output: PlivoOutputFormat = { contentType: "audio/x-l16", sampleRate: 16000 },
): CarrierCodec {
  const { contentType, sampleRate } = output;
  return {
    carrier: "plivo",
    decode(frame, isBinary) {
      return safely(() => {
        const parsed = parseTextFrame(frame, isBinary);
        return typeof parsed === "string" ? ignored(parsed) : decodeFrame(parsed);
      });
    },
    /** `playAudio` carries no stream id (vendors.md §8c). */
    encodeMedia(_streamId, payload) {
      return JSON.stringify({ event: "playAudio", media: { contentType, sampleRate, payload: encodeBase64(payload) } });
    },
    encodeMark(streamId, name) {
      return JSON.stringify({ event: "checkpoint", streamId, name });
    },
    encodeClear(streamId) {
      return JSON.stringify({ event: "clearAudio", streamId });
    },
  };
}

/** Plivo codec for `contentType="audio/x-l16;rate=16000"`. */
export const plivoCodec: CarrierCodec = createPlivoCodec();
