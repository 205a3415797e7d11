/**
 * The per-address connection budget (`connectionsPerMinute`, docs/security.md "Flooding with
 * connections"): every upgrade (`/websocket`, `/telephony/*`), telephony webhook, request to one
 * of the agent's `routes` or the workflows API and `POST /v1/sessions` takes one connection from its client address's bucket, held by the
 * coordinator so every process of the deployment shares it. Off unless `perMinute` > 0. When the
 * coordinator cannot answer, the connection is let through: a budget is for fairness, and refusing
 * everyone would be an outage.
 */
import { LogThrottle, type Logger } from "../log.js";
import type { Coordinator } from "./coordination.js";

export class ConnectionBudget {
  readonly #coordinator: Coordinator;
  readonly #perMinute: number;
  readonly #log: Logger;
  /** Warnings strangers cause, at most one line per kind every 10 s. */
  readonly #throttle: LogThrottle;

  /** `perMinute`: connections one address may make a minute; not a positive number turns the budget off. */
  constructor(coordinator: Coordinator, perMinute: number, log: Logger, now: () => number) {
    this.#coordinator = coordinator;
    this.#perMinute = Number.isFinite(perMinute) && perMinute > 0 ? perMinute : 0;
    this.#log = log;
    this.#throttle = new LogThrottle(now);
  }

  /** Why a connection over the budget is refused: the 429's body. */
  get refusal(): string {
    return `more than ${this.#perMinute} connections a minute from this address; retry later`;
  }

  /** One more connection from this client address (the socket's peer), within the budget? */
  async admit(address: string | undefined): Promise<boolean> {
    if (this.#perMinute === 0) return true;
    const remote = address ?? "unknown";
    const ok = await this.#coordinator.admit(remote, this.#perMinute).catch((err: unknown) => {
      this.#throttle.warn(this.#log, { err }, "connection budget unavailable; connection let through");
      return true;
    });
    if (!ok) this.#throttle.warn(this.#log, { remote, perMinute: this.#perMinute }, "connection rate limit");
    return ok;
  }
}
