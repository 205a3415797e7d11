// The steps every mode's model-based fuzz plays on the client's side of a session, besides its
// mode's own: virtual time passing, and the `cancel` and `reset` commands (docs/protocol.md).
import type { VirtualClock } from "../../src/clock.js";
import type { MemoryLink } from "../../src/testing/memory-link.js";

export type ClientStep = { readonly kind: "wait"; readonly ms: number } | { readonly kind: "cancel" } | { readonly kind: "reset" };

/** Whether `step` is one of the client's steps (the rest are the mode's own). */
export function isClientStep(step: { readonly kind: string }): step is ClientStep {
  return step.kind === "wait" || step.kind === "cancel" || step.kind === "reset";
}

/** Plays a client step: `ms` pass on `clock`, or the command goes to the session through `link`. */
export async function playClientStep(step: ClientStep, link: MemoryLink, clock: VirtualClock): Promise<void> {
  if (step.kind === "wait") await clock.advance(step.ms);
  else link.send({ type: step.kind });
}
