/**
 * Where a spoken conversation is, as one value (docs/architecture.md "The turn engine"):
 *
 * - `idle`: nobody is speaking and no reply is in flight;
 * - `listening`: the caller is speaking and the agent is not replying;
 * - `thinking`: a reply is in flight and none of its audio has left yet;
 * - `speaking`: the reply's audio is going out (the caller may be talking over it: held speech);
 * - `interrupted`: the reply was cut (barge-in or cancel) and is winding down (tools finishing,
 *   the heard prefix being recorded).
 *
 * Transitions not in the table are bugs and throw, so a coordinator cannot drift into a state
 * no one planned for.
 */
export type TurnPhase = "idle" | "listening" | "thinking" | "speaking" | "interrupted";

const NEXT: Readonly<Record<TurnPhase, readonly TurnPhase[]>> = {
  idle: ["listening", "thinking"],
  listening: ["idle", "thinking"],
  thinking: ["speaking", "interrupted", "idle", "listening"],
  speaking: ["interrupted", "idle", "listening"],
  interrupted: ["idle", "listening"],
};

export class TurnState {
  #phase: TurnPhase = "idle";
  readonly #changed: ((from: TurnPhase, to: TurnPhase) => void) | undefined;

  constructor(changed?: (from: TurnPhase, to: TurnPhase) => void) {
    this.#changed = changed;
  }

  get phase(): TurnPhase {
    return this.#phase;
  }

  /** A reply is in flight (thinking, speaking, or winding down after an interruption). */
  get replying(): boolean {
    return this.#phase === "thinking" || this.#phase === "speaking" || this.#phase === "interrupted";
  }

  /** Move to `to`; staying put is a no-op. Throws on a transition the table does not allow. */
  to(to: TurnPhase): void {
    const from = this.#phase;
    if (from === to) return;
    if (!NEXT[from].includes(to)) throw new Error(`turn state: ${from} → ${to} is not a transition`);
    this.#phase = to;
    this.#changed?.(from, to);
  }
}
