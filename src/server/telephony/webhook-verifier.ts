/**
 * The carriers' webhook secrets, read once from the environment, and the check of one webhook
 * against them (docs/telephony.md "Who may call"; the signature schemes: signatures.ts). Exotel
 * signs nothing: its key and token authenticate its stream (Basic auth), not its webhook.
 */
import type { IncomingMessage } from "node:http";
import type { KeyObject } from "node:crypto";
import type { Clock } from "../../clock.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import { firstHeader, nonEmpty } from "./http.js";
import { telnyxPublicKey, validPlivoSignature, validTelnyxSignature, validTwilioSignature, validVonageSignature } from "./signatures.js";

/** A verified webhook's signature (its replay key), or why it does not verify. */
export type Verification = { readonly signature: string } | { readonly refusal: string };

export class WebhookVerifier {
  readonly #clock: Clock;
  readonly #twilioToken: string | undefined;
  readonly #telnyxKey: KeyObject | undefined;
  readonly #plivoToken: string | undefined;
  readonly #vonageSecret: string | undefined;
  /** `KEY:TOKEN` for Exotel's stream Basic auth, when both are set. */
  readonly exotelAuth: string | undefined;

  /** Throws (naming the variable) when TELNYX_PUBLIC_KEY is set but is not an Ed25519 key. */
  constructor(env: Readonly<Record<string, string | undefined>>, clock: Clock) {
    this.#clock = clock;
    this.#twilioToken = nonEmpty(env.TWILIO_AUTH_TOKEN);
    this.#plivoToken = nonEmpty(env.PLIVO_AUTH_TOKEN);
    this.#vonageSecret = nonEmpty(env.VONAGE_SIGNATURE_SECRET);
    const telnyx = nonEmpty(env.TELNYX_PUBLIC_KEY);
    this.#telnyxKey = telnyx === undefined ? undefined : telnyxPublicKey(telnyx);
    this.exotelAuth = nonEmpty(env.EXOTEL_API_KEY) !== undefined && nonEmpty(env.EXOTEL_API_TOKEN) !== undefined ? `${env.EXOTEL_API_KEY}:${env.EXOTEL_API_TOKEN}` : undefined;
  }

  /** Which carriers have their secret set (Exotel: its key and token). */
  get secretSet(): Record<CarrierName, boolean> {
    return {
      twilio: this.#twilioToken !== undefined,
      telnyx: this.#telnyxKey !== undefined,
      plivo: this.#plivoToken !== undefined,
      vonage: this.#vonageSecret !== undefined,
      exotel: this.exotelAuth !== undefined,
    };
  }

  /** The Twilio token, for the signed stream upgrade. */
  get twilioToken(): string | undefined {
    return this.#twilioToken;
  }

  /**
   * Checks one webhook. `signedUrl`: the URL the carrier requested, as the carrier saw it (the
   * public base and the path); `method` and `body` as received.
   */
  verify(carrier: CarrierName, req: IncomingMessage, signedUrl: string, method: string, body: string): Verification {
    const header = (name: string): string | undefined => firstHeader(req.headers[name]);
    switch (carrier) {
      case "twilio": {
        const signature = header("x-twilio-signature");
        if (this.#twilioToken === undefined || !validTwilioSignature(this.#twilioToken, signature, signedUrl, [...new URLSearchParams(body).entries()], body)) {
          return { refusal: "X-Twilio-Signature does not match: check TWILIO_AUTH_TOKEN and SWITCHBOARD_PUBLIC_URL" };
        }
        return { signature: signature ?? "" };
      }
      case "telnyx": {
        const signature = header("telnyx-signature-ed25519");
        if (this.#telnyxKey === undefined || !validTelnyxSignature(this.#telnyxKey, signature, header("telnyx-timestamp"), body, this.#clock.now())) {
          return { refusal: "telnyx-signature-ed25519 does not verify (or the timestamp is over 300 s off): check TELNYX_PUBLIC_KEY" };
        }
        return { signature: signature ?? "" };
      }
      case "plivo": {
        const params = method === "POST" ? [...new URLSearchParams(body).entries()] : [];
        const signature = header("x-plivo-signature-v3");
        const nonce = header("x-plivo-signature-v3-nonce");
        if (this.#plivoToken === undefined || !validPlivoSignature(this.#plivoToken, signature, nonce, method, signedUrl, params)) {
          return { refusal: "X-Plivo-Signature-V3 does not match: check PLIVO_AUTH_TOKEN and SWITCHBOARD_PUBLIC_URL" };
        }
        return { signature: `${nonce ?? ""}.${signature ?? ""}` };
      }
      case "vonage": {
        const authorization = header("authorization");
        if (this.#vonageSecret === undefined || !validVonageSignature(this.#vonageSecret, authorization, body, this.#clock.now())) {
          return { refusal: "the signed-webhook JWT does not verify (or its iat is over 300 s off, or payload_hash does not match the body): check VONAGE_SIGNATURE_SECRET and enable signed webhooks" };
        }
        return { signature: authorization ?? "" };
      }
      case "exotel":
        return { refusal: "Exotel webhooks carry no signature" };
    }
  }
}
