/**
 * A carrier's answering-machine verdict, from its signed callback to the session running that
 * call. The callback may reach any process of the deployment, and the call's stream another:
 * a session of this process that watches the call gets the verdict at once; otherwise it is kept
 * by the coordinator (the `--workers` primary, or Redis across instances) for `VERDICT_TTL_MS`, and
 * a watching session anywhere takes it on its next look (every `VERDICT_POLL_MS`), as does one
 * whose stream starts after the verdict came. A machine's greeting end (Vonage's beep) replaces a
 * machine verdict still kept.
 */
import type { Clock, Timer } from "../../clock.js";
import type { Logger } from "../../log.js";
import { carrierVerdict, parseAnsweredBy, type CarrierVerdict } from "../../voicemail/answered-by.js";
import type { Coordinator } from "../coordination.js";

/** A verdict nobody has taken is kept this long (ms): a screen waits no longer than its window. */
export const VERDICT_TTL_MS = 120_000;
/** A session watching a call looks for a verdict kept elsewhere this often (ms). */
export const VERDICT_POLL_MS = 250;

export class CarrierVerdicts {
  readonly #coordinator: Coordinator;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #watchers = new Map<string, (verdict: CarrierVerdict) => void>();

  constructor(coordinator: Coordinator, clock: Clock, log: Logger) {
    this.#coordinator = coordinator;
    this.#clock = clock;
    this.#log = log;
  }

  /** A verdict for `callId` came: to its session here, else kept for it. "session": delivered; "kept"; "lost": neither. */
  async deliver(callId: string, verdict: CarrierVerdict): Promise<"session" | "kept" | "lost"> {
    const watcher = this.#watchers.get(callId);
    if (watcher !== undefined) {
      watcher(verdict);
      return "session";
    }
    const key = `verdict:${callId}`;
    if (await this.#coordinator.hold(key, verdict.answeredBy, VERDICT_TTL_MS)) return "kept";
    // A machine's greeting end (Vonage's beep) came before its session took the machine verdict: it
    // says all the earlier one did, and that the message may start.
    if (verdict.kind !== "machine" || !verdict.greetingEnded) return "lost";
    await this.#coordinator.take(key);
    return (await this.#coordinator.hold(key, verdict.answeredBy, VERDICT_TTL_MS)) ? "kept" : "lost";
  }

  /** Watch `callId`'s verdicts (one is acted on: the session stops watching once it decided); the unsubscribe. */
  watch(callId: string, listener: (verdict: CarrierVerdict) => void): () => void {
    let timer: Timer | undefined;
    let watching = true;
    const stop = (): void => {
      watching = false;
      timer?.cancel();
      if (this.#watchers.get(callId) === listener) this.#watchers.delete(callId);
    };
    this.#watchers.set(callId, listener);
    const look = (): void => {
      void this.#coordinator
        .take(`verdict:${callId}`)
        .then((held) => {
          if (!watching) return;
          const answeredBy = parseAnsweredBy(held);
          if (answeredBy !== undefined) listener(carrierVerdict(answeredBy));
          if (watching) timer = this.#clock.setTimeout(look, VERDICT_POLL_MS);
        })
        .catch((err: unknown) => {
          this.#log.warn({ err }, "carrier verdict lookup failed");
          if (watching) timer = this.#clock.setTimeout(look, VERDICT_POLL_MS);
        });
    };
    look();
    return stop;
  }
}
