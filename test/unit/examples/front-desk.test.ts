import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Script } from "../../../src/pipeline/providers/llm/script.js";
import { loadAgent } from "../../../src/server/loader.js";
import { textSession } from "../../../src/testing/text-session.js";
import { checked } from "../../helpers/run-check.js";

const dir = fileURLToPath(new URL("../../../examples/front-desk", import.meta.url));

describe("examples/front-desk (a team: a sub-agent, a roster, a hand-back)", () => {
  it("passes check, which lists its sub-agent tool and its roster", async () => {
    const { code, out, err } = await checked(dir);
    expect(code).toBe(0);
    // offline.json answers for the whole team: a rule calling a member's or a sub-agent's tool is no mistake.
    expect(err).not.toContain("offline.json");
    expect(out).toMatch(/\n {2}transfer_to_agent +roster: billing\n/);
    expect(out).toMatch(/\n {2}research +subagent "researcher": llm openai, up to 20000 ms, 4000 tokens\n/);
    expect(out).toMatch(/\nroster:\n {2}roster\.billing +"billing": llm openai; tools refund; hands to front-desk\n/);
  });

  it("on the offline brain: delegates a policy question, hands over for a refund, and is handed back", async () => {
    const loaded = await loadAgent(dir);
    const { link, say } = textSession(loaded.def, { script: loaded.script as Script });
    await say("what is your returns policy?");
    expect(link.of("tool.called").map((e) => e.toolName)).toEqual(["research"]);
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Unworn items can be returned within 30 days for a full refund.");

    await say("I want a refund");
    expect(link.of("agent.changed")).toMatchObject([{ agent: "billing", previous: "front-desk" }]);
    expect(link.of("agent-transcript.committed").slice(-2).map((e) => e.text)).toEqual(["Putting you through to billing.", "Billing here. Which order should I refund?"]);
    await say("order A17");
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Order A17 is refunded: the money is back on the card in three to five days.");

    await say("the front desk please");
    expect(link.of("agent.changed").at(-1)).toMatchObject({ agent: "front-desk", previous: "billing" });
    expect(link.of("agent-transcript.committed").at(-1)?.text).toBe("Front desk. Ask me about returns or shipping, or ask for a refund.");
  });
});
