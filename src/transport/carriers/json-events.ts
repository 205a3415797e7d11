/**
 * Shared decoding steps for the JSON-event carriers (Twilio, Telnyx, Plivo, Exotel): the `start`
 * field reading, the caller-track media check, nested mark/dtmf objects, the decode wrapper and
 * the Twilio-style media-stream dialect (`mediaStreamCodec`) that Twilio, Telnyx and Exotel share.
 * Each carrier file keeps only its vendor specifics (event names, field names, outbound shapes).
 */
import {
  dtmfDigit,
  ignored,
  intField,
  label,
  markName,
  mediaFrom,
  obj,
  parseTextFrame,
  safely,
  str,
  type CarrierCodec,
  type CarrierEncoding,
  type CarrierInbound,
  type CarrierName,
  type JsonObject,
} from "./carrier.js";
import { Base64Frame } from "../../audio/base64-frame.js";

/** Where a carrier puts the fields of its `start` event. */
export interface StartFields {
  /** Stream id key, looked up in `sources` order (`frame` = top level, `start` = the start object). */
  readonly streamIdKey: string;
  readonly streamIdSources: readonly ("frame" | "start")[];
  /** Key of the media format object inside `start`. */
  readonly formatKey: string;
  /** Encoding name assumed when the format object is absent. */
  readonly defaultEncoding: string;
  readonly encodingOf: (name: string) => CarrierEncoding | undefined;
  /** Key of the sample rate inside the format object. */
  readonly rateKey: string;
  readonly defaultRate: (encoding: CarrierEncoding) => number;
  readonly callIdKey: string;
  readonly customParameters: (frame: JsonObject, start: JsonObject) => Record<string, string>;
}

/** Decode a `start` frame by the carrier's field layout, or say why not. */
export function decodeStartWith(frame: JsonObject, fields: StartFields): CarrierInbound {
  const start = obj(frame, "start");
  if (start === undefined) return ignored("start without a start object");
  let streamId: string | undefined;
  for (const source of fields.streamIdSources) {
    streamId ??= str(source === "frame" ? frame : start, fields.streamIdKey);
  }
  if (streamId === undefined || streamId.length === 0) return ignored(`start without ${fields.streamIdKey}`);
  const format = obj(start, fields.formatKey);
  const encodingName = format === undefined ? fields.defaultEncoding : str(format, "encoding");
  const encoding = encodingName === undefined ? undefined : fields.encodingOf(encodingName);
  if (encoding === undefined) return ignored(`unsupported encoding ${label(encodingName)}`);
  const rateRaw = format?.[fields.rateKey];
  const sampleRate = rateRaw === undefined ? fields.defaultRate(encoding) : intField(rateRaw);
  if (sampleRate === undefined || sampleRate === 0) return ignored(`start with an invalid ${fields.rateKey}`);
  const callId = str(start, fields.callIdKey);
  const customParameters = fields.customParameters(frame, start);
  return callId === undefined
    ? { kind: "start", streamId, customParameters, encoding, sampleRate }
    : { kind: "start", streamId, callId, customParameters, encoding, sampleRate };
}

/** `media` from the nested `media` object, keeping only the caller (`inbound`) track. */
export function callerMedia(frame: JsonObject): CarrierInbound {
  const media = obj(frame, "media");
  if (media === undefined) return ignored("media without a media object");
  const track = media["track"];
  if (track !== undefined && track !== "inbound") return ignored(`track ${label(track)} is not the caller`);
  return mediaFrom(media["payload"], media["timestamp"], media["chunk"]);
}

/** `mark` from the nested `mark: { name }` object. */
export function nestedMark(frame: JsonObject): CarrierInbound {
  const mark = obj(frame, "mark");
  return mark === undefined ? ignored("mark without a mark object") : markName(mark["name"]);
}

/** `dtmf` from the nested `dtmf: { digit }` object. */
export function nestedDtmf(frame: JsonObject): CarrierInbound {
  const dtmf = obj(frame, "dtmf");
  return dtmf === undefined ? ignored("dtmf without a dtmf object") : dtmfDigit(dtmf["digit"]);
}

/** `ignored` for an event the carrier's switch does not know. */
export function unknownEvent(event: unknown): CarrierInbound {
  return ignored(typeof event === "string" ? `unknown event ${event.slice(0, 64)}` : "frame without an event");
}

/** The `decode` of a JSON-text carrier: parse, then map; never throws. */
export function decodeJsonFrame(
  frame: string | Uint8Array,
  isBinary: boolean,
  decodeFrame: (frame: JsonObject) => CarrierInbound,
): CarrierInbound {
  return safely(() => {
    const parsed = parseTextFrame(frame, isBinary);
    return typeof parsed === "string" ? ignored(parsed) : decodeFrame(parsed);
  });
}

/**
 * The Twilio-style media-stream dialect that Twilio, Telnyx and Exotel share: inbound
 * `connected`/`start`/`media`/`mark`/`dtmf`/`stop`, outbound `media`/`mark`/`clear`.
 */
export interface MediaStreamDialect {
  readonly carrier: CarrierName;
  readonly start: StartFields;
  /** Key naming the stream on outbound frames; `undefined` where the carrier needs none. */
  readonly outboundStreamKey: string | undefined;
  /** Handlers for events beyond the shared set, or replacing one of it. */
  readonly events?: Readonly<Record<string, (frame: JsonObject) => CarrierInbound>>;
  /** Outbound frame sizes the carrier requires (see `CarrierCodec.framing`). */
  readonly framing?: CarrierCodec["framing"];
}

export function mediaStreamCodec(dialect: MediaStreamDialect): CarrierCodec {
  const { events, outboundStreamKey } = dialect;
  const decodeFrame = (frame: JsonObject): CarrierInbound => {
    const event = frame["event"];
    const handler =
      typeof event === "string" && events !== undefined && Object.hasOwn(events, event) ? events[event] : undefined;
    if (handler !== undefined) return handler(frame);
    switch (event) {
      case "connected":
        return ignored("connected");
      case "start":
        return decodeStartWith(frame, dialect.start);
      case "media":
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
  };
  const outbound = (event: string, streamId: string, body: JsonObject = {}): string =>
    JSON.stringify({ event, ...(outboundStreamKey === undefined ? {} : { [outboundStreamKey]: streamId }), ...body });
  return {
    carrier: dialect.carrier,
    marks: true,
    ...(dialect.framing === undefined ? {} : { framing: dialect.framing }),
    decode: (frame, isBinary) => decodeJsonFrame(frame, isBinary, decodeFrame),
    mediaEncoder: (streamId) => new Base64Frame((payload) => ({ event: "media", ...(outboundStreamKey === undefined ? {} : { [outboundStreamKey]: streamId }), media: { payload } })),
    encodeMark: (streamId, name) => outbound("mark", streamId, { mark: { name } }),
    encodeClear: (streamId) => outbound("clear", streamId),
  };
}
