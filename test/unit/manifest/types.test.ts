import { describe, expect, expectTypeOf, it } from "vitest";
import {
  AGENT_CONFIG_FIELDS,
  HOST_ONLY_AGENT_FIELDS,
  agent,
  toAgentConfig,
  type AgentConfig,
  type AgentConfigSource,
  type AgentDef,
  type HostOnlyAgentField,
  type ResolvedAgentDef,
  type SessionMode,
} from "../../../src/manifest/index.js";

/** Keys of AgentDef that are neither serializable config nor host-only: must be none. */
type Unaccounted = Exclude<keyof AgentDef, keyof AgentConfig | HostOnlyAgentField | "text">;
/** Host-only names AgentDef (as the runtime holds it) does not carry: must be none. */
type Superfluous = Exclude<HostOnlyAgentField, keyof ResolvedAgentDef>;

describe("the serialization boundary", () => {
  it("every AgentDef field is either AgentConfig or host-only, and every host-only name is an AgentDef field", () => {
    expectTypeOf<Unaccounted>().toEqualTypeOf<never>();
    expectTypeOf<Superfluous>().toEqualTypeOf<never>();
  });

  it("HOST_ONLY_AGENT_FIELDS is exactly the 13 names, disjoint from the config", () => {
    expect([...HOST_ONLY_AGENT_FIELDS]).toEqual([
      "tools",
      "syncState",
      "workflows",
      "roster",
      "subagents",
      "toolsets",
      "dialogs",
      "events",
      "inputGuardrails",
      "outputGuardrails",
      "sessionContext",
      "onSessionEnd",
      "routes",
    ]);
    for (const field of HOST_ONLY_AGENT_FIELDS) expect(AGENT_CONFIG_FIELDS).not.toContain(field);
  });

  it("an AgentDef is assignable to AgentConfigSource, spreads included", () => {
    const def = agent({ name: "x", systemPrompt: () => "dynamic" });
    expectTypeOf(def).toExtend<AgentConfigSource>();
    const maybe: { kind: string; options: Record<string, unknown> } | undefined = undefined;
    expect(toAgentConfig({ ...def, stt: maybe }).mode).toBe("pipeline");
  });

  it("SessionMode is the three session modes", () => {
    expectTypeOf<SessionMode>().toEqualTypeOf<"s2s" | "pipeline" | "text">();
  });
});
