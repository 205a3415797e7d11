/** Twilio Media Streams codec (docs/vendors.md (Carriers)). Pure; decode never throws. */
import { G711_SAMPLE_RATE } from "../../audio/rates.js";
import {
  dtmfDigit,
  ignored,
  label,
  obj,
  stringRecord,
  type CarrierCodec,
  type CarrierInbound,
  type JsonObject,
} from "./carrier.js";
import { mediaStreamCodec, type StartFields } from "./json-events.js";

const START_FIELDS: StartFields = {
  streamIdKey: "streamSid",
  streamIdSources: ["frame", "start"],
  formatKey: "mediaFormat",
  defaultEncoding: "audio/x-mulaw",
  encodingOf: (name) => (name === "audio/x-mulaw" ? "mulaw" : undefined),
  rateKey: "sampleRate",
  defaultRate: () => G711_SAMPLE_RATE,
  callIdKey: "callSid",
  customParameters: (_frame, start) => stringRecord(start["customParameters"]),
};

/** Twilio tags DTMF with a track; only the caller's digits count. */
function callerDtmf(frame: JsonObject): CarrierInbound {
  const dtmf = obj(frame, "dtmf");
  if (dtmf === undefined) return ignored("dtmf without a dtmf object");
  const track = dtmf["track"];
  if (track !== undefined && track !== "inbound_track" && track !== "inbound") {
    return ignored(`dtmf on track ${label(track)}`);
  }
  return dtmfDigit(dtmf["digit"]);
}

export const twilioCodec: CarrierCodec = mediaStreamCodec({
  carrier: "twilio",
  start: START_FIELDS,
  outboundStreamKey: "streamSid",
  events: { dtmf: callerDtmf },
});
