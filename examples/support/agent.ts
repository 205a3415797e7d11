import { agent, type Guardrail } from "switchboard";
import { returns } from "./returns.js";

/** What every tool of this agent sees as `ctx.session`. */
export interface Caller {
  verified: boolean;
  /** The order a return was started for (dialog `returns`). */
  returnOrder?: string;
}

/** Thirteen to nineteen digits, spaced or dashed or not: a full payment card number. */
const CARD_NUMBER = /\b(?:\d[ -]?){12,18}\d\b/;

/** Order support never needs a card number: one the caller reads out is not passed on to the model. */
export const noCardNumbersIn: Guardrail<Caller> = (text) =>
  CARD_NUMBER.test(text) ? { replacement: "Please don't read me your card number: I never need it to help with an order.", reason: "card number from the caller" } : undefined;

/** Nor is one ever spoken: checked on every sentence before it goes to the voice. */
export const noCardNumbersOut: Guardrail<Caller> = (text) =>
  CARD_NUMBER.test(text) ? { replacement: "I can't read card numbers out loud.", reason: "card number in the reply" } : undefined;

/**
 * The demo agent `npm start` serves: order support by voice. It shows the headline features —
 * a slow tool with start/delayed/complete lines, a gate (orders only after the PIN), a dialog (an
 * order return, one step at a time), interruption tuning, a silence nudge, voice presets, and
 * guardrails that keep card numbers out both ways. With no API keys it runs on the offline stack
 * (pocketsphinx, the scripted brain in offline.json, flite); with keys, on the providers below.
 * It also answers phone calls from every carrier (docs/telephony.md); the PIN can be keyed in;
 * and it serves its opening hours over HTTP, at GET /support/hours (a route, docs/config.md §5).
 * An event observer reports failed tool calls (a refused lookup too) on the server's console.
 */
export default agent<Caller>({
  name: "support",
  greeting: "Hi, this is order support. Say your PIN, or ask me where your order is.",
  systemPrompt:
    "You help callers track and return their orders. Verify the caller with their four-digit PIN (verify_caller) before looking up an order (lookup_order) or starting a return (start_return, then confirm_return). Keep replies short.",
  voicePresets: ["phoneEtiquette", "speechNormalization", "echoVerification"],
  builtinTools: ["current_time", "calculate", "end_call"],
  telephony: true,
  stt: { kind: "deepgram", options: { model: "nova-3" } },
  llm: { kind: "openai", options: { model: "gpt-4.1-mini" } },
  tts: { kind: "cartesia", options: { model: "sonic-3" } },
  interruption: { minWords: 2, minDurationMs: 400, backoffMs: 300 },
  silence: { nudge: { afterMs: 20_000, prompt: "The caller has been silent for a while. Ask if they are still there." } },
  dialogs: { returns },
  inputGuardrails: [noCardNumbersIn],
  outputGuardrails: [noCardNumbersOut],
  sessionContext: () => ({ verified: false }),
  syncState: (caller, { dialogs }) => ({ verified: caller.verified, returns: dialogs.returns?.state ?? null }),
  routes: {
    // For the shop's contact page, before anyone calls: public on purpose (auth: "none"), so it
    // holds nothing a stranger may not read. A route without `auth` is behind the gateway's API key.
    "GET /support/hours": {
      auth: "none",
      handler: () => Response.json({ days: "Monday to Friday", hours: "09:00–17:00", timeZone: "Europe/Berlin" }),
    },
  },
  // Runs after the event reaches the caller, never in its way (docs/config.md "Event observers").
  events: {
    "tool.completed": (event, { sessionId }) => {
      if (event.isError === true) console.warn(`support: tool call ${event.toolCallId} failed in session ${sessionId}: ${event.result}`);
    },
  },
});
