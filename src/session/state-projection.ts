import type { Logger } from "../log.js";
import { dialogPositions, type AnyDialog, type DialogStore, type SyncStateContext } from "../manifest/index.js";

/** The agent's `syncState(session, ctx)`: the session value and what else it reads. */
export type SyncState = (session: unknown, ctx: SyncStateContext) => unknown;

/**
 * The agent's `syncState(session, { dialogs })` projected to the client as `state.updated`, only
 * when it changed (compared as JSON). `dialogs` is each registered dialog's position in the
 * conversation's store. A projection that throws is logged and skipped, never fatal.
 */
export class StateProjection {
  readonly #sync: SyncState | undefined;
  readonly #dialogs: Readonly<Record<string, AnyDialog>> | undefined;
  readonly #log: Logger;
  readonly #changed: (state: unknown) => void;
  #last: string | undefined;

  constructor(
    agent: { readonly syncState?: SyncState | undefined; readonly dialogs?: Readonly<Record<string, AnyDialog>> | undefined },
    log: Logger,
    changed: (state: unknown) => void,
  ) {
    this.#sync = agent.syncState;
    this.#dialogs = agent.dialogs;
    this.#log = log;
    this.#changed = changed;
  }

  /** After anything that may change the session value or a dialog (a reply, a tool call, a resume). */
  project(session: unknown, dialogs: DialogStore): void {
    if (this.#sync === undefined) return;
    try {
      const state = this.#sync(session, { dialogs: dialogPositions(this.#dialogs, dialogs) });
      const json = JSON.stringify(state);
      if (json === this.#last) return;
      this.#last = json;
      this.#changed(state);
    } catch (error) {
      this.#log.warn({ err: error }, "syncState failed");
    }
  }
}
