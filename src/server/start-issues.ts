/**
 * What would fail every session of an agent at its start, found before any session runs
 * (`switchboard check`, `loadAgent`): the offline script, each provider's options and keys as a
 * session builds them, the built-in tools. An agent with no start issues starts a session.
 */
import { MissingKeyError } from "../errors.js";
import { agentToolsets, ConfigError, resolveTeam, sameJson, type AgentConfig, type ConfigIssue, type ProviderDescriptor, type ResolvedAgentDef } from "../manifest/index.js";
import { languageModelSettings, type Env } from "../pipeline/providers/llm/index.js";
import { scriptedModel } from "../pipeline/providers/llm/scripted.js";
import { builtinToolset } from "../session/builtins/index.js";
import { didYouMean } from "../manifest/errors.js";
import { missingKey } from "./offline.js";
import { hasWorkflows } from "./workflow-engine.js";
import { RESERVED_WORKFLOW_NAMES } from "./workflow-routes.js";
import { spread } from "../spread.js";

/** The agent as a session holds it. */
export interface StartableAgent {
  readonly def: ResolvedAgentDef;
  readonly config: AgentConfig;
  /** The offline script (offline.json), if any. */
  readonly script?: unknown;
}

/** Stands in for a key a provider reads but the environment lacks: keys are `check`'s to report, not a reason to skip the options. */
const STAND_IN_KEY = "switchboard-check-stand-in-key";

/** `env`, plus a stand-in for the key `descriptor` needs and `env` lacks. */
function withStandInKey(descriptor: ProviderDescriptor, env: Env): Env {
  const variable = missingKey(descriptor, env);
  return variable === undefined ? env : spread(env, { [variable]: STAND_IN_KEY });
}

/** A scripted model's script refused (`scriptedModel`'s ConfigError), as issues under `prefix` (`offline.json`). */
function scriptIssues(error: ConfigError, prefix: string): ConfigIssue[] {
  return error.issues.map((issue) => ({ path: issue.path === "script" ? prefix : `${prefix} ${issue.path}`, message: issue.message }));
}

/** A provider refusing its descriptor at construction: `stt.options.url must be …` → path `stt.options.url`. */
function providerIssue(slot: string, error: unknown): ConfigIssue {
  const message = error instanceof Error ? error.message : String(error);
  const option = new RegExp(`^(${slot}\\.options\\.[A-Za-z0-9_]+) (.+)$`, "s").exec(message);
  return option === null ? { path: slot, message } : { path: option[1] ?? slot, message: option[2] ?? message };
}

/**
 * Build the provider for one slot the way a session start does (`resolveStt`, `resolveTts`,
 * `resolveS2s`, `languageModelSettings`); nothing is opened. The speech adapters are imported for
 * the slots the agent fills, as its sessions import them (session/modes.ts): a text agent's
 * gateway loads none.
 */
async function buildProvider(slot: "stt" | "llm" | "tts" | "s2s", descriptor: ProviderDescriptor, env: Env, script: unknown): Promise<void> {
  if (slot === "stt") (await import("../pipeline/providers/stt/index.js")).resolveStt(descriptor, env);
  else if (slot === "tts") (await import("../pipeline/providers/tts/index.js")).resolveTts(descriptor, env);
  else if (slot === "s2s") (await import("../s2s/providers/index.js")).resolveS2s(descriptor, env);
  else languageModelSettings(descriptor, script === undefined ? { env } : { env, script });
}

/**
 * Each provider of `config` in `slots` built as a session builds it, with a stand-in for a
 * missing key; `path` prefixes the issues of an agent of the team other than the session's own.
 * A `scripted` llm without a script of its own answers from offline.json (checked on its own).
 */
