import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../log.js";
import type { ResolvedConfig } from "../manifest/index.js";
import type { ToolInvocation } from "../pipeline/tool-port.js";
import { MAX_QUEUED_TURNS } from "./conversation.js";
import { DtmfEntry } from "./dtmf-entry.js";

export interface KeypadHooks {
  readonly clock: Clock;
  readonly log: Logger;
  /** The agent's `dtmf`: entries as typed turns ("text"), or as calls of the tool it names. */
  readonly dtmfSetting: ResolvedConfig["dtmf"];
  /** The session is live: keys pressed, and entries completed, before the start or after the end are dropped. */
  live(): boolean;
  /** A key press is conversational activity (re-arms the idle timer). */
  activity(): void;
  /** User turns waiting behind the reply in flight. */
  queuedTurns(): number;
  userText(text: string): void;
  callTool(call: ToolInvocation): void;
}

/**
 * The caller's keypad: digits gathered into entries (`DtmfEntry`), each entry a typed turn "The
 * caller pressed 1234" (waiting in the same bounded queue as typed turns: dropped past
 * `MAX_QUEUED_TURNS`) or one call of the `dtmf.tool` (ids `dtmf_1`, `dtmf_2`, …), which the
 * session's end cancels.
 */
export class Keypad {
  readonly #hooks: KeypadHooks;
  readonly #entry: DtmfEntry;
  #calls = 0;
  /** Aborted when the session ends: the tool calls the keypad started. */
  readonly #lifetime = new AbortController();

  constructor(hooks: KeypadHooks) {
    this.#hooks = hooks;
    this.#entry = new DtmfEntry(hooks.clock, (digits) => this.#entered(digits));
  }

  digit(digit: string): void {
    if (!this.#hooks.live()) return;
    this.#entry.digit(digit);
    this.#hooks.activity();
  }

  /** The session ended: a half-typed entry is dropped and the keypad's tool calls are cancelled. */
  close(): void {
    this.#entry.close();
    this.#lifetime.abort(new GatewayError("connection", "the session ended"));
  }

  #entered(digits: string): void {
    const { log, dtmfSetting: dtmf } = this.#hooks;
    if (!this.#hooks.live()) return;
    log.info({ digits: digits.length }, "dtmf");
    if (dtmf === "text") {
      if (this.#hooks.queuedTurns() >= MAX_QUEUED_TURNS) {
        log.warn({ digits: digits.length }, "dtmf dropped: too many turns waiting");
        return;
      }
      this.#hooks.userText(`The caller pressed ${digits}`);
      return;
    }
    this.#hooks.callTool({ toolCallId: `dtmf_${++this.#calls}`, toolName: dtmf.tool, args: { digits }, signal: this.#lifetime.signal });
  }
}
