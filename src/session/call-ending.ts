import type { Clock, Timer } from "../clock.js";
import type { Logger } from "../log.js";
import { DEFAULTS } from "../manifest/index.js";

/** How long the call-limit notice may take before the call is closed regardless (ms). */
export const CALL_LIMIT_NOTICE_MS = 20_000;

export interface CallEndingHooks {
  readonly clock: Clock;
  readonly log: Logger;
  /** The session is live: a limit falling due before the start or after the end does nothing. */
  live(): boolean;
  /** Speak a line as the agent's, as a greeting is: its reply settles once it has been heard. */
  say(text: string): void;
  /** Close the link normally (1000) with `reason`, and end the session. */
  close(reason: string): void;
}

/**
 * A call that ends once what the agent is saying has been heard: `end_call` (after the current
 * reply), the drain's farewell, and the call limit (`maxCallDurationMs`: its notice is spoken, then
 * the call ends once it has been heard, or after `CALL_LIMIT_NOTICE_MS` regardless).
 */
export class CallEnding {
  readonly #hooks: CallEndingHooks;
  /** Why the call ends once the current reply has been heard; the latest reason given wins. */
  #reason: string | undefined;
  #limit: Timer | undefined;

  constructor(hooks: CallEndingHooks) {
    this.#hooks = hooks;
  }

  /** An ending was asked for: the call ends once the reply in flight has been heard. */
  get ending(): boolean {
    return this.#reason !== undefined;
  }

  /** End the call once the current reply has been heard. */
  afterReply(reason: string): void {
    this.#reason = reason;
  }

  /** The drain's deadline on a call: the caller hears `text`, then the call ends once it has been heard. */
  farewell(text: string): void {
    this.#hooks.log.info({}, "farewell before shutdown");
    this.sayThenEnd(text, "gateway shutting down");
  }

  /** End the call now (a machine on the line, `voicemail.action` "hangup"): closed 1000 with `reason`, hung up as for end_call. */
  now(reason: string): void {
    this.#hooks.log.info({ reason }, "ending the call");
    this.#hooks.close(reason);
  }

  /** Say `text`, then end the call once it has been heard. */
  sayThenEnd(text: string, reason: string): void {
    this.#reason = reason;
    this.#hooks.say(text);
  }

  /** The call limit, `ms` from now (0 = none). */
  armLimit(ms: number): void {
    if (ms <= 0) return;
    const hooks = this.#hooks;
    const { clock, log } = hooks;
    this.#limit = clock.setTimeout(() => {
      if (!hooks.live()) return;
      log.info({ maxCallDurationMs: ms }, "call duration limit");
      this.sayThenEnd(DEFAULTS.callLimitPhrase, "call duration limit");
      // Bounded: a notice that never finishes (a stuck provider) still ends the call.
      this.#limit = clock.setTimeout(() => hooks.close("call duration limit"), CALL_LIMIT_NOTICE_MS);
    }, ms);
  }

  /** A reply has settled (a spoken one once heard): the call ends now if an ending was asked for. */
  replySettled(): void {
    const reason = this.#reason;
    if (reason === undefined) return;
    this.#hooks.log.info({ reason }, "ending after the reply");
    this.#hooks.close(reason);
  }

  /** The session ended: the limit's timers are cancelled. */
  stop(): void {
    this.#limit?.cancel();
  }
}
