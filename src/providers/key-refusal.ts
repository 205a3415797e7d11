/**
 * A vendor refusing the key (HTTP 401/403 at the upgrade or on a request, or a vendor close code
 * meaning the same): fatal, since a retry sends the same key, and naming the variable to check,
 * as MissingKeyError does for a key that is not set. STT and TTS errors keep their own wording.
 */
import { GatewayError } from "../errors.js";

/** An HTTP status meaning the vendor refused the key. */
export function isKeyRefused(status: number): boolean {
  return status === 401 || status === 403;
}

/** An HTTP status at upgrade that a retry may cure: a server error, a request timeout, rate limiting (5xx, 408, 429). */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** STT: `how` is "HTTP 401", "close 4001", …; `detail` the vendor's reason, if any. */
export function sttKeyRefused(vendor: string, how: string, keyVariable: string, detail: string): GatewayError {
  return new GatewayError("stt", `${vendor} refused the API key (${how}); check ${keyVariable}${detail === "" ? "" : `: ${detail}`}`, { fatal: true });
}

/** TTS: the vendor's message is left out (OpenAI's echoes part of the key). */
export function ttsKeyRefused(vendor: string, status: number, keyVariable: string): GatewayError {
  return new GatewayError("tts", `${vendor} refused the API key (HTTP ${status}): check ${keyVariable}.`, { fatal: true });
}
