import { dialog } from "switchboard";

/**
 * Returning an order, step by step: which order, the caller's confirmation, then the label. Its
 * tools (tools/start_return.ts, tools/confirm_return.ts) run only at their step; out of step they
 * are refused with where the return is and what must happen first (docs/config.md §10).
 */
export const returns = dialog({
  id: "returns",
  initial: "choose_order",
  states: {
    choose_order: {
      instruction: "Ask which order the caller wants to return, then call start_return with its id.",
      on: { CHOSEN: "confirm" },
    },
    confirm: {
      instruction: "Read the order id back, ask the caller to confirm the return, and call confirm_return with their answer.",
      on: { CONFIRMED: "booked", DECLINED: "choose_order" },
    },
    booked: {
      instruction: "The return is booked and a prepaid label is on its way by email: tell the caller, then ask if there is anything else.",
      type: "final",
    },
  },
});
