/** Exotel Voicebot applet codec, bidirectional (docs/vendors.md (Carriers)). Pure; decode never throws. */
import { stringRecord, type CarrierCodec, type CarrierEncoding, type OutboundFraming } from "./carrier.js";
import { mediaStreamCodec, type StartFields } from "./json-events.js";

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

/** Outbound media chunks (docs/vendors.md (Carriers)): at least 3.2 KB, at most 100 KB, a multiple of 320 bytes. */
const EXOTEL_FRAMING: OutboundFraming = { multipleOf: 320, minBytes: 3200, maxBytes: 100 * 1024 };

/** Exotel streams only the caller, so the shared caller-track media check never filters here. */
export const exotelCodec: CarrierCodec = mediaStreamCodec({ carrier: "exotel", start: START_FIELDS, outboundStreamKey: "stream_sid", framing: () => EXOTEL_FRAMING });
