/**
 * Gemini Live: the session's sockets over time (one socket: `link.ts`). A transient close (the
 * close-code table of `src/providers`), or a `goAway` (`go-away.ts`), dials again with the one
 * reconnect loop of `src/providers`; anything else ends the session with one fatal error. The
 * conversation on the sockets is the subclass's (`session.ts`).
 */
import type { Clock } from "../../../clock.js";
import { GatewayError, messageOf } from "../../../errors.js";
import { isTransientClose } from "../../../providers/close-codes.js";
import { LogThrottle } from "../../../log.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { isRetryable, reconnect } from "../../../providers/reconnect.js";
import { closeGracefully, type SocketFactory } from "../../../providers/ws-connect.js";
import type { S2sEvents, S2sOpenOptions } from "../../s2s-port.js";
import { ShieldedEvents } from "../../shield-events.js";
import { GoAwaySwitch } from "./go-away.js";
import { dialLink, type Link } from "./link.js";
import type { GeminiLiveSettings } from "./settings.js";
import { geminiSetupMessage } from "./setup.js";

/** Runtime knobs, defaulted. */
export interface Runtime {
  readonly log: ProviderLog;
  readonly connect: SocketFactory;
  readonly clock: Clock;
  readonly reconnectDelaysMs: readonly number[];
  readonly openTimeoutMs: number;
  readonly closeTimeoutMs: number;
}

type State = "open" | "reconnecting" | "closing" | "closed";

export abstract class GeminiSockets {
  protected readonly events: S2sEvents;
  protected readonly goAway: GoAwaySwitch<Link>;
  protected state: State = "open";
  protected link: Link | undefined;
  #links = 0;
  /** Frames the service should not send, on any of the session's sockets: a line a kind every 10 s at most. */
  readonly #warnings: LogThrottle;
  /** Aborted by `close()`: stops a reconnect's wait or dial. */
  protected readonly stop = new AbortController();
  protected handle: string | undefined;
  /** `handle` came after the last turn ended: resuming with it loses nothing the service did. */
  protected handleCurrent = false;

  protected constructor(
    protected readonly settings: GeminiLiveSettings,
    protected readonly runtime: Runtime,
    protected readonly options: S2sOpenOptions,
    events: S2sEvents,
  ) {
    this.events = new ShieldedEvents(events, (event, error) => runtime.log.warn({ err: messageOf(error), event }, "an s2s event handler threw; ignored"));
    this.#warnings = new LogThrottle(() => runtime.clock.now());
    this.goAway = new GoAwaySwitch<Link>(runtime.clock, runtime.log, {
      current: () => (this.state === "open" ? this.link : undefined),
      busy: () => this.busy(),
      handleCurrent: () => this.handleCurrent,
      switchTo: (link) => {
        this.endTurn("failed");
        void this.closeLink(link);
        this.runtime.log.debug({ link: link.id }, "gemini-live: goAway; switching sockets");
        void this.reconnect(true);
      },
    });
  }

  /** A response is in flight or a tool round is open (no switch meanwhile). */
  protected abstract busy(): boolean;
  /** A server message on the ready socket. */
  protected abstract onMessage(link: Link, message: Record<string, unknown>): void;
  /** A new socket is ready: restore the conversation. */
  protected abstract restore(): void;
  /** The response in flight, if any, ends with `status`. */
  protected abstract endTurn(status: "completed" | "cancelled" | "failed"): void;

  /** Open a socket, send its one `setup`, and resolve on `setupComplete`. */
  protected dial(signal: AbortSignal | undefined): Promise<void> {
    const handle = this.handle;
    return dialLink({
      settings: this.settings,
      connect: this.runtime.connect,
      clock: this.runtime.clock,
      log: this.runtime.log,
      warnings: this.#warnings,
      openTimeoutMs: this.runtime.openTimeoutMs,
      id: ++this.#links,
      handle,
      setup: () => geminiSetupMessage(this.settings, this.options.setup, handle, this.runtime.log),
      signal,
      created: (link) => {
        this.link = link;
      },
      current: (link) => link === this.link,
      message: (link, message) => this.onMessage(link, message),
      closed: (link, code, reason) => this.onClosed(link, code, reason),
    });
  }

  /** A ready socket closed. */
  protected onClosed(link: Link, code: number, reason: string): void {
    if (link.retired || link !== this.link || this.state !== "open") return;
    link.retired = true;
    this.goAway.stop();
    this.endTurn("failed");
    if (!isTransientClose(code)) {
      this.fail(new GatewayError("s2s", `Gemini Live closed the connection (${code}${reason === "" ? "" : `: ${reason}`})`, { fatal: true }));
      return;
    }
    this.runtime.log.warn({ link: link.id, code, reason }, "gemini-live: connection dropped; reconnecting");
    void this.reconnect(false);
  }

  /**
   * Dial again until a socket is ready or the budget is spent. `now`: one immediate attempt first
   * (a `goAway` switch), outside the budget.
   */
  protected async reconnect(now: boolean): Promise<void> {
    this.state = "reconnecting";
    this.link = undefined;
    let resuming = false;
    const outcome = await reconnect({
      clock: this.runtime.clock,
      delaysMs: this.runtime.reconnectDelaysMs,
      immediately: now,
      signal: this.stop.signal,
      attempt: () => {
        resuming = this.handle !== undefined;
        return this.dial(this.stop.signal);
      },
      // A refused resumption handle (expired, or not resumable): the next attempt starts afresh.
      retryable: (error) => resuming || isRetryable(error),
      failed: (error, _n, retry) => {
        if (resuming) this.handle = undefined;
        if (retry) this.runtime.log.warn({ err: error.message }, "gemini-live: reconnect attempt failed");
      },
    });
    if (this.state !== "reconnecting") return;
    if (outcome.kind === "connected") {
      this.state = "open";
      this.restore();
    } else if (outcome.kind === "refused") {
      this.fail(new GatewayError("s2s", `Gemini Live reconnect refused: ${outcome.error.message}`, { fatal: true, cause: outcome.error }));
    } else if (outcome.kind === "exhausted") {
      const { last, attempts } = outcome;
      this.fail(
        new GatewayError("connection", `Gemini Live connection lost: ${attempts} reconnect attempts failed${last === undefined ? "" : ` (${last.message})`}`, {
          fatal: true,
          ...(last === undefined ? {} : { cause: last }),
        }),
      );
    }
  }

  protected closeLink(link: Link): Promise<void> {
    link.retired = true;
    return closeGracefully(link.ws, this.runtime.clock, this.runtime.closeTimeoutMs);
  }

  /** The link is gone for good: one fatal error, then `closed({expected:false})`. */
  protected fail(error: GatewayError): void {
    if (this.state === "closed" || this.state === "closing") return;
    this.state = "closed";
    this.stop.abort(error);
    this.goAway.stop();
    const link = this.link;
    this.link = undefined;
    if (link !== undefined) void this.closeLink(link);
    this.runtime.log.warn({ err: error.message }, "gemini-live: connection lost for good");
    this.events.error(error, { fatal: true });
    this.events.closed({ expected: false });
  }

  protected send(link: Link, message: object): void {
    if (link.ws.readyState !== link.ws.OPEN) return;
    try {
      link.ws.send(JSON.stringify(message));
    } catch (error) {
      this.runtime.log.warn({ err: messageOf(error) }, "gemini-live: message not sent");
    }
  }

}
