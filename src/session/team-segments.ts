/**
 * What each agent of a session's team needs for its segment (docs/config.md "12. Roster and
 * hand-off"), as the session provides it to the `HandOff`: its tool table (its own tools, the
 * session's builtins, the served agent's MCP servers, and the toolsets a segment adds — its
 * roster's `transfer_to_agent`, its sub-agent tools), its sub-agent tools opened, and its system
 * prompt, built per request.
 */
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { RandomSource, ResolvedConfig, Team, TeamAgent, ToolTable, Toolset } from "../manifest/index.js";
import type { TurnUsage } from "../turn/ledger.js";
import type { CallEnding } from "./call-ending.js";
import type { CallTransfer } from "./call-transfer.js";
import { openDelegation, type DelegationDeps, type DelegationIdentity } from "./delegation.js";
import type { HandOffDeps } from "./hand-off.js";
import type { ModelResolver } from "./reply-agent.js";
import type { UsageMeter } from "./usage-meter.js";
import type { McpTools } from "./mcp.js";
import { sessionInstructions } from "./session-deps.js";
import { composeToolTable } from "./tool-table.js";

/** What the session lends its team: its identity and providers, and the call controls and usage meter the agents' tools drive. */
export interface TeamSegmentParts extends DelegationIdentity {
  readonly team: Team;
  /** The session's settings (the served agent's, every default applied): the dtmf tool is checked against each table. */
  readonly settings: ResolvedConfig;
  /** The served agent's MCP servers (a roster member with servers of its own is refused at load). */
  readonly mcp: McpTools | undefined;
  /** The session's token budget (`usageLimits`): delegations are refused past it and counted into it. */
  readonly usage: UsageMeter;
  /** `end_call`: end the session once the current reply has been heard. */
  readonly ending: Pick<CallEnding, "afterReply">;
  /** `transfer_call`: hand the caller over once the current reply has been heard. */
  readonly transfer: Pick<CallTransfer, "request">;
}

/**
 * The per-agent parts of `HandOffDeps` — tool tables, sub-agent tools and prompts for every agent
 * of the team — and the delegations' deps, as one object per session (its hooks methods, not a
 * closure each: heap per call, docs/benchmarks.md).
 */
export class TeamSegments implements HandOffDeps, DelegationDeps {
  readonly team: Team;
  readonly clock: Clock;
  readonly log: Logger;
  readonly random: RandomSource;
  readonly sessionId: string;
  readonly session: unknown;
  readonly resolveModel: ModelResolver;
  readonly #parts: TeamSegmentParts;

  constructor(parts: TeamSegmentParts) {
    this.#parts = parts;
    this.team = parts.team;
    this.clock = parts.clock;
    this.log = parts.log;
    this.random = parts.random;
    this.sessionId = parts.sessionId;
    this.session = parts.session;
    this.resolveModel = parts.resolveModel;
  }

  delegation(agent: TeamAgent): Promise<Toolset | undefined> {
    return openDelegation(agent, this);
  }

  table(agent: TeamAgent, extra: readonly Toolset[]): ToolTable {
    const { settings, mcp, clock, log, ending, transfer } = this.#parts;
    return composeToolTable({
      def: agent.def,
      builtinTools: agent.config.builtinTools,
      settings,
      mcp: agent.role === "served" ? mcp : undefined,
      log,
      now: () => new Date(clock.now()),
      endCall: () => ending.afterReply("call ended by the agent"),
      transfer: agent.config.transfer,
      transferCall: (target) => transfer.request(target),
      extra,
    });
  }

  instructions(agent: TeamAgent): () => Promise<string> {
    return sessionInstructions(agent, this.sessionId);
  }

  spent(): string | undefined {
    return this.#parts.usage.refusal()?.message;
  }

  meter(usage: TurnUsage): void {
    this.#parts.usage.add(usage);
  }
}
