/**
 * Gemini Live: after a `goAway`, when to switch sockets (docs/vendors.md (Gemini Live),
 * "Resumption and goAway").
 *
 * Switch once the service is between turns and the newest handle reflects the last one. A
 * `sessionResumptionUpdate` follows `turnComplete` in a message of its own, and while the model
 * generates or runs function calls the service sends only `{resumable:false}` (SDK
 * `LiveServerSessionResumptionUpdate`: "Resuming session (using previous session token) in such
 * state will result in some data loss"). So a switch waits for: no response in flight, no tool round
 * open, and — on a socket that sends handles — a handle newer than the last turn. The alternative,
 * reading the retired socket until the server closes it, would keep the switch until `timeLeft`
 * runs out and cut a response mid-way ("terminated as ABORTED"); waiting for the handle costs
 * nothing while it comes as documented. Bounds: a missing handle is waited for
 * `GEMINI_RESUMPTION_WAIT_MS`, then the newest one is used (it restores the service's own state up
 * to it; a history replay would lose that and any reply still playing); the `goAway` deadline
 * switches regardless, `GOAWAY_MARGIN_MS` before `timeLeft` runs out.
 */
import type { Clock, Timer } from "../../../clock.js";
import type { ProviderLog } from "../../../providers/provider-log.js";

/** Switch sockets this long before a `goAway`'s `timeLeft` runs out, even mid-response. */
const GOAWAY_MARGIN_MS = 1000;
/**
 * After a `goAway`, how long a switch waits (ms, from the end of the last turn) for the
 * `sessionResumptionUpdate` that follows that turn before it resumes from the newest handle it
 * has. The service sends it in a message of its own right after `turnComplete`, so this bounds a
 * missing one, never a normal exchange; the `goAway` deadline bounds it as well.
 */
export const GEMINI_RESUMPTION_WAIT_MS = 2000;

/** The socket a `goAway` came on: `sentHandle`, the service sent a resumable handle on it. */
export interface DrainingLink {
  readonly id: number;
  readonly sentHandle: boolean;
}

export interface GoAwayHooks<L extends DrainingLink> {
  /** The session's socket while the session is open; undefined otherwise. */
  current(): L | undefined;
  /** A response is in flight or a tool round is open. */
  busy(): boolean;
  /** The newest handle came after the last turn ended. */
  handleCurrent(): boolean;
  /** Retire `link` and dial its successor now. */
  switchTo(link: L): void;
}

/** A proto3 JSON duration (`"5s"`, `"1.5s"`) in ms. */
function durationMs(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match?.[1] === undefined ? undefined : Math.round(Number(match[1]) * 1000);
}

export class GoAwaySwitch<L extends DrainingLink> {
  #draining: L | undefined;
  /** The `goAway` deadline: switch then, even mid-response. */
  #drainTimer: Timer | undefined;
  /** Bounds the wait for the handle that follows the last turn (`GEMINI_RESUMPTION_WAIT_MS`). */
  #handleWait: Timer | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly log: ProviderLog,
    private readonly hooks: GoAwayHooks<L>,
  ) {}

  /** The socket being drained, if a `goAway` came on it. */
  get draining(): L | undefined {
    return this.#draining;
  }

  goAway(link: L, goAway: Record<string, unknown>): void {
    if (this.#draining !== undefined) return;
    const left = durationMs(goAway.timeLeft) ?? 0;
    this.log.debug({ timeLeft: goAway.timeLeft }, "gemini-live: goAway; switching sockets between turns, with the newest resumption handle");
    this.#draining = link;
    this.#drainTimer = this.clock.setTimeout(() => this.#switch(), Math.max(0, left - GOAWAY_MARGIN_MS));
  }

  /** Switch now if the service is between turns and the handle is current (see the header). */
  maybeSwitch(): void {
    const link = this.#draining;
    if (link === undefined || link !== this.hooks.current()) return;
    if (this.hooks.busy()) return;
    if (!this.hooks.handleCurrent() && link.sentHandle) {
      this.#handleWait ??= this.clock.setTimeout(() => {
        this.#handleWait = undefined;
        if (this.hooks.busy()) return; // a new turn: its end starts another wait
        this.log.warn({ link: link.id, waitedMs: GEMINI_RESUMPTION_WAIT_MS }, "gemini-live: goAway; no resumption handle after the last turn; resuming from the newest one");
        this.#switch();
      }, GEMINI_RESUMPTION_WAIT_MS);
      return;
    }
    this.#switch();
  }

  stop(): void {
    this.#drainTimer?.cancel();
    this.#drainTimer = undefined;
    this.#handleWait?.cancel();
    this.#handleWait = undefined;
    this.#draining = undefined;
  }

  /** Swap sockets after a `goAway`: between turns (`maybeSwitch`), or at the deadline even mid-response. */
  #switch(): void {
    const link = this.#draining;
    this.stop();
    if (link === undefined || link !== this.hooks.current()) return;
    this.hooks.switchTo(link);
  }
}
