/**
 * What a session opens at start, in order: its context (the agent's `sessionContext`), the served
 * agent's MCP servers, the hand-off (the team's segments: tool tables, sub-agent tools, prompts),
 * the tool runner over the active agent's table, and the mode's runner. A step that fails closes
 * what the steps before it opened, so a failed start leaves no MCP connection or sub-agent open.
 */
import type { ResolvedConfig, SessionMode, Team, ToolWorkflows } from "../manifest/index.js";
import type { CallEnding } from "./call-ending.js";
import type { CallTransfer } from "./call-transfer.js";
import type { Conversation } from "./conversation.js";
import { HandOff } from "./hand-off.js";
import type { McpTools } from "./mcp.js";
import type { ModeRunner } from "./mode-runner.js";
import { openMode } from "./modes.js";
import { callInfo, sessionInstructions, type SessionDeps } from "./session-deps.js";
import type { SessionPort } from "./session-port.js";
import { TeamSegments } from "./team-segments.js";
import { ToolRunner } from "./tool-runner.js";
import type { UsageMeter } from "./usage-meter.js";
import type { VoicemailScreen } from "./voicemail-screen.js";

/** The parts a live session runs on. */
export interface SessionParts {
  /** The agent's `sessionContext` value: handed to its tools, guardrails, observers and `onSessionEnd`. */
  readonly sessionValue: unknown;
  readonly mcp: McpTools | undefined;
  /** Who speaks: the served agent first; its roster may hand the session on. */
  readonly handOff: HandOff;
  readonly tools: ToolRunner;
  readonly mode: ModeRunner;
}

/** What the parts open from: the session's deps and settings, its port, and the call controls the agent's builtin tools drive. */
export interface SessionOpening {
  readonly deps: SessionDeps;
  readonly sessionId: string;
  readonly mode: SessionMode;
  readonly settings: ResolvedConfig;
  readonly team: Team;
  readonly conversation: Conversation;
  readonly port: SessionPort;
  /** Usage limits: sub-agents' replies are metered and refused with the session's. */
  readonly usage: UsageMeter;
  /** `end_call` and `transfer_call`. */
  readonly ending: CallEnding;
  readonly transfer: CallTransfer;
  /** A screened call's mode hears the link through the screen. */
  readonly screen: VoicemailScreen | undefined;
  /** The agent's workflows, as its tools' `ctx.workflows`. */
  readonly workflows: ToolWorkflows | undefined;
}

/** Open the parts under `signal` (the start deadline's); rejects, with the earlier parts closed, when one fails. */
export async function openSessionParts(opening: SessionOpening, signal: AbortSignal): Promise<SessionParts> {
  const { deps, sessionId, mode, port } = opening;
  const { agent, clock, random = Math.random, resolveModel, voice, s2s, env = process.env } = deps;
  const sessionValue = agent.def.sessionContext?.({ sessionId, mode, ...callInfo(deps) });
  const mcp = await deps.connectMcp?.(agent.def);
  let handOff: HandOff | undefined;
  try {
    handOff = await openHandOff(opening, sessionValue, mcp);
    const { table } = handOff;
    const tools = new ToolRunner({ table, clock, random, log: port.log, sessionId, session: sessionValue, conversation: opening.conversation, workflows: opening.workflows }, port);
    const opened = handOff;
    const runner = await openMode({
      mode,
      ctx: port,
      config: agent.config,
      settings: opening.settings,
      table,
      tools,
      instructions: sessionInstructions(agent, sessionId),
      link: opening.screen?.modeLink(deps.link) ?? deps.link,
      waitingAudio: agent.waitingAudio,
      providers: { resolveModel, voice, s2s, env },
      signal,
      switchesAgent: (switcher) => opened.accept(switcher),
    });
    return { sessionValue, mcp, handOff, tools, mode: runner };
  } catch (error) {
    await Promise.allSettled([handOff?.close(), mcp?.close()]);
    throw error;
  }
}

/** The served agent's segment first, its tools composed (its sub-agents opened); its roster may hand the session on. */
function openHandOff(opening: SessionOpening, sessionValue: unknown, mcp: McpTools | undefined): Promise<HandOff> {
  const { deps, port } = opening;
  const { clock, random = Math.random, resolveModel } = deps;
  const { team, settings, usage, ending, transfer } = opening;
  const segments = new TeamSegments({ team, clock, log: port.log, random, sessionId: opening.sessionId, session: sessionValue, resolveModel, settings, mcp, usage, ending, transfer });
  return HandOff.open(segments, port);
}
