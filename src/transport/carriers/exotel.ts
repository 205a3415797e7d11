/** Exotel Voicebot applet codec, bidirectional (vendors.md §8d). Pure; decode never throws. */
import { stringRecord, type CarrierCodec, type CarrierEncoding } from "./carrier.js";
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

/**
 * Exotel streams only the caller, so the shared caller-track media check never filters here.
 * Outbound media must be 3.2 KB–100 KB and a multiple of 320 bytes (vendors.md §8d); chunking to that
 * is the caller's job, this codec only frames what it is given.
 */
export const exotelCodec: CarrierCodec = mediaStreamCodec({
  carrier: "exotel",
  start: START_FIELDS,
  outboundStreamKey: "stream_sid",
});
