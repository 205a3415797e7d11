import { Type } from "@sinclair/typebox";
import { agent, subagent, tool, withTools, type AgentDef } from "switchboard";

/**
 * A small team in text mode (docs/config.md §10, §11): the front desk answers policy questions
 * through a sub-agent that reads the handbook, and hands the conversation to billing for refunds;
 * billing hands it back. With no API key it runs on the offline stack: offline.json answers for
 * all three (a rule calls only a tool the agent speaking has).
 */

const HANDBOOK: Readonly<Record<string, string>> = {
  return: "Unworn items can be returned within 30 days for a full refund.",
  shipping: "Orders ship within two working days; delivery takes three to five more.",
};

const handbook = tool({
  description: "The shop's handbook, by topic: return or shipping",
  parameters: Type.Object({ topic: Type.String() }),
  effect: "read",
  execute: ({ topic }) => {
    const entry = HANDBOOK[topic.toLowerCase().replace(/s$/, "")];
    return entry ?? { text: `The handbook has nothing on ${topic}. Topics: ${Object.keys(HANDBOOK).join(", ")}.`, isError: true };
  },
});

/** Answers one question from the handbook, in one sentence; it sees only the task it is given. */
const researcher = withTools(
  agent({
    name: "researcher",
    mode: "text",
    systemPrompt: "Answer the question from the handbook (the handbook tool), in one sentence. If it has nothing on it, say so.",
    llm: { kind: "openai", options: { model: "gpt-4.1-mini" } },
    usageLimits: { totalTokens: 4000 },
  }),
  { handbook },
);

const refund = tool({
  description: "Refund an order",
  parameters: Type.Object({ orderId: Type.String() }),
  effect: "write",
  execute: ({ orderId }) => `Order ${orderId.toUpperCase()} is refunded: the money is back on the card in three to five days.`,
});

const billing: AgentDef = withTools(
  agent({
    name: "billing",
    mode: "text",
    listing: "Refunds and payments",
    greeting: "Billing here. Which order should I refund?",
    systemPrompt: "You handle refunds (the refund tool needs the order id). For anything else, hand the caller back to the front desk.",
    llm: { kind: "openai", options: { model: "gpt-4.1-mini" } },
    roster: { "front-desk": () => frontDesk },
  }),
  { refund },
);

const frontDesk: AgentDef = agent({
  name: "front-desk",
  mode: "text",
  greeting: "Front desk. Ask me about returns or shipping, or ask for a refund.",
  systemPrompt: "You answer questions about the shop. Policy questions go to research; refunds are billing's: hand the caller over.",
  llm: { kind: "openai", options: { model: "gpt-4.1-mini" } },
  roster: { billing },
  subagents: {
    research: subagent(researcher, { description: "Looks a policy question up in the handbook and answers in one sentence. Give the whole question.", timeoutMs: 20_000 }),
  },
});

export default frontDesk;
