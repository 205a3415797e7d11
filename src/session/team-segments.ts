/**
 * What each agent of a session's team needs for its segment (docs/config.md "12. Roster and
 * hand-off"), as the session provides it to the `HandOff`: its tool table (its own tools, the
 * session's builtins, the served agent's MCP servers, and the toolsets a segment adds — its
 * roster's `transfer_to_agent`, its sub-agent tools), its sub-agent tools opened, and its system
 * prompt, built per request.
 */
import type { ResolvedConfig } from "../manifest/index.js";
import type { BuiltinHooks } from "./builtins/index.js";
import { openDelegation, type DelegationDeps } from "./delegation.js";
import type { HandOffDeps } from "./hand-off.js";
import type { McpTools } from "./mcp.js";
import { sessionInstructions } from "./session-deps.js";
import { composeToolTable } from "./tool-table.js";

export interface TeamSegmentParts extends DelegationDeps {
  /** The session's settings (the served agent's, every default applied): the dtmf tool is checked against each table. */
  readonly settings: ResolvedConfig;
  /** The served agent's MCP servers (a roster member with servers of its own is refused at load). */
  readonly mcp: McpTools | undefined;
  /** `end_call`: end the session once the current reply has been heard. */
  readonly endCall: () => void;
  /** `transfer_call`: hand the caller over once the current reply has been heard. */
  readonly transferCall: BuiltinHooks["transferCall"];
}

/** The per-agent parts of `HandOffDeps`: tool tables, sub-agent tools and prompts for every agent of the team. */
export function teamSegments(parts: TeamSegmentParts): Pick<HandOffDeps, "delegation" | "table" | "instructions"> {
  const { clock, log, settings, mcp, endCall, transferCall, sessionId } = parts;
  return {
    delegation: (agent) => openDelegation(agent, parts),
    table: (agent, extra) =>
      composeToolTable({
        def: agent.def,
        builtinTools: agent.config.builtinTools,
        settings,
        mcp: agent.role === "served" ? mcp : undefined,
        log,
        now: () => new Date(clock.now()),
        endCall,
        transfer: agent.config.transfer,
        transferCall,
        extra,
      }),
    instructions: (agent) => () => sessionInstructions(agent, sessionId),
  };
}
