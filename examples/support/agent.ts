import { agent } from "../../src/index.js";

/** What every tool of this agent sees as `ctx.session`. */
export interface Caller {
  verified: boolean;
}

/**
 * The demo agent `npm start` serves: order support with a verification gate, tool messages
 * and builtins. Text mode on the offline `scripted` model (offline.json) until the offline
 * voice stack lands; with OPENAI_API_KEY set it runs on OpenAI.
 */
export default agent<Caller>({
  name: "support",
  mode: "text",
  greeting: "Hi, this is order support. Say your four-digit PIN to get started, or ask me the time.",
  systemPrompt:
    "You help callers track their orders. Verify the caller with their four-digit PIN (verify_caller) before looking up an order (lookup_order). Keep replies short.",
  voicePresets: ["phoneEtiquette", "speechNormalization"],
  builtinTools: ["current_time", "calculate", "end_call"],
  llm: { kind: "openai", options: { model: "gpt-4.1-mini" } },
  sessionContext: () => ({ verified: false }),
  syncState: (caller) => ({ verified: caller.verified }),
});
