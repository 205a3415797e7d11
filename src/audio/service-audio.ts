import { LogThrottle, type LevelLog } from "../log.js";
import { strictBase64 } from "./strict-base64.js";
import { spread } from "../spread.js";

/**
 * A service's audio sent as base64 inside JSON (OpenAI Realtime's `delta`, Gemini Live's
 * `inlineData.data`, ElevenLabs' `audio`, Cartesia's `data`), decoded strictly (RFC 4648 §4,
 * strict-base64.ts). Node's decoder is lenient: it skips characters outside the alphabet
 * and stops at a stray `=`, so a corrupt chunk would become shorter, shifted audio that the
 * caller hears as noise and that moves every later byte offset (marks, truncation). A chunk that
 * is not strict base64 is dropped instead, with a warning at most once per LOG_THROTTLE_MS for
 * the adapter (the lines not written are counted on the next).
 */
export class ServiceAudio {
  readonly #message: string;
  readonly #log: LevelLog<"warn">;
  readonly #throttle: LogThrottle;

  /** `log`: the adapter's (a `ProviderLog`). */
  constructor(vendor: string, log: LevelLog<"warn">, now: () => number) {
    this.#message = `${vendor} sent audio that is not base64; dropped`;
    this.#log = log;
    this.#throttle = new LogThrottle(now);
  }

  /** The chunk's bytes; undefined (and a warning) when `text` is not strict base64. */
  decode(text: string, fields: Record<string, unknown> = {}): Buffer | undefined {
    const bytes = strictBase64(text);
    if (bytes === undefined) this.#throttle.warn(this.#log, spread(fields, { chars: text.length }), this.#message);
    return bytes;
  }
}
