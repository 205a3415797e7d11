/**
 * Where one conversation keeps its dialogs' positions: the state each dialog is at, by dialog id.
 * A dialog that has not moved is absent and reads as its initial state. The gateway keeps one per
 * conversation (saved with the session record, replaced on a reset); a tool reads it as
 * `ctx.dialogs` (docs/config.md, "Dialogs").
 */
export class DialogStore {
  readonly #states = new Map<string, string>();

  /** A store holding `record`'s positions (the session record's `dialogs`); entries that are not state names are skipped. */
  static from(record: unknown): DialogStore {
    const store = new DialogStore();
    if (typeof record !== "object" || record === null || Array.isArray(record)) return store;
    for (const [id, state] of Object.entries(record as Record<string, unknown>)) {
      if (typeof state === "string") store.#states.set(id, state);
    }
    return store;
  }

  /** The state dialog `id` was moved to, or `undefined` when it has not moved (it is at its initial state). */
  stateOf(id: string): string | undefined {
    return this.#states.get(id);
  }

  /** Record that dialog `id` is now at `state`. */
  moveTo(id: string, state: string): void {
    this.#states.set(id, state);
  }

  /** Whether no dialog has moved. */
  get empty(): boolean {
    return this.#states.size === 0;
  }

  /** The positions as JSON, `{ [dialogId]: state }`: what the session record carries. */
  toJSON(): Record<string, string> {
    return Object.fromEntries(this.#states);
  }
}
