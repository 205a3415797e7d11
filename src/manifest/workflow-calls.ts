/**
 * Calling out from a workflow (docs/workflows.md "Calling out"): what a body gives
 * `ctx.calls.place`, what it gets back, and the outcome `ctx.calls.outcome` waits for. Plain data
 * only: all of it crosses the run's journal, and the outbound call's session sees `OutboundCall`.
 */
import type { JsonValue } from "./tool-def.js";
import type { Duration } from "./duration.js";

/** What `ctx.calls.place` takes. */
export interface CallRequest {
  /** The callee, E.164 (`"+14155550123"`). */
  readonly to: string;
  /** The gateway's number to call from, E.164; default `SWITCHBOARD_CALLS_FROM`. */
  readonly from?: string;
  /** `"twilio"` or `"telnyx"`; default the one of them the agent's `telephony` mounts. */
  readonly carrier?: string;
  /** Why the agent calls, in a sentence (at most 500 characters): its session sees it. */
  readonly why?: string;
  /** Plain JSON for the call's session (at most 8 KiB); default the run's own `context`. */
  readonly context?: { readonly [key: string]: JsonValue };
}

/** A call `ctx.calls.place` asked the carrier for. Pass it to `ctx.calls.outcome`. */
export interface PlacedCall {
  /** The engine's token the call's outcome is delivered under (`call:<runId>:<n>`). */
  readonly token: string;
  readonly carrier: string;
  readonly to: string;
  readonly from: string;
  /** The carrier's call id, when its answer named one (Telnyx's documented answer does not). */
  readonly callId?: string;
  /**
   * The step was tried again after a try that may have dialled (a crash, or no answer from the
   * carrier's API): the gateway does not dial twice, so whether the call exists is unknown. Its
   * outcome still comes if it does.
   */
  readonly uncertain?: true;
}

/** How a placed call ended, as `ctx.calls.outcome` resolves. */
export type CallOutcome =
  /** The call was answered and its session ran; `answeredBy` is the voicemail screen's verdict (`unknown` when the agent screens nothing). */
  | {
      readonly status: "answered";
      readonly answeredBy: "human" | "machine" | "unknown";
      readonly sessionId: string;
      readonly callId?: string;
    }
  /** The carrier's status report: the call was never answered by the gateway. `failed` with a `reason` when it connected but the gateway never took it. */
  | { readonly status: "no-answer" | "busy" | "failed" | "canceled"; readonly callId?: string; readonly reason?: string }
  /** `timeout` passed first. */
  | { readonly status: "timeout" };

/** `ctx.calls`: place a call, then wait for how it went. */
export interface WorkflowCalls {
  /**
   * Place a call through the gateway's telephony (a journalled step: a replay returns the same
   * call, and a retried step never dials twice). Rejects when it is refused (the number, the
   * carrier, the budget, the carrier's own refusal) with the reason.
   */
  readonly place: (request: CallRequest) => Promise<PlacedCall>;
  /** Wait for the call's outcome, at most `timeout`; once per call. Never rejects on a timeout. */
  readonly outcome: (call: PlacedCall, options?: { readonly timeout?: Duration }) => Promise<CallOutcome>;
}

/** What an outbound call's session knows (`sessionContext({ outbound })`): the run that placed it, to whom and why. */
export interface OutboundCall {
  readonly runId: string;
  readonly workflow: string;
  readonly carrier: string;
  readonly to: string;
  readonly from: string;
  readonly why?: string;
  readonly context: { readonly [key: string]: JsonValue };
}
