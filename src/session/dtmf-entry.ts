import type { Clock, Timer } from "../clock.js";
import { DEFAULTS } from "../manifest/index.js";
import { MAX_DTMF_DIGITS } from "./conversation.js";

/**
 * Keypad digits gathered into entries: digits within `DEFAULTS.dtmfInterDigitMs` of each other
 * form one entry; `#` ends it at once (and alone it is the entry); an entry is at most
 * `MAX_DTMF_DIGITS` digits, so a key held down or a flood of frames is handed on in pieces.
 */
export class DtmfEntry {
  readonly #clock: Clock;
  readonly #entered: (digits: string) => void;
  #digits = "";
  #timer: Timer | undefined;

  /** `entered`: one complete entry (never empty). */
  constructor(clock: Clock, entered: (digits: string) => void) {
    this.#clock = clock;
    this.#entered = entered;
  }

  digit(digit: string): void {
    this.#timer?.cancel();
    this.#digits += digit;
    if (digit === "#" || this.#digits.length >= MAX_DTMF_DIGITS) return this.flush();
    this.#timer = this.#clock.setTimeout(() => this.flush(), DEFAULTS.dtmfInterDigitMs);
  }

  flush(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    const digits = this.#digits.length > 1 && this.#digits.endsWith("#") ? this.#digits.slice(0, -1) : this.#digits;
    this.#digits = "";
    if (digits !== "") this.#entered(digits);
  }

  close(): void {
    this.#timer?.cancel();
  }
}
