/**
 * A session's team: the agent it serves, the agents it may hand the session to (`roster`, and
 * theirs), and every agent any of them delegates to (`subagents`), each with its checked config.
 * Resolved once when the agent is loaded (or handed to `createGateway`); every problem is one
 * `ConfigError` naming the field by its path from the session's agent (`roster.billing.tts`,
 * `subagents.research.llm.kind`). Pure: no I/O.
 */
import type { AgentConfig, HostOnlyAgentField } from "./agent-config.js";
import { resolveConfig } from "./resolve-config.js";
import type { AgentDef, ResolvedAgentDef } from "./agent.js";
import { ConfigError, IssueList, kindOf, type ConfigIssue } from "./errors.js";
import { MAX_TOOL_NAME_LENGTH } from "./registry.js";
import { isSubagentDef, type SubagentDef } from "./subagent.js";
import { isClientTool } from "./tool-def.js";
import { sameJson } from "./tool-messages.js";
import { isSet, toAgentConfig } from "./to-agent-config.js";

/**
 * How deep delegation nests: the session's agent delegates to a sub-agent (1), which may
 * delegate to its own (2), and so on to 3. Deeper, or a cycle, is refused at load: a model that
 * keeps delegating would otherwise spend the session's time and tokens on itself.
 */
export const MAX_DELEGATION_DEPTH = 3;

/** The tool an agent with a roster hands the session over with: `{ agent: <roster key> }`. */
export const HAND_OFF_TOOL = "transfer_to_agent";

/**
 * What belongs to the call rather than to the agent speaking on it: a hand-off keeps the served
 * agent's, so a member may leave them out, or set them to the same value, and nothing else.
 */
const CALL_FIELDS = [
  "sttPrompt",
  "turnTaking",
  "interruption",
  "silence",
  "errorPhrase",
  "startFailurePhrase",
  "idleTimeoutMs",
  "usageLimits",
  "telephony",
  "dtmf",
  "maxCallDurationMs",
  "clientInbox",
  "recording",
  "waitingAudio",
  "voicemail",
] as const satisfies readonly (keyof AgentConfig)[];

const ROSTER_KEY = /^[a-z][a-z0-9_-]*$/;

/** Speech-to-speech services whose instructions and tools are fixed at setup for the whole session (docs/vendors.md, Gemini Live "Messages"). */
const FIXED_SETUP_SERVICES: readonly string[] = ["gemini-live"];

/** Host-only fields that belong to the session, not to an agent run inside it. */
const SESSION_FIELDS: readonly HostOnlyAgentField[] = ["sessionContext", "syncState", "onSessionEnd", "events", "routes", "workflows", "dialogs", "inputGuardrails", "outputGuardrails"];

/** Builtins that act on the call: an agent without one (a sub-agent) cannot carry them out. */
const CALL_BUILTINS: readonly string[] = ["end_call", "transfer_call"];

const TOOL_NAME = /^[a-z][a-z0-9_]*$/;

/** One agent of the team, as the runtime runs it. */
export interface TeamAgent {
  /** Where it is first declared, from the session's agent: `""` for that agent, `roster.billing`, `subagents.research`, … */
  readonly path: string;
  /** The agent the session serves, one it may hand the session to, or one that answers a sub-agent tool. */
  readonly role: "served" | "member" | "subagent";
  readonly def: ResolvedAgentDef;
  /**
   * Its checked config (after `TeamOptions.adapt`). A roster member's holds the call's fields
   * (`CALL_FIELDS`, `stt`) as the served agent has them, and that agent's `llm`/`tts` where it
   * sets none of its own.
   */
  readonly config: AgentConfig;
  /** Whom it may hand the session to, by the name its model gives (empty for a sub-agent). */
  readonly roster: ReadonlyMap<string, TeamAgent>;
  /** Its sub-agent tools, by the name its model calls. */
  readonly subagents: ReadonlyMap<string, Delegation>;
}

/** One sub-agent tool: its declaration and the agent that answers it. */
export interface Delegation {
  readonly name: string;
  readonly tool: SubagentDef;
  readonly agent: TeamAgent;
  /** 1 for the session agent's own sub-agents, 2 for theirs, … up to MAX_DELEGATION_DEPTH. */
  readonly depth: number;
}

export interface Team {
  /** The agent the session serves. */
  readonly root: TeamAgent;
  /** Every agent of the team, the root first (a roster member once, a sub-agent once per place it is declared). */
  readonly agents: readonly TeamAgent[];
}

