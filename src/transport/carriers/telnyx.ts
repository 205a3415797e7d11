/** Telnyx media streaming codec, `rtp` bidirectional mode (docs/vendors.md (Carriers)). Pure; decode never throws. */
import {
  ignored,
  obj,
  str,
  stringRecord,
  type CarrierCodec,
  type CarrierEncoding,
  type CarrierInbound,
  type JsonObject,
  type OutboundFraming,
} from "./carrier.js";
import { mediaStreamCodec, type StartFields } from "./json-events.js";

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

function carrierError(frame: JsonObject): CarrierInbound {
  const payload = obj(frame, "payload");
  const title = payload === undefined ? undefined : str(payload, "title");
  return ignored(`carrier error ${title === undefined ? "" : title.slice(0, 64)}`.trimEnd());
}

/**
 * In `rtp` bidirectional mode a media payload is raw codec audio of 20 ms to 30 s (Telnyx media
 * streaming docs, "Bidirectional: RTP"): shorter frames are below the documented minimum.
 */
export const TELNYX_FRAME_MS = { min: 20, max: 30_000 } as const;

function telnyxFraming(encoding: CarrierEncoding, sampleRate: number): OutboundFraming {
  const bytesPerMs = ((encoding === "l16" ? 2 : 1) * sampleRate) / 1000;
  const sample = encoding === "l16" ? 2 : 1;
  return { multipleOf: sample, minBytes: TELNYX_FRAME_MS.min * bytesPerMs, maxBytes: TELNYX_FRAME_MS.max * bytesPerMs };
}

/** Outbound frames carry no stream id: Telnyx does not need one (docs/vendors.md (Carriers), "Stream ids"). */
export const telnyxCodec: CarrierCodec = mediaStreamCodec({
  carrier: "telnyx",
  start: START_FIELDS,
  outboundStreamKey: undefined,
  events: { error: carrierError },
  framing: telnyxFraming,
});
