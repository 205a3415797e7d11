/**
 * `switchboard check <agent>`: validate an agent the way a session start would, and list its
 * tools (a dialog's with its dialog and states), dialogs, guardrails, routes (and who may call each), event
 * observers, providers and keys. Exit 1 when any session would fail to start; 0 otherwise, with a
 * warning for what a session survives (a missing key the offline stack covers, an MCP server it
 * would go without, a scripted call of a tool the agent lacks).
 */
import process from "node:process";
import { EVERY_EVENT, observedKeys } from "../manifest/index.js";
import type { AnyToolDef, DialogToolInfo } from "../manifest/index.js";
import type { Delegation, Team, TeamAgent } from "../manifest/index.js";
import type { LoadedAgent } from "../server/loader.js";
import { guardrailName } from "../turn/guardrails.js";
import { describe, EXIT, fail, type Command } from "./command.js";
import { dotEnvFor, noteDotEnv } from "./env.js";

/** Where `check` reads keys and writes its report: the process's, or a test's. */
export interface CheckIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The report (stdout). */
  out(text: string): void;
  /** Warnings and the failure (stderr). */
  err(text: string): void;
}

const PROCESS_IO: CheckIo = {
  env: process.env,
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/**
 * The tool names a scripted rule may call: those of every agent of the team (offline.json answers
 * for all of them) — its own (files, inline, toolsets), its builtins, its sub-agents and its roster's.
 */
function offeredTools(team: Team, handOffTool: string): string[] {
  return team.agents.flatMap(({ def, config, roster, subagents }) => [
    ...Object.keys(def.tools),
    ...(def.toolsets ?? []).flatMap((set) => Object.keys(set.list())),
    ...(config.builtinTools ?? []),
    ...subagents.keys(),
    ...(roster.size > 0 ? [handOffTool] : []),
  ]);
}

/** A sub-agent tool as `check` lists it: who answers, on which model, within what, and whom it delegates to in turn. */
function subagentLine(delegation: Delegation, defaultTimeoutMs: number): string {
  const { agent, tool } = delegation;
  const nested = [...agent.subagents.keys()];
  const budget = agent.config.usageLimits?.totalTokens;
  return [
    `subagent "${agent.config.name}": llm ${agent.config.llm?.kind ?? "none"}`,
    `up to ${tool.timeoutMs ?? defaultTimeoutMs} ms`,
    ...(budget === undefined ? [] : [`${budget} tokens`]),
    ...(nested.length === 0 ? [] : [`delegates to ${nested.join(", ")}`]),
  ].join(", ");
}

/** A roster member as `check` lists it: its name, what it speaks with, its own tools and whom it hands to in turn. */
function memberLine(member: TeamAgent): string {
  const { config, def } = member;
  const tools = [...Object.keys(def.tools), ...(config.builtinTools ?? []), ...member.subagents.keys()];
  return [
    `"${config.name}": llm ${config.llm?.kind ?? "none"}${config.tts === undefined ? "" : `, tts ${config.tts.kind}`}`,
    `tools ${tools.length === 0 ? "none" : tools.join(", ")}`,
    ...(member.roster.size === 0 ? [] : [`hands to ${[...member.roster.keys()].join(", ")}`]),
  ].join("; ");
}

/** `offline.json` rules that call a tool the agent does not offer: the scripted model skips those calls (and warns at run time). */
async function scriptWarnings(agent: LoadedAgent, team: Team, handOffTool: string): Promise<string[]> {
  if (agent.script === undefined) return [];
  const { ScriptSchema } = await import("../pipeline/providers/llm/script.js");
  const parsed = ScriptSchema.safeParse(agent.script);
  if (!parsed.success) return [];
  // A workflow's end reaches the model as a `workflow_update` tool result (docs/workflows.md "notify"): a rule for it is how the scripted model says it.
  const { NOTE_TOOL_NAME } = await import("../turn/agent-note.js");
  const notes = Object.keys(agent.def.workflows ?? {}).length > 0 ? [NOTE_TOOL_NAME] : [];
  const offered = [...new Set([...offeredTools(team, handOffTool), ...notes])];
  const mcp = Object.keys(agent.config.mcpServers ?? {}).map((key) => `mcp_${key}_`);
  const { didYouMean } = await import("../manifest/errors.js");
  const warnings: string[] = [];
  (parsed.data.rules ?? []).forEach((rule, i) => {
    const calls = rule.call === undefined ? [] : Array.isArray(rule.call) ? rule.call : [rule.call];
    calls.forEach((call, j) => {
      if (offered.includes(call.tool) || mcp.some((prefix) => call.tool.startsWith(prefix))) return;
      const where = Array.isArray(rule.call) ? `rules[${i}].call[${j}].tool` : `rules[${i}].call.tool`;
      warnings.push(`offline.json ${where}: "${call.tool}" is not a tool of this agent, so the offline model skips this rule's calls.${didYouMean(call.tool, offered)}`);
    });
  });
  return warnings;
}

/** `dialogToolOf`, loaded with the rest of what `check` runs. */
type DialogToolOf = (def: AnyToolDef) => DialogToolInfo | undefined;

/** How a tool is gated: a dialog tool names its dialog and the states it runs in. */
function gateNote(tool: AnyToolDef, dialogToolOf: DialogToolOf): string {
  const dialog = dialogToolOf(tool);
  if (dialog !== undefined) return `  (dialog ${dialog.dialog.id}: ${dialog.allowedIn.join(", ")})`;
  return tool.gate === undefined ? "" : "  (gated)";
}

/** The agent's dialogs: each one's states from its start, its final states and its tools. */
function dialogLines(def: LoadedAgent["def"], dialogToolOf: DialogToolOf): string[] {
  const dialogs = Object.values(def.dialogs ?? {});
  if (dialogs.length === 0) return [];
  const lines = ["dialogs:"];
  for (const dialog of dialogs) {
    const states = Object.entries(dialog.states);
    const finals = states.filter(([, state]) => state.type === "final").map(([name]) => name);
    const tools = Object.entries(def.tools).filter(([, tool]) => dialogToolOf(tool)?.dialog === dialog).map(([name]) => name);
    lines.push(`  ${dialog.id.padEnd(18)} ${states.length} states from ${dialog.initial} to ${finals.join(" or ") || "no final state"}; tools: ${tools.join(", ") || "none"}`);
  }
  return lines;
}

/** The agent's guardrails, in the order they run, each by its function's name (docs/config.md "Guardrails"). */
function guardrailLines(def: LoadedAgent["def"]): string[] {
  const lines = (["input", "output"] as const).flatMap((direction) =>
    (def[`${direction}Guardrails`] ?? []).map((guardrail, i) => `  ${direction.padEnd(7)}${guardrailName(guardrail, i)}`),
  );
  return lines.length === 0 ? [] : ["guardrails:", ...lines];
}

/** Validate the agent at `path` and report; resolves with the exit code. */
export async function runCheck(path: string, io: CheckIo = PROCESS_IO): Promise<number> {
  const warn = (message: string): void => io.err(`warning: ${message}\n`);
  const { loadAgent } = await import("../server/loader.js");
  let agent: LoadedAgent;
  try {
    agent = await loadAgent(path, { warn });
  } catch (error) {
    io.err(`switchboard: ${describe(error)}\n`);
    return EXIT.failed;
  }
  const { missingKey } = await import("../server/offline.js");
  const { mcpConfigProblems } = await import("../session/mcp.js");
  const { dialogToolOf } = await import("../manifest/dialog.js");
  const { config, def, toolFiles } = agent;
  const out: string[] = [`${config.name}: ${config.mode} agent`];
  out.push("tools:");
  for (const [name, tool] of Object.entries(def.tools)) {
    const kinds = Object.keys(tool.messages ?? {});
    out.push(`  ${name.padEnd(18)} ${toolFiles[name] ?? "inline"}${kinds.length > 0 ? `  messages: ${kinds.join(", ")}` : ""}${gateNote(tool, dialogToolOf)}`);
  }
  for (const name of config.builtinTools ?? []) out.push(`  ${name.padEnd(18)} builtin`);
  const { DEFAULTS, HAND_OFF_TOOL, resolveTeam, sameJson } = await import("../manifest/index.js");
  const team = resolveTeam(def, config, { warn: () => {} });
  if (team.root.roster.size > 0) out.push(`  ${HAND_OFF_TOOL.padEnd(18)} roster: ${[...team.root.roster.keys()].join(", ")}`);
  for (const delegation of team.root.subagents.values()) out.push(`  ${delegation.name.padEnd(18)} ${subagentLine(delegation, DEFAULTS.toolTimeoutMs)}`);
  const members = team.agents.filter((agent) => agent.role === "member");
  if (members.length > 0) out.push("roster:", ...members.map((member) => `  ${member.path.padEnd(18)} ${memberLine(member)}`));
  for (const key of Object.keys(config.mcpServers ?? {})) out.push(`  mcp_${key}_*${" ".repeat(Math.max(1, 13 - key.length))}mcp server "${key}" (listed at session start)`);
  out.push(...dialogLines(def, dialogToolOf));
  const { parseAgentRoutes } = await import("../manifest/index.js");
  const routes = parseAgentRoutes(def.routes).routes;
  if (routes.length > 0) {
    // Who may call each: the gateway's auth is on only where SWITCHBOARD_API_KEY is set.
    const authOn = (io.env.SWITCHBOARD_API_KEY ?? "") !== "";
    out.push("routes:");
    for (const route of routes) {
      const access = route.auth === "none" ? 'public (auth: "none")' : authOn ? "API key or session token" : "public while SWITCHBOARD_API_KEY is unset (the gateway's auth)";
      out.push(`  ${route.key.padEnd(18)} ${access}`);
    }
  }
  const observed = observedKeys(def.events).map((key) => (key === EVERY_EVENT ? `${key} (every event)` : key));
  if (observed.length > 0) out.push(`observers: ${observed.join(", ")}`);
  out.push(...guardrailLines(def));
  const flows = Object.entries(def.workflows ?? {});
  if (flows.length > 0) out.push("workflows:", ...flows.map(([name, flow]) => `  ${name.padEnd(18)} steps: ${Object.keys(flow.steps).join(", ") || "none"} — ${flow.description}`));
  // A workflow app runs no sessions: it opens no provider, and there is no offline stack to fall back to.
  const app = config.mode === "workflow-app";
  out.push(app ? "providers: none (a workflow-app agent serves the workflows API, not sessions)" : "providers:");
  let missing = 0;
  for (const slot of app ? [] : (["stt", "llm", "tts", "s2s"] as const)) {
    const descriptor = config[slot];
    if (descriptor === undefined) continue;
    const variable = missingKey(descriptor, io.env);
    out.push(`  ${slot.padEnd(4)} ${descriptor.kind}${variable === undefined ? "" : `  — needs ${variable}`}`);
    if (variable !== undefined) missing += 1;
  }
  // A member's or sub-agent's own provider without its key takes the whole team offline too (serve).
  for (const agent of app ? [] : team.agents.slice(1)) {
    for (const slot of agent.role === "member" ? (["llm", "tts"] as const) : (["llm"] as const)) {
      const descriptor = agent.config[slot];
      const variable = descriptor === undefined || sameJson(descriptor, config[slot]) ? undefined : missingKey(descriptor, io.env);
      if (descriptor === undefined || variable === undefined) continue;
      out.push(`  ${agent.path} ${slot} ${descriptor.kind}  — needs ${variable}`);
      missing += 1;
    }
  }
  /** `serve` runs the offline stack (its own `scripted` llm, with no options). */
  const offline = missing > 0;
  for (const variable of config.requiredEnv ?? []) {
    if ((io.env[variable] ?? "") === "") {
      out.push(`  requiredEnv ${variable} — missing`);
      missing += 1;
    }
  }
  if (agent.script !== undefined) {
    const rules = (agent.script as { rules?: readonly unknown[] }).rules?.length ?? 0;
    out.push(`offline.json: ${rules} ${rules === 1 ? "rule" : "rules"} (the scripted model's script)`);
  } else if (config.llm?.kind === "scripted" && config.llm.options.script !== undefined) {
    out.push("offline.json: none — the scripted llm runs llm.options.script");
  } else if (!app && (offline || config.llm?.kind === "scripted")) {
    out.push("offline.json: none — the scripted model answers every turn with its fallback line");
  }
  const waiting = agent.waitingAudio;
  for (const [which, entry] of [["thinking", waiting?.thinking], ["ambience", waiting?.ambience]] as const) {
    if (entry === undefined) continue;
    const file = config.waitingAudio?.[which]?.file ?? "";
    out.push(`waitingAudio.${which}: ${file} (${(entry.sound.ms / 1000).toFixed(1)} s at ${entry.sound.sampleRate} Hz, volume ${entry.gain})`);
  }
  if (missing > 0) out.push(app ? `${missing} missing.` : `${missing} missing; serve falls back to the offline stack for missing provider keys.`);
  io.out(`${out.join("\n")}\n`);
  for (const problem of mcpConfigProblems(def.mcpServers, io.env)) warn(`${problem} Sessions start without this server's tools.`);
  for (const problem of await scriptWarnings(agent, team, HAND_OFF_TOOL)) warn(problem);
  return EXIT.ok;
}

export const checkCommand: Command = {
  name: "check",
  args: "<agent-dir-or-file>",
  summary: "validate an agent as a session start would: tools (source, messages), routes, offline.json, provider options and keys",
  optionHelp: "",
  options: {},
  run: ([target]) => {
    if (target === undefined) return Promise.resolve(fail("check needs an agent directory or file.", EXIT.usage));
    // The keys reported present or missing include those the .env files set (src/cli/env.ts).
    const loaded = dotEnvFor(target);
    if ("error" in loaded) return Promise.resolve(fail(loaded.error));
    noteDotEnv(loaded);
    return runCheck(target);
  },
};