export interface TeamOptions {
  /** Where `toAgentConfig`'s warnings for the other agents go. Default `console.warn`. */
  readonly warn?: (message: string) => void;
  /** Applied to every agent's config once the team is checked (the gateway's offline swap). */
  readonly adapt?: (config: AgentConfig) => AgentConfig;
}

/** `issues` of an agent declared at `path`, named from the session's agent. */
function under(path: string, issues: readonly ConfigIssue[]): ConfigIssue[] {
  return issues.map((issue) => ({ path: issue.path === "agent" ? path : `${path}.${issue.path}`, message: issue.message }));
}

class TeamBuilder {
  readonly issues = new IssueList();
  readonly agents: TeamAgent[] = [];
  readonly #options: TeamOptions;
  /** The served agent, as written (its config before `adapt`): what members are checked against. */
  readonly #root: { readonly def: ResolvedAgentDef; readonly config: AgentConfig };
  /** The agents of the hand-off graph, by name: the served agent and every roster member. */
  readonly #members = new Map<string, TeamAgent>();

  constructor(options: TeamOptions, root: { readonly def: ResolvedAgentDef; readonly config: AgentConfig }) {
    this.#options = options;
    this.#root = root;
  }

  /** `def`'s config, or undefined with its problems recorded under `path`. */
  config(def: AgentDef, path: string): AgentConfig | undefined {
    try {
      return toAgentConfig(def, { warn: this.#options.warn ?? ((message) => console.warn(message)) });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const issue of under(path, error.issues)) this.issues.add(issue.path, issue.message);
      return undefined;
    }
  }

  /**
   * The agent at `path`: its sub-agents resolved below it (`depth`: how deep it is itself), and —
   * for the served agent and its roster members — whom it may hand the session to.
   */
  agent(def: ResolvedAgentDef, config: AgentConfig, path: string, depth: number, role: TeamAgent["role"]): TeamAgent {
    const subagents = new Map<string, Delegation>();
    const roster = new Map<string, TeamAgent>();
    const agent: TeamAgent = { path, role, def, config: this.#options.adapt?.(config) ?? config, roster, subagents };
    const member = role !== "subagent";
    this.agents.push(agent);
    if (member) this.#members.set(config.name, agent);
    for (const [name, tool] of Object.entries(def.subagents ?? {})) {
      const delegation = this.#delegation(def, config, at(path, `subagents.${name}`), name, tool, depth + 1);
      if (delegation !== undefined) subagents.set(name, delegation);
    }
    if (member) this.#roster(agent, roster, config);
    return agent;
  }

  /** `agent`'s roster: each entry resolved to a member of the team (a new one checked, a known one shared). */
  #roster(agent: TeamAgent, roster: Map<string, TeamAgent>, config: AgentConfig): void {
    const entries = Object.entries(agent.def.roster ?? {});
    if (entries.length === 0) return;
    const { issues } = this;
    const base = at(agent.path, "roster");
    const service = this.#root.config.s2s?.kind;
    if (service !== undefined && FIXED_SETUP_SERVICES.includes(service)) {
      issues.add(base, `${service} fixes a session's instructions and tools when it is set up (docs/vendors.md), so it cannot hand off: use openai-realtime, or a pipeline.`);
      return;
    }
    const taken = [...Object.keys(agent.def.tools), ...(config.builtinTools ?? []), ...Object.keys(agent.def.subagents ?? {})];
    if (taken.includes(HAND_OFF_TOOL)) issues.add(base, `the roster's tool is ${HAND_OFF_TOOL}, and ${config.name} already has a tool of that name: rename it.`);
    for (const [key, value] of entries) {
      const path = `${base}.${key}`;
      if (!ROSTER_KEY.test(key) || key.length > MAX_TOOL_NAME_LENGTH) {
        issues.add(path, `the key is the name the model gives to hand over: lowercase letters, digits, - and _ (^[a-z][a-z0-9_-]*$), at most ${MAX_TOOL_NAME_LENGTH} characters.`);
        continue;
      }
      const target = this.#member(value, path, agent);
      if (target !== undefined) roster.set(key, target);
    }
  }

  /** The member a roster entry names: its def (or the def its function returns), checked once. */
  #member(value: unknown, path: string, from: TeamAgent): TeamAgent | undefined {
    const { issues } = this;
    let def: unknown;
    try {
      def = typeof value === "function" ? (value as () => unknown)() : value;
    } catch (error) {
      issues.add(path, `the function threw (${error instanceof Error ? error.message : String(error)}); it must return the member's agent definition.`);
      return undefined;
    }
    const name = typeof def === "object" && def !== null ? (def as { name?: unknown }).name : undefined;
    if (typeof name !== "string") {
      issues.add(path, `is ${kindOf(def)}, not an agent: a roster entry is an agent({ ... }) definition, or a function returning one (for an agent declared later, such as a hand-back).`);
      return undefined;
    }
    // The served agent is named back by its own def, which the host wrapped (its tool files attached): its name says it is the one.
    const known = name.trim() === this.#root.config.name ? this.agents[0] : this.#members.get(name.trim());
    if (known === from) {
      issues.add(path, `names ${name} itself: an agent hands the session to another.`);
      return undefined;
    }
    if (known !== undefined) {
      if (known !== this.agents[0] && known.def !== def) issues.add(path, `another agent of the team is also named ${name} (${known.path}): give each its own name.`);
      return known;
    }
    const memberDef = def as ResolvedAgentDef;
    const config = this.config(memberDef, path);
    if (config === undefined) return undefined;
    const before = issues.issues.length;
    this.#memberFields(memberDef, config, path);
    if (issues.issues.length > before) return undefined;
    return this.agent(memberDef, this.#inherited(memberDef, config), path, 0, "member");
  }

  /** What a member must share with the served agent: the connection's mode, the caller's line, the session. */
  #memberFields(def: ResolvedAgentDef, config: AgentConfig, path: string): void {
    const { issues } = this;
    const root = this.#root.config;
    const who = config.name;
    if (config.mode !== root.mode) {
      issues.add(path, `${who} is a ${config.mode} agent and ${root.name} a ${root.mode} one: a hand-off keeps the connection, and its mode. Make ${who} a ${root.mode} agent.`);
      return;
    }
    if (root.mode === "s2s" && !sameJson(config.s2s, root.s2s)) {
      issues.add(`${path}.s2s`, `a hand-off keeps the speech-to-speech session — its service, model and voice (openai-realtime keeps the voice it first spoke with): give ${who} the same s2s as ${root.name}.`);
    }
    if (def.stt !== undefined && !sameJson(config.stt, root.stt)) {
      issues.add(`${path}.stt`, `the caller's speech recognizer stays for the whole call: leave stt out of ${who} (it uses ${root.name}'s) or make it the same.`);
    }
    for (const field of CALL_FIELDS) {
      if (def[field] !== undefined && !sameJson(config[field], root[field])) {
        issues.add(`${path}.${field}`, `\`${field}\` is the call's, and a hand-off changes the agent, not the call: it keeps ${root.name}'s. Leave it out of ${who} or make it the same.`);
      }
    }
    for (const field of SESSION_FIELDS) {
      if (isSet(def[field]) && def[field] !== this.#root.def[field]) {
        issues.add(`${path}.${field}`, `\`${field}\` belongs to the session, which keeps ${root.name}'s for its whole life: leave it out of ${who}, or give it ${root.name}'s own.`);
      }
    }
    if (isSet(def.mcpServers)) {
      issues.add(`${path}.mcpServers`, `a roster member's MCP servers are not connected in this build: give ${who} its tools with withTools, or give the servers to ${root.name}.`);
    }
    const dtmf = resolveConfig(root).dtmf;
    if (typeof dtmf === "object") {
      const offered = [...Object.keys(def.tools), ...(config.builtinTools ?? []), ...Object.keys(def.subagents ?? {}), ...(isSet(def.roster) ? [HAND_OFF_TOOL] : [])];
      if (!offered.includes(dtmf.tool)) issues.add(path, `${who} has no tool named ${dtmf.tool}, which the call's dtmf.tool runs on every keypad entry: give ${who} that tool.`);
    }
  }

  /** A member's config as it runs: the call's fields and the caller's recognizer are the served agent's, and so are its llm and tts where it sets none. */
  #inherited(def: ResolvedAgentDef, config: AgentConfig): AgentConfig {
    const root = this.#root.config;
    const own: Record<string, unknown> = { ...config };
    for (const field of [...CALL_FIELDS, "stt"] as const) own[field] = root[field];
    if (def.llm === undefined) own.llm = root.llm;
    if (def.tts === undefined) own.tts = root.tts;
    for (const key of Object.keys(own)) if (own[key] === undefined) delete own[key];
    return own as AgentConfig;
  }

