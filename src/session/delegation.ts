/**
 * Sub-agent tools (docs/config.md "Sub-agents"): a call runs another agent in text mode on the
 * task it is given — its own prompt, model and tools, none of the calling conversation — and its
 * final answer is the call's result. Bounded in time by the call's deadline (the tool's
 * `timeoutMs`: the call's signal aborts the sub-agent's model and tools) and in tokens by the
 * sub-agent's `usageLimits.totalTokens`, checked after every model step; every token it spends is
 * counted into the calling session's usage.
 */
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../log.js";
import { resolveConfig, subagentPrompt, tool, toolset, type AnyToolDef, type Delegation, type RandomSource, type TeamAgent, type ToolContext, type ToolResult, type Toolset } from "../manifest/index.js";
import type { ReplyLoop } from "../pipeline/reply-loop.js";
import type { TurnUsage } from "../turn/ledger.js";
import { openReplyLoop, teamModel, type ModelResolver } from "./reply-agent.js";
import { sessionInstructions } from "./session-deps.js";
import { composeToolTable } from "./tool-table.js";
import { ToolRunner } from "./tool-runner.js";

/** Who and what a delegation runs for: the session's identity and providers. */
export interface DelegationIdentity {
  readonly clock: Clock;
  readonly log: Logger;
  readonly random: RandomSource;
  readonly sessionId: string;
  /** The session's value (`sessionContext()`): a sub-agent's tools see it as `ctx.session`. */
  readonly session: unknown;
  readonly resolveModel: ModelResolver;
}

export interface DelegationDeps extends DelegationIdentity {
  /** Why the session's own token budget (`usageLimits`) refuses another delegation, if it does. */
  spent(): string | undefined;
  /** One delegation's usage, counted into the session's whatever its outcome. */
  meter(usage: TurnUsage): void;
}

/**
 * The sub-agent tools of `agent` (source "subagent"), or undefined when it declares none. Each
 * sub-agent is opened here, when the session starts (its model resolved, its own tools composed,
 * its own sub-agents opened in turn), so a model that cannot be built fails the start as the
 * agent's own would, not the first call.
 */
export async function openDelegation(agent: TeamAgent, deps: DelegationDeps): Promise<Toolset | undefined> {
  if (agent.subagents.size === 0) return undefined;
  const tools: Record<string, AnyToolDef> = {};
  for (const [name, delegation] of agent.subagents) {
    const loop = await openSubagent(delegation, deps);
    const { description, parameters, timeoutMs } = delegation.tool;
    tools[name] = tool({
      description,
      parameters,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      execute: (args: unknown, ctx: ToolContext) => delegate(delegation, loop, args, ctx, deps),
    });
  }
  return toolset("subagent", tools, () => {
    const reason = deps.spent();
    return reason === undefined ? undefined : { reason, recover: "Answer without it." };
  });
}

/** A sub-agent's reply loop: its prompt, its model, and its own tools (sub-agents included) run by a tool runner of its own. */
async function openSubagent(delegation: Delegation, deps: DelegationDeps): Promise<ReplyLoop> {
  const { def, config } = delegation.agent;
  const { clock } = deps;
  const log = deps.log.child({ subagent: delegation.agent.path });
  const settings = resolveConfig(config);
  const nested = await openDelegation(delegation.agent, deps);
  const table = composeToolTable({
    def,
    builtinTools: config.builtinTools,
    settings,
    mcp: undefined,
    log,
    now: () => new Date(clock.now()),
    // Refused at load (a sub-agent has no call to end): reached only if that check was skipped.
    endCall: () => {
      throw new GatewayError("internal", `${config.name} is a sub-agent: it has no call to end.`);
    },
    ...(nested === undefined ? {} : { extra: [nested] }),
  });
  // Its calls are its own: recorded nowhere and shown to no client (the session's one call is).
  const runner = new ToolRunner({
    table,
    clock,
    random: deps.random,
    log,
    sessionId: deps.sessionId,
    session: deps.session,
  }, {
    emit: () => {},
    toolSettled: (call, outcome) => log.info({ tool: call.toolName, status: outcome.status }, "sub-agent tool call"),
  });
  const model = await teamModel(config, deps.resolveModel);
  return openReplyLoop({ model, table, invoke: (call) => runner.call(call), config, settings, clock, instructions: sessionInstructions({ def, config }, deps.sessionId) });
}

/** Run one task: the sub-agent's reply to it is the result; a failure throws (the tool runner words it). */
async function delegate(delegation: Delegation, loop: ReplyLoop, args: unknown, ctx: ToolContext, deps: DelegationDeps): Promise<ToolResult> {
  const { name, agent } = delegation;
  const budget = agent.config.usageLimits?.totalTokens;
  let cut = false;
  const result = await loop.run([{ role: "user", content: subagentPrompt(delegation.tool, args) }], ctx.signal, {}, (used) => {
    cut = budget !== undefined && used.totalTokens >= budget;
    return cut;
  });
  deps.meter(result.usage);
  deps.log.info({ subagent: agent.path, status: result.status, cut, totalTokens: result.usage.totalTokens, steps: result.usage.steps }, "delegation settled");
  if (result.status === "failed") throw result.error instanceof Error ? result.error : new Error(String(result.error));
  const answer = result.text.trim();
  if (cut) {
    const said = answer === "" ? "" : ` What it had said: ${answer}`;
    return { text: `${name} stopped after ${result.usage.totalTokens} of its ${budget ?? 0} tokens, before it had answered.${said}`, isError: true };
  }
  if (answer === "") return { text: `${name} finished without an answer.`, isError: true };
  return { text: answer };
}
