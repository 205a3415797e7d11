/** Every carrier codec by name (docs/vendors.md (Carriers)). */
import type { CarrierCodec, CarrierName } from "./carrier.js";
import { exotelCodec } from "./exotel.js";
import { plivoCodec } from "./plivo.js";
import { telnyxCodec } from "./telnyx.js";
import { twilioCodec } from "./twilio.js";
import { vonageCodec } from "./vonage.js";

export const CARRIER_CODECS: Readonly<Record<CarrierName, CarrierCodec>> = {
  twilio: twilioCodec,
  telnyx: telnyxCodec,
  plivo: plivoCodec,
  exotel: exotelCodec,
  vonage: vonageCodec,
};

export type { CarrierCodec, CarrierName } from "./carrier.js";