  #delegation(parent: ResolvedAgentDef, parentConfig: AgentConfig, path: string, name: string, tool: unknown, depth: number): Delegation | undefined {
    const { issues } = this;
    const before = issues.issues.length;
    if (!TOOL_NAME.test(name) || name.length > MAX_TOOL_NAME_LENGTH) {
      issues.add(path, `the key is the tool name the model calls: lower_snake_case (^[a-z][a-z0-9_]*$), at most ${MAX_TOOL_NAME_LENGTH} characters.`);
    }
    const taken = Object.hasOwn(parent.tools, name) ? `a tool named ${name} (tools/${name})` : (parentConfig.builtinTools ?? []).includes(name) ? `the builtin ${name}` : undefined;
    if (taken !== undefined) issues.add(path, `the agent already has ${taken}; rename the sub-agent tool or the other one.`);
    if (!isSubagentDef(tool)) {
      issues.add(path, `is ${kindOf(tool)}, not a sub-agent: declare it with subagent(def, { description }).`);
      return undefined;
    }
    const def = tool.agent as ResolvedAgentDef;
    if (depth > MAX_DELEGATION_DEPTH) {
      const chain = path.split(".").filter((_, i) => i % 2 === 1);
      issues.add(path, `delegation nests deeper than ${MAX_DELEGATION_DEPTH} levels (${chain.join(" → ")}): a chain this long, or a cycle of sub-agents, is refused. Let one agent do more of the task.`);
      return undefined;
    }
    const config = this.config(def, path);
    if (config === undefined) return undefined;
    this.#subagentFields(def, config, path);
    if (issues.issues.length > before) return undefined;
    return { name, tool, agent: this.agent(def, config, path, depth, "subagent"), depth };
  }

  /** What a sub-agent cannot do: it runs in text mode, inside the calling session, for one task. */
  #subagentFields(def: ResolvedAgentDef, config: AgentConfig, path: string): void {
    const { issues } = this;
    const who = config.name;
    if (config.mode === "s2s") {
      issues.add(path, `${who} is a speech-to-speech agent: a sub-agent runs in text mode on its llm, and an s2s agent has none. Give it an llm instead of s2s.`);
    }
    if (isSet(def.roster)) issues.add(`${path}.roster`, `a sub-agent answers one task and hands nothing off: remove ${who}'s roster.`);
    for (const field of SESSION_FIELDS) {
      if (isSet(def[field])) {
        issues.add(`${path}.${field}`, `\`${field}\` belongs to the session, and a sub-agent runs inside the calling one (its tools see that session's ctx.session): ${who}'s would never run. Remove it.`);
      }
    }
    if (isSet(def.recording)) {
      issues.add(`${path}.recording`, `the session is recorded as a whole, and a sub-agent runs inside it: ${who}'s recording would never run. Remove it, or set it on the session's agent.`);
    }
    if (isSet(def.mcpServers)) {
      issues.add(`${path}.mcpServers`, `a sub-agent's MCP servers are not connected in this build: give ${who} its tools with withTools, or give the servers to the session's agent.`);
    }
    for (const [tool, toolDef] of Object.entries(def.tools)) {
      if (isClientTool(toolDef)) issues.add(`${path}.tools.${tool}`, `a clientTool runs in the connected page, which never sees a sub-agent's calls: make it a tool() or give it to the session's agent.`);
    }
    for (const builtin of config.builtinTools ?? []) {
      if (CALL_BUILTINS.includes(builtin)) issues.add(`${path}.builtinTools`, `\`${builtin}\` acts on the call, and a sub-agent has none: remove it.`);
    }
  }
}

/** `path` below `base` (the root's base is ""). */
function at(base: string, path: string): string {
  return base === "" ? path : `${base}.${path}`;
}

/**
 * The team of the agent `def` (with its checked `config`): every roster member it may hand the
 * session to, and theirs, and every sub-agent any of them declares, each checked as
 * `toAgentConfig` checks an agent, plus what a member must share with `def` and what a sub-agent
 * cannot do. Throws one `ConfigError` (`Invalid agent "<name>"`) listing every problem.
 */
export function resolveTeam(def: ResolvedAgentDef, config: AgentConfig, options: TeamOptions = {}): Team {
  const builder = new TeamBuilder(options, { def, config });
  const root = builder.agent(def, config, "", 0, "served");
  builder.issues.throwIfAny(`Invalid agent "${config.name}"`);
  return { root, agents: builder.agents };
}
