import type { Logger } from "../log.js";

/**
 * The agent's `syncState(session)` projected to the client as `state.updated`, only when it
 * changed (compared as JSON). A projection that throws is logged and skipped, never fatal.
 */
export class StateProjection {
  readonly #sync: ((session: unknown) => unknown) | undefined;
  readonly #log: Logger;
  readonly #changed: (state: unknown) => void;
  #last: string | undefined;

  constructor(sync: ((session: unknown) => unknown) | undefined, log: Logger, changed: (state: unknown) => void) {
    this.#sync = sync;
    this.#log = log;
    this.#changed = changed;
  }

  /** After anything that may change the session value (a reply, a tool call). */
  project(session: unknown): void {
    if (this.#sync === undefined) return;
    try {
      const state = this.#sync(session);
      const json = JSON.stringify(state);
      if (json === this.#last) return;
      this.#last = json;
      this.#changed(state);
    } catch (error) {
      this.#log.warn({ err: error }, "syncState failed");
    }
  }
}