async function providerIssues(config: AgentConfig, slots: readonly ("stt" | "llm" | "tts" | "s2s")[], where: { env: Env; script: unknown; path?: string }): Promise<ConfigIssue[]> {
  const { env, path } = where;
  const issues: ConfigIssue[] = [];
  for (const slot of slots) {
    const descriptor = config[slot];
    // A team agent's scripted llm with a script of its own answers from it (docs/config.md §11).
    const own = path !== undefined && descriptor?.kind === "scripted" ? descriptor.options.script : undefined;
    // Otherwise a scripted llm answers from offline.json, checked above.
    if (descriptor === undefined || (descriptor.kind === "scripted" && own === undefined && where.script !== undefined)) continue;
    try {
      await buildProvider(slot, descriptor, withStandInKey(descriptor, env), own === undefined ? where.script : undefined);
    } catch (error) {
      if (error instanceof MissingKeyError) continue;
      issues.push(...(error instanceof ConfigError ? scriptIssues(error, `${slot}.options.script`) : [providerIssue(slot, error)]));
    }
  }
  return path === undefined ? issues : issues.map((issue) => ({ path: `${path}.${issue.path}`, message: issue.message }));
}

/**
 * What would fail every session of this agent when it starts, whatever keys are set — the
 * checks a session runs as it opens (src/session/session.ts), run without a connection:
 * - the offline script (offline.json; or `llm.options.script` for a `scripted` llm without one),
 *   compiled as the `scripted` model compiles it;
 * - each provider's options: the provider is built the way the session builds it, with a stand-in
 *   for a key the environment lacks (a missing key is `check`'s to report, and `serve` then runs
 *   the offline stack);
 * - the builtin tool names, and `dtmf.tool` against the agent's tools (MCP tools are listed
 *   only at session start, so a `mcp_<server>_…` name of a configured server is taken on trust);
 * - its team (`resolveTeam`: roster members and sub-agents, what each is, how deep delegation
 *   nests) and each member's llm and tts, each sub-agent's llm;
 * - the workflows: a `workflow-app` agent serves its workflows and no sessions, so it must declare
 *   one; a workflow may not take a name the workflows API's own paths use (`runs`, `events`).
 * Pure: nothing is opened, spawned or called.
 */
export async function startIssues(agent: StartableAgent, env: Env = process.env): Promise<ConfigIssue[]> {
  const { def, config, script } = agent;
  const issues: ConfigIssue[] = [];
  if (config.mode === "workflow-app" && !hasWorkflows(def.workflows)) {
    issues.push({ path: "mode", message: 'a workflow-app agent serves its workflows over HTTP and no sessions, and this one declares none: add one (workflows/<name>.ts, docs/workflows.md), or give the agent a session mode.' });
  }
  for (const name of Object.keys(def.workflows ?? {})) {
    if (RESERVED_WORKFLOW_NAMES.includes(name)) {
      issues.push({ path: `workflows.${name}`, message: `"${name}" is a path of the workflows API (/workflows/${name}/…), so a workflow cannot be named so: rename its file or its key.` });
    }
  }
  if (script !== undefined) {
    try {
      scriptedModel(script);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...scriptIssues(error, "offline.json"));
    }
  }
  issues.push(...(await providerIssues(config, ["stt", "llm", "tts", "s2s"], { env, script })));
  try {
    // A roster member opens its model and (pipeline) its voice; a sub-agent runs in text mode: its model is all it opens.
    for (const member of resolveTeam(def, config, { warn: () => {} }).agents.slice(1)) {
      // What a member inherits from the served agent (the same descriptor) is checked above.
      const slots = (member.role === "member" ? (["llm", "tts"] as const) : (["llm"] as const)).filter((slot) => !sameJson(member.config[slot], config[slot]));
      issues.push(...(await providerIssues(member.config, slots, { env, script, path: member.path })));
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  const builtins = config.builtinTools ?? [];
  try {
    builtinToolset(builtins, { now: () => new Date(), endCall: () => undefined, transfer: config.transfer });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  const dtmf = config.dtmf;
  if (typeof dtmf === "object") {
    const names = [...agentToolsets(def).flatMap((set) => Object.keys(set.list())), ...builtins, ...Object.keys(def.subagents ?? {})];
    const fromMcp = Object.keys(config.mcpServers ?? {}).some((key) => dtmf.tool.startsWith(`mcp_${key}_`));
    if (!names.includes(dtmf.tool) && !fromMcp) {
      issues.push({ path: "dtmf.tool", message: `this agent has no tool named ${dtmf.tool}; add it to the agent's tools or set dtmf: "text".${didYouMean(dtmf.tool, names)}` });
    }
  }
  return issues;
}
