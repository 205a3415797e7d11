/**
 * # order-desk: "I'll let you know as soon as it ships" — and then it does
 *
 * An order desk whose promise outlives the call (docs/workflows.md "Example: the order desk"):
 *
 * 1. A caller asks to hear when order A17 ships. `watch_order` starts a run of the `order_watch`
 *    workflow, keyed by the caller's number (`SessionInfo.phone`, from the carrier's signed
 *    webhook; a text or browser session gives an account instead), with `notify: true`.
 * 2. The run waits durably, up to 3 days, for the shipping system's webhook:
 *    `POST /workflows/events/shipped:A17` (with the gateway's API key; body `{ "carrier": "UPS" }`).
 * 3. Shipped while the caller is still on the line: the run ends and the agent tells them at the
 *    next polite moment (`notify`). Otherwise the run calls them back (`ctx.calls.place`, on
 *    Twilio; name `carrier` to use Telnyx) and waits for the call's outcome; a call nobody answers, or a voicemail, ends the run
 *    with that outcome, found on their next call.
 * 4. The call-back's session knows why it called (`sessionContext` reads `info.outbound`):
 *    `call_reason` says it when the callee answers.
 * 5. Calling again, the caller hears the status: `order_updates` finds their runs by the key.
 *
 * Run it offline with no keys (the scripted brain in offline.json): `npx switchboard dev
 * examples/order-desk`, then type "tell me when order A17 ships, my account is 42". To deliver
 * the shipping event set SWITCHBOARD_API_KEY (the workflows API needs it). Calling back needs
 * Twilio: SWITCHBOARD_PUBLIC_URL, TWILIO_AUTH_TOKEN and TWILIO_ACCOUNT_SID, and
 * SWITCHBOARD_CALLS_FROM, the number to call from (docs/telephony.md). One process (no
 * --workers): the embedded engine and the `lines` it reads are that process's.
 */
import { agent, type OutboundCall } from "switchboard";
import { lines } from "./lines.js";

/** What the desk's tools see as `ctx.session`. */
export interface Desk {
  /** The caller's number, on a phone call the carrier brought (its signed webhook named it). */
  readonly caller?: string;
  /** On a call-back the desk placed: the run that placed it, and why. */
  readonly outbound?: OutboundCall;
}

export default agent<Desk>({
  name: "order-desk",
  greeting: "Hi, this is the order desk at Example Shop.",
  systemPrompt:
    "You are the order desk of Example Shop. When a caller wants to hear when an order ships, call watch_order (on a text session, ask for their account number first). When they ask for news on their orders, call order_updates. If you placed this call (call_reason says so), tell the callee why as soon as they answer. Keep replies short.",
  voicePresets: ["phoneEtiquette"],
  builtinTools: ["end_call"],
  telephony: ["twilio"],
  stt: { kind: "deepgram", options: { model: "nova-3" } },
  llm: { kind: "openai", options: { model: "gpt-4.1-mini" } },
  tts: { kind: "cartesia", options: { model: "sonic-3" } },
  // A call-back that reaches an answering machine hangs up: its run ends with the outcome.
  voicemail: { action: "hangup" },
  sessionContext: ({ sessionId, phone, outbound }) => {
    lines.opened(sessionId);
    return {
      ...(phone?.direction === "inbound" && phone.from !== undefined ? { caller: phone.from } : {}),
      ...(outbound === undefined ? {} : { outbound }),
    };
  },
  onSessionEnd: ({ sessionId }) => lines.closed(sessionId),
});
