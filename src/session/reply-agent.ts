import type { LanguageModel } from "ai";
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { AgentConfig, ProviderDescriptor, ResolvedConfig, TeamAgent, ToolTable } from "../manifest/index.js";
import type { ReplyAgentDeps, ReplyLoop, ReplySettings } from "../pipeline/reply-loop.js";
import type { ToolDeclaration, ToolInvoker } from "../pipeline/tool-port.js";
import type { SegmentSwitcher } from "./hand-off.js";
import type { VoiceSwitch } from "./voice-switch.js";
import { spread } from "../spread.js";

/** A tool table's list as a model or a speech service is told it (name, description, JSON Schema). */
export function declared(table: ToolTable): ToolDeclaration[] {
  return table.tools.map(({ name, entry }) => ({ name, description: entry.def.description, parameters: entry.def.parameters.json }));
}

/** An agent's LLM settings as its replies run them, defaults applied (docs/config.md "2. Fields"). */
export function replySettings(config: AgentConfig, settings: ResolvedConfig): ReplySettings {
  return {
    maxSteps: settings.maxSteps,
    toolChoice: settings.toolChoice,
    resetToolChoice: settings.resetToolChoice,
    maxRetries: settings.maxRetries,
    temperature: config.temperature,
    maxOutputTokens: config.maxOutputTokens,
  };
}

/** What one agent's replies run on: its model, its tools (through `invoke`), its settings and its prompt. */
export interface ReplyAgent {
  readonly model: LanguageModel;
  readonly table: ToolTable;
  readonly invoke: ToolInvoker;
  readonly config: AgentConfig;
  readonly settings: ResolvedConfig;
  readonly clock: Clock;
  readonly instructions: () => Promise<string>;
}

/** The part of a reply loop a hand-off replaces (`ReplyLoop.switchAgent`). */
export function replyAgentDeps(agent: Omit<ReplyAgent, "invoke" | "clock">): ReplyAgentDeps {
  return { model: agent.model, tools: declared(agent.table), settings: replySettings(agent.config, agent.settings), instructions: agent.instructions };
}

/** A reply loop over one agent. The loop brings the AI SDK (~6 MB): loaded by the first session that needs it, not by an idle or s2s gateway. */
export async function openReplyLoop(agent: ReplyAgent): Promise<ReplyLoop> {
  const { ReplyLoop } = await import("../pipeline/reply-loop.js");
  return new ReplyLoop(spread(replyAgentDeps(agent), { invoke: agent.invoke, clock: agent.clock }));
}

/**
 * How a session turns an llm descriptor into a model. `script`: the offline script a `scripted`
 * model answers from; left out, the gateway's (the agent directory's offline.json, if any).
 */
export type ModelResolver = (descriptor: ProviderDescriptor, script?: unknown) => LanguageModel | Promise<LanguageModel>;

/**
 * The model of a team agent other than the session's own (a sub-agent, a roster member): a
 * `scripted` llm answers from its own `llm.options.script` when it has one, else from the agent
 * directory's offline.json (docs/config.md "Sub-agents").
 */
export function teamModel(config: AgentConfig, resolve: ModelResolver): LanguageModel | Promise<LanguageModel> {
  const llm = llmOf(config);
  const own = llm.kind === "scripted" ? llm.options.script : undefined;
  return own === undefined ? resolve(llm) : resolve(llm, own);
}

/** The model of any agent of the team: the served agent's answers from the gateway's script (offline.json first), the others as `teamModel` says. */
export function agentModel(agent: TeamAgent, resolve: ModelResolver): LanguageModel | Promise<LanguageModel> {
  return agent.role === "served" ? resolve(llmOf(agent.config)) : teamModel(agent.config, resolve);
}

function llmOf(config: AgentConfig): ProviderDescriptor {
  if (config.llm === undefined) throw new GatewayError("internal", `${config.name} has no llm provider to run on.`, { fatal: true });
  return config.llm;
}

/**
 * How a reply-loop mode (text, pipeline) takes another agent: its model resolved and, for a voice
 * (`voice`), its TTS opened while the announcing reply runs; then, between replies, the loop's
 * model, tools, settings and prompt and the voice are swapped at once.
 */
export function replyLoopSwitch(loop: ReplyLoop, resolve: ModelResolver, voice?: VoiceSwitch): SegmentSwitcher {
  return async (segment, signal) => {
    const { agent } = segment;
    const model = await agentModel(agent, resolve);
    const next = replyAgentDeps({ model, table: segment.table, config: agent.config, settings: segment.settings, instructions: segment.instructions });
    const speaking = await voice?.prepare(agent.config.tts, signal);
    return {
      commit: () => {
        loop.switchAgent(next);
        speaking?.commit();
      },
      dispose: () => speaking?.dispose() ?? Promise.resolve(),
    };
  };
}
