import { createHash } from "node:crypto";
import { GatewayError } from "../errors.js";
import type { Logger } from "../log.js";
import { agentToolsToSchemas, agentToolsets, composeToolsets, type ResolvedAgentDef, type ResolvedConfig, type ToolTable, type Toolset } from "../manifest/index.js";
import { builtinToolset, type BuiltinHooks } from "./builtins/index.js";
import type { McpTools } from "./mcp.js";

export interface ToolTableSources {
  readonly def: ResolvedAgentDef;
  readonly builtinTools: readonly string[] | undefined;
  readonly settings: ResolvedConfig;
  readonly mcp: McpTools | undefined;
  readonly log: Logger;
  /** The session's clock, as the built-ins read it. */
  readonly now: () => Date;
  /** The `end_call` built-in: end the session after the reply. */
  readonly endCall: () => void;
  /** The agent's `transfer` allow-list, and the `transfer_call` built-in's hook (absent: it cannot transfer). */
  readonly transfer?: BuiltinHooks["transfer"];
  readonly transferCall?: BuiltinHooks["transferCall"];
  /** Toolsets the session builds for this agent (its roster's, its sub-agents'), after the built-ins, before MCP. */
  readonly extra?: readonly Toolset[];
}

/**
 * An agent's tool table, composed once: its toolsets, then the built-ins, then what the session
 * built for it (its roster's hand-off tool, its sub-agent tools), then MCP (first wins; a shadowed
 * tool is logged). Frozen from here on: advertised unchanged for the agent's segment of the
 * session (until a hand-off, `hand-off.ts`; call-time gates decide when); its schema hash is
 * logged so two sessions can be compared. A `dtmf.tool` that names no tool in the table is refused.
 */
export function composeToolTable(sources: ToolTableSources): ToolTable {
  const { def, builtinTools, mcp, log, settings } = sources;
  const sets: Toolset[] = [...agentToolsets(def)];
  if (builtinTools !== undefined && builtinTools.length > 0) sets.push(builtinToolset(builtinTools, { now: sources.now, endCall: sources.endCall, transfer: sources.transfer, transferCall: sources.transferCall }));
  sets.push(...(sources.extra ?? []));
  if (mcp !== undefined) sets.push(mcp.toolset);
  const table = composeToolsets(sets, (name, kept, dropped) => log.warn({ tool: name, kept, dropped }, "tool shadowed"));
  const dtmf = settings.dtmf;
  if (typeof dtmf === "object" && !table.tools.some((t) => t.name === dtmf.tool)) {
    throw new GatewayError("internal", `dtmf.tool: this agent has no tool named ${dtmf.tool}; add it to the agent's tools or set dtmf: "text".`, { fatal: true });
  }
  const schemas = agentToolsToSchemas(table.tools.map((t) => t.toolset));
  log.info({ tools: table.tools.map((t) => t.name), toolsHash: createHash("sha256").update(JSON.stringify(schemas)).digest("hex").slice(0, 16) }, "tool table frozen");
  return table;
}
