// subagent() and resolveTeam: what a sub-agent tool is, and what the loader refuses about the
// agents a session's agent delegates to, named by their path from it.
import { Type } from "@sinclair/typebox";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import {
  agent,
  clientTool,
  ConfigError,
  MAX_DELEGATION_DEPTH,
  resolveTeam,
  subagent,
  subagentPrompt,
  toAgentConfig,
  tool,
  ToolDefinitionError,
  withTools,
  type AgentDef,
  type ConfigIssue,
  type ResolvedAgentDef,
} from "../../../src/manifest/index.js";

const quiet = { warn: () => {} };
const researcher = agent({ name: "researcher", mode: "text", systemPrompt: "You research.", llm: "openai/gpt-4.1-mini" });

/** The team of `def`, or the issues refusing it. */
function team<S>(def: AgentDef<S>) {
  return resolveTeam(def as ResolvedAgentDef, toAgentConfig(def, quiet), quiet);
}

function refused<S>(def: AgentDef<S>): readonly ConfigIssue[] {
  try {
    team(def);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("subagent()", () => {
  it("takes a task by default, whose text is the sub-agent's one message", () => {
    const research = subagent(researcher, { description: "Researches a question." });
    expect(research.parameters.json).toMatchObject({ type: "object", required: ["task"], additionalProperties: false });
    expect(research.parameters.validate({ task: "Find X" })).toEqual({ ok: true, value: { task: "Find X" } });
    expect(research.parameters.validate({}).ok).toBe(false);
    expect(subagentPrompt(research, { task: "Find X" })).toBe("Find X");
    expect(Object.isFrozen(research)).toBe(true);
  });

  it("takes its own input (TypeBox or zod), sent to the sub-agent as JSON", () => {
    const typebox = subagent(researcher, { description: "Looks up a city.", input: Type.Object({ city: Type.String(), days: Type.Number() }) });
    expect(typebox.parameters.validate({ city: "Oslo", days: 2 }).ok).toBe(true);
    expect(subagentPrompt(typebox, { city: "Oslo", days: 2 })).toBe('{"city":"Oslo","days":2}');
    const zod = subagent(researcher, { description: "Looks up a city.", input: z.object({ city: z.string() }) });
    expect(zod.parameters.json.required).toEqual(["city"]);
  });

  it("refuses what cannot work, naming the fix", () => {
    expect(() => subagent(undefined as unknown as AgentDef, { description: "x" })).toThrow(ToolDefinitionError);
    expect(() => subagent(researcher, { description: " " })).toThrow(/`description` must be a non-empty string/);
    expect(() => subagent(researcher, { description: "x", timeoutMs: 0 })).toThrow(/`timeoutMs` must be a positive integer/);
    expect(() => subagent(researcher, { description: "x", input: Type.String() })).toThrow(/must describe an object/);
  });
});

describe("resolveTeam: the sub-agents an agent delegates to", () => {
  it("resolves each one's checked config, nested ones below their parent, depth counted", () => {
    const summarizer = agent({ name: "summarizer", mode: "text", llm: "openai/gpt-4.1-mini" });
    const deep = agent({ name: "deep", mode: "text", subagents: { summarize: subagent(summarizer, { description: "Summarizes." }) } });
    const root = agent({ name: "desk", mode: "text", subagents: { research: subagent(researcher, { description: "Researches." }), dig: subagent(deep, { description: "Digs." }) } });
    const resolved = team(root);
    expect(resolved.root.path).toBe("");
    expect([...resolved.root.subagents.keys()]).toEqual(["research", "dig"]);
    const dig = resolved.root.subagents.get("dig");
    expect(dig?.depth).toBe(1);
    expect(dig?.agent.path).toBe("subagents.dig");
    expect(dig?.agent.subagents.get("summarize")?.depth).toBe(2);
    expect(dig?.agent.subagents.get("summarize")?.agent.config.name).toBe("summarizer");
    expect(resolved.agents.map((a) => a.path)).toEqual(["", "subagents.research", "subagents.dig", "subagents.dig.subagents.summarize"]);
  });

  it("adapts every config once checked (the offline swap)", () => {
    const root = agent({ name: "desk", mode: "text", subagents: { research: subagent(researcher, { description: "Researches." }) } });
    const config = toAgentConfig(root, quiet);
    const resolved = resolveTeam(root, config, { ...quiet, adapt: (c) => ({ ...c, llm: { kind: "scripted", options: {} } }) });
    expect(resolved.agents.map((a) => a.config.llm?.kind)).toEqual(["scripted", "scripted"]);
  });

  it("refuses a chain deeper than MAX_DELEGATION_DEPTH, a cycle included", () => {
    let chain: AgentDef = agent({ name: "leaf", mode: "text" });
    for (let i = 0; i <= MAX_DELEGATION_DEPTH; i += 1) chain = agent({ name: `level${i}`, mode: "text", subagents: { next: subagent(chain, { description: "Goes deeper." }) } });
    const issues = refused(chain);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe("subagents.next.subagents.next.subagents.next.subagents.next");
    expect(issues[0]?.message).toMatch(/nests deeper than 3 levels \(next → next → next → next\)/);

    // A cycle can only be built by hand (agent() freezes its def): a → a → …
    const cyclic = { ...agent({ name: "a", mode: "text" }), subagents: {} as Record<string, unknown> };
    cyclic.subagents.again = subagent(cyclic as unknown as AgentDef, { description: "Again." });
    expect(refused(cyclic as unknown as AgentDef)[0]?.message).toMatch(/or a cycle of sub-agents, is refused/);
  });

  it("names each sub-agent's own config problems under its path", () => {
    const broken = agent({ name: "broken", mode: "text", maxSteps: 0, llm: { kind: "open-ai", options: {} } });
    const issues = refused(agent({ name: "desk", mode: "text", subagents: { research: subagent(broken, { description: "Researches." }) } }));
    expect(issues.map((i) => i.path)).toEqual(["subagents.research.llm.kind", "subagents.research.maxSteps"]);
  });

  it("refuses what a sub-agent cannot do, each with the fix", () => {
    const voice = agent({ name: "voice", s2s: { kind: "openai-realtime", options: {} } });
    const handsOff = agent({ name: "hands", mode: "text", roster: { other: researcher } });
    const hooked = agent({ name: "hooked", mode: "text", sessionContext: () => ({}), events: { "reply.completed": () => {} } });
    const mcp = agent({ name: "mcp", mode: "text", mcpServers: { docs: { url: "https://docs.example.com/mcp" } } });
    const recorded = agent({ name: "recorded", mode: "text", recording: { destination: { dir: "records" } } });
    const paged = withTools(agent({ name: "paged", mode: "text", builtinTools: ["end_call"] }), { pick: clientTool({ description: "Pick" }) });
    const issues = refused(
      withTools(
        agent({
          name: "desk",
          mode: "text",
          builtinTools: ["calculate"],
          subagents: {
            voice: subagent(voice, { description: "v" }),
            hands: subagent(handsOff, { description: "h" }),
            hooked: subagent(hooked, { description: "k" }),
            mcp: subagent(mcp, { description: "m" }),
            recorded: subagent(recorded, { description: "r" }),
            paged: subagent(paged, { description: "p" }),
            calculate: subagent(researcher, { description: "c" }),
            lookup: subagent(researcher, { description: "l" }),
            "Bad-Name": subagent(researcher, { description: "b" }),
            plain: { agent: researcher, description: "not declared with subagent()" },
          } as never,
        }),
        { lookup: tool({ description: "Lookup", execute: () => "x" }) },
      ),
    );
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(byPath["subagents.voice"]).toMatch(/voice is a speech-to-speech agent: a sub-agent runs in text mode on its llm/);
    expect(byPath["subagents.hands.roster"]).toMatch(/hands nothing off: remove hands's roster/);
    expect(byPath["subagents.hooked.sessionContext"]).toMatch(/`sessionContext` belongs to the session/);
    expect(byPath["subagents.hooked.events"]).toMatch(/`events` belongs to the session/);
    expect(byPath["subagents.mcp.mcpServers"]).toMatch(/MCP servers are not connected in this build/);
    expect(byPath["subagents.recorded.recording"]).toMatch(/the session is recorded as a whole, and a sub-agent runs inside it: recorded's recording would never run/);
    expect(byPath["subagents.paged.tools.pick"]).toMatch(/a clientTool runs in the connected page/);
    expect(byPath["subagents.paged.builtinTools"]).toMatch(/`end_call` acts on the call, and a sub-agent has none/);
    expect(byPath["subagents.calculate"]).toMatch(/already has the builtin calculate/);
    expect(byPath["subagents.lookup"]).toMatch(/already has a tool named lookup \(tools\/lookup\)/);
    expect(byPath["subagents.Bad-Name"]).toMatch(/lower_snake_case/);
    expect(byPath["subagents.plain"]).toMatch(/is an object, not a sub-agent: declare it with subagent\(def, \{ description \}\)/);
  });
});

describe("resolveTeam: the roster an agent may hand the session to", () => {
  it("types: an agent with a session type holds members and sub-agents written without one", () => {
    interface Caller {
      verified: boolean;
    }
    const plain = agent({ name: "plain" });
    const typed = agent<Caller>({ name: "typed", sessionContext: () => ({ verified: false }), roster: { plain }, subagents: { ask: subagent(agent({ name: "asker", mode: "text" }), { description: "Asks." }) } });
    expect(typed.roster?.plain).toBe(plain);
  });

  const frontdeskFields = { name: "frontdesk", stt: { kind: "deepgram", options: {} }, tts: { kind: "cartesia", options: { voice: "f" } }, turnTaking: { minSilenceMs: 800 } };

  it("resolves each member once, a function for a hand-back, the served agent named back by its own def", () => {
    const sales: AgentDef = agent({ name: "sales", roster: { billing: () => billing } });
    const billing: AgentDef = agent({ name: "billing", tts: { kind: "cartesia", options: { voice: "b" } }, roster: { frontdesk: () => frontdesk, sales } });
    const frontdesk: AgentDef = agent({ ...frontdeskFields, roster: { billing, sales } });
    // The host runs the served agent with its tool files attached: a new object, named back by its exported def.
    const served = withTools(frontdesk, { ping: tool({ description: "Ping", execute: () => "pong" }) });
    const resolved = team(served);
    const root = resolved.root;
    expect(resolved.agents.map((a) => [a.path, a.role])).toEqual([
      ["", "served"],
      ["roster.billing", "member"],
      ["roster.billing.roster.sales", "member"],
    ]);
    const member = root.roster.get("billing");
    expect(member?.roster.get("frontdesk")).toBe(root);
    expect(member?.roster.get("sales")).toBe(root.roster.get("sales"));
    expect(root.roster.get("sales")?.roster.get("billing")).toBe(member);
  });

  it("a member runs with the call's fields and the caller's recognizer, and the served agent's llm and tts where it sets none", () => {
    const quietMember = agent({ name: "quiet" });
    const voiced = agent({ name: "voiced", tts: { kind: "elevenlabs", options: { voiceId: "v" } }, llm: "anthropic/claude-sonnet-4-5", turnTaking: { minSilenceMs: 800 } });
    const root = team(agent({ ...frontdeskFields, llm: "openai/gpt-4.1", roster: { quiet: quietMember, voiced } })).root;
    const quiet = root.roster.get("quiet")?.config;
    expect(quiet).toMatchObject({ stt: frontdeskFields.stt, tts: frontdeskFields.tts, llm: { kind: "openai", options: { model: "gpt-4.1" } }, turnTaking: { minSilenceMs: 800 } });
    const own = root.roster.get("voiced")?.config;
    expect(own).toMatchObject({ stt: frontdeskFields.stt, tts: { kind: "elevenlabs" }, llm: { kind: "anthropic" } });
  });

  it("refuses a member that cannot share the connection, the call or the session, each with the fix", () => {
    const context = (): object => ({});
    const issues = refused(
      withTools(
        agent({
          ...frontdeskFields,
          sessionContext: context,
          dtmf: { tool: "ping" },
          telephony: true,
          roster: {
            typed: agent({ name: "typed", mode: "text" }),
            hears: agent({ name: "hears", stt: { kind: "assemblyai", options: {} } }),
            turns: agent({ name: "turns", turnTaking: { minSilenceMs: 400 } }),
            records: agent({ name: "records", recording: { destination: { dir: "elsewhere" } } }),
            sounds: agent({ name: "sounds", waitingAudio: { ambience: { file: "cafe.wav" } } }),
            same: withTools(agent({ name: "same", turnTaking: { minSilenceMs: 800 }, sessionContext: context }), { ping: tool({ description: "Ping", execute: () => "pong" }) }),
            own: agent({ name: "own", sessionContext: () => ({}) }),
            mcp: agent({ name: "mcp", mcpServers: { docs: { url: "https://docs.example.com/mcp" } } }),
            self: () => frontdeskSelf,
            "Bad Key": agent({ name: "x" }),
            nothing: (() => undefined) as never,
            throws: (() => {
              throw new Error("not yet");
            }) as never,
            twin: agent({ name: "same" }),
            clash: withTools(agent({ name: "clash", roster: { typed: agent({ name: "typed2" }) } }), {
              transfer_to_agent: tool({ description: "x", execute: () => "x" }),
              ping: tool({ description: "Ping", execute: () => "pong" }),
            }),
          },
        }),
        { ping: tool({ description: "Ping", execute: () => "pong" }) },
      ),
    );
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(byPath["roster.typed"]).toMatch(/typed is a text agent and frontdesk a pipeline one: a hand-off keeps the connection, and its mode/);
    expect(byPath["roster.hears.stt"]).toMatch(/the caller's speech recognizer stays for the whole call: leave stt out of hears/);
    expect(byPath["roster.turns.turnTaking"]).toMatch(/`turnTaking` is the call's, and a hand-off changes the agent, not the call: it keeps frontdesk's/);
    expect(byPath["roster.records.recording"]).toMatch(/`recording` is the call's/);
    expect(byPath["roster.sounds.waitingAudio"]).toMatch(/`waitingAudio` is the call's, and a hand-off changes the agent, not the call: it keeps frontdesk's/);
    expect(byPath["roster.same"]).toBeUndefined();
    expect(byPath["roster.own.sessionContext"]).toMatch(/belongs to the session, which keeps frontdesk's for its whole life/);
    expect(byPath["roster.own"]).toMatch(/own has no tool named ping, which the call's dtmf.tool runs on every keypad entry/);
    expect(byPath["roster.mcp.mcpServers"]).toMatch(/a roster member's MCP servers are not connected in this build/);
    expect(byPath["roster.self"]).toMatch(/names frontdesk itself: an agent hands the session to another/);
    expect(byPath["roster.Bad Key"]).toMatch(/lowercase letters, digits, - and _/);
    expect(byPath["roster.nothing"]).toMatch(/is undefined, not an agent/);
    expect(byPath["roster.throws"]).toMatch(/the function threw \(not yet\)/);
    expect(byPath["roster.twin"]).toMatch(/another agent of the team is also named same \(roster\.same\): give each its own name/);
    expect(byPath["roster.clash.roster"]).toMatch(/the roster's tool is transfer_to_agent, and clash already has a tool of that name/);
  });

  it("speech-to-speech: a member shares the service as it is (voice included); a service fixed at setup cannot hand off", () => {
    const s2s = { kind: "openai-realtime", options: { voice: "marin" } };
    const ok = team(agent({ name: "voice", s2s, roster: { other: agent({ name: "other", s2s: { kind: "openai-realtime", options: { voice: "marin" } } }) } }));
    expect(ok.root.roster.get("other")?.config.s2s).toEqual(s2s);
    const issues = refused(agent({ name: "voice", s2s, roster: { other: agent({ name: "other", s2s: { kind: "openai-realtime", options: { voice: "cedar" } } }) } }));
    expect(issues).toEqual([{ path: "roster.other.s2s", message: expect.stringMatching(/a hand-off keeps the speech-to-speech session — its service, model and voice/) as string }]);
    const gemini = { kind: "gemini-live", options: {} };
    expect(refused(agent({ name: "voice", s2s: gemini, roster: { other: agent({ name: "other", s2s: gemini }) } }))).toEqual([
      { path: "roster", message: expect.stringMatching(/^gemini-live fixes a session's instructions and tools when it is set up/) as string },
    ]);
  });
});

const frontdeskSelf: AgentDef = agent({ name: "frontdesk" });
