import { agent } from "../../src/index.js";

/** What every tool of this agent sees as `ctx.session`. */
export interface Caller {
  verified: boolean;
}

export default agent<Caller>({
  name: "support",
  systemPrompt: "You help callers track their orders. Verify the caller with their PIN before discussing an order.",
  voicePresets: ["phoneEtiquette", "speechNormalization"],
  interruption: { minWords: 2 },
  sessionContext: () => ({ verified: false }),
});
