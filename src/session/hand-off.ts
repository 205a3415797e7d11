/**
 * Hand-off (docs/config.md "12. Roster and hand-off"): the agent speaking on a session calls
 * `transfer_to_agent` with a roster name, and once the reply that made the call has settled
 * (shown, or played to the caller) the session runs on the other agent — its prompt, its tools,
 * its model and voice — with the conversation as it is, and the new agent's greeting follows.
 *
 * A session is a run of agent segments. Within a segment the advertised tool list is fixed (what
 * a model was told stays true); a hand-off replaces it whole. What the new segment needs that can
 * take time (its model, a TTS voice) is prepared while the reply is still running, inside the
 * tool call, so the switch itself is synchronous, between two replies: the caller hears no gap
 * beyond the reply that announced it.
 */
import { GatewayError } from "../errors.js";
import type { EventBody } from "../events.js";
import type { Logger } from "../log.js";
import {
  compileJsonSchema,
  HAND_OFF_TOOL,
  resolveConfig,
  tool,
  toolset,
  type ResolvedConfig,
  type ResolvedTool,
  type Team,
  type TeamAgent,
  type ToolResult,
  type Toolset,
  type ToolTable,
} from "../manifest/index.js";

/** One agent's stretch of a session: its settings, its frozen tool list, its prompt. */
export interface AgentSegment {
  readonly agent: TeamAgent;
  readonly settings: ResolvedConfig;
  readonly table: ToolTable;
  readonly instructions: () => Promise<string>;
}

/** A mode's side of a hand-off, prepared while the reply that asked for it runs. */
export interface PreparedSwitch {
  /** Run the new agent from the next reply on: synchronous, between replies. */
  commit(): void;
  /** Release what was prepared and never committed (a newer hand-off, a reset, the end). */
  dispose(): Promise<void>;
}

/** How a mode takes another agent: prepare what `segment` needs (its model, its voice) without touching the agent running. */
export type SegmentSwitcher = (segment: AgentSegment, signal: AbortSignal) => Promise<PreparedSwitch>;

/** What a hand-off tells its session (the session's hooks object: methods, called on it). */
export interface HandOffHooks {
  emit(event: EventBody): void;
  /** The session is live: a switch prepared for a session that has ended is dropped. */
  live(): boolean;
  /** The new agent's greeting, said as its first reply. */
  say(text: string): void;
}

export interface HandOffDeps {
  readonly team: Team;
  readonly log: Logger;
  /** An agent's tool table with the toolsets the session built for it (its roster's, its sub-agents'). */
  table(agent: TeamAgent, extra: readonly Toolset[]): ToolTable;
  /** An agent's sub-agent tools, opened (undefined when it has none). */
  delegation(agent: TeamAgent): Promise<Toolset | undefined>;
  /** An agent's system prompt, built per request. */
  instructions(agent: TeamAgent): () => Promise<string>;
}

type State =
  | { readonly kind: "steady" }
  | { readonly kind: "preparing"; readonly target: TeamAgent; readonly controller: AbortController }
  | { readonly kind: "ready"; readonly target: TeamAgent; readonly segment: AgentSegment; readonly prepared: PreparedSwitch };

/** The session's tool table: the agent segment's, replaced whole by a hand-off and fixed in between. */
class SegmentTable implements ToolTable {
  #current: ToolTable;

  constructor(first: ToolTable) {
    this.#current = first;
  }

  get tools(): readonly ResolvedTool[] {
    return this.#current.tools;
  }

  resolve(name: string): ResolvedTool | undefined {
    return this.#current.resolve(name);
  }

  use(table: ToolTable): void {
    this.#current = table;
  }
}

/** Who speaks on the session, and the hand-off from one agent to the next: steady → preparing → ready → (the reply settles) steady. */
export class HandOff {
  readonly #deps: HandOffDeps;
  readonly #hooks: HandOffHooks;
  readonly #table: SegmentTable;
  #active: TeamAgent;
  #state: State = { kind: "steady" };
  #switcher: SegmentSwitcher | undefined;

  readonly #request: Transfer;
  /** Aborted when the session ends. */
  readonly #closed = new AbortController();

  private constructor(deps: HandOffDeps, hooks: HandOffHooks, first: AgentSegment, request: Transfer) {
    this.#deps = deps;
    this.#hooks = hooks;
    this.#active = first.agent;
    this.#table = new SegmentTable(first.table);
    this.#request = request;
  }

  /** Start on the agent the session serves: its segment built (its sub-agents opened). */
  static async open(deps: HandOffDeps, hooks: HandOffHooks): Promise<HandOff> {
    // The served agent's roster tool is built before the hand-off it calls exists; no call reaches it before the session is live.
    const request: Transfer = (from, key, signal) => handOff.request(from, key, signal);
    const handOff = new HandOff(deps, hooks, await segmentOf(deps.team.root, deps, request), request);
    return handOff;
  }

  /** The tool table the session's tool runner and mode see: the active agent's. */
  get table(): ToolTable {
    return this.#table;
  }

  /** The agent speaking now. */
  get active(): TeamAgent {
    return this.#active;
  }

  /** The roster member speaking now, by its path (what a resume record keeps); undefined while the served agent speaks. */
  get speaking(): string | undefined {
    return this.#active.role === "member" ? this.#active.path : undefined;
  }

  /** How the session's mode takes another agent (text, pipeline). */
  accept(switcher: SegmentSwitcher): void {
    this.#switcher = switcher;
  }

  /** A reply settled: a hand-off made ready during it (or before) happens now. */
  replySettled(): void {
    const state = this.#state;
    if (state.kind !== "ready" || !this.#hooks.live()) return;
    this.#state = { kind: "steady" };
    this.#switch(state.target, state.segment, state.prepared);
    if (state.target.config.greeting !== "") this.#hooks.say(state.target.config.greeting);
  }

  /**
   * A resumed session whose record says the roster member at `path` was speaking: that member
   * speaks again, at once and without a greeting (the conversation goes on where it was). A path
   * this team has no member at (the agent changed since), or a mode that cannot switch, leaves
   * the served agent speaking, logged.
   */
  async resume(path: string): Promise<void> {
    const target = this.#deps.team.agents.find((agent) => agent.role === "member" && agent.path === path);
    const switcher = this.#switcher;
    if (target === undefined || switcher === undefined) {
      this.#deps.log.warn({ speaking: path }, "resumed session's agent is not in this team; the served agent speaks");
      return;
    }
    try {
      const segment = await segmentOf(target, this.#deps, this.#request);
      const prepared = await switcher(segment, this.#closed.signal);
      if (this.#closed.signal.aborted) return void (await prepared.dispose());
      this.#switch(target, segment, prepared);
    } catch (error) {
      this.#deps.log.warn({ err: error, speaking: path }, "resumed session's agent could not take over; the served agent speaks");
    }
  }

  /** Make `target` the agent speaking: its tool table, the mode's prepared side, `agent.changed`. */
  #switch(target: TeamAgent, segment: AgentSegment, prepared: PreparedSwitch): void {
    const previous = this.#active;
    this.#table.use(segment.table);
    prepared.commit();
    this.#active = target;
    this.#deps.log.info({ from: previous.config.name, to: target.config.name, tools: segment.table.tools.map((t) => t.name) }, "agent handed off");
    this.#hooks.emit({ type: "agent.changed", agent: target.config.name, previous: previous.config.name });
  }

  /** The conversation was reset: a hand-off not yet made is dropped (the agent speaking stays). */
  reset(): void {
    void this.#drop();
  }

  /** The session ended: release what a hand-off had prepared, and stop a resume's preparation. */
  close(): Promise<void> {
    this.#closed.abort(new Error("the session ended"));
    return this.#drop();
  }

  /**
   * `transfer_to_agent` from `from` to its member `key`: prepare the switch (the member's segment
   * and the mode's side), to be made once the reply settles. A failure leaves `from` speaking; the
   * tool runner words it for the model.
   */
  async request(from: TeamAgent, key: string, signal: AbortSignal): Promise<ToolResult> {
    const target = from.roster.get(key);
    const switcher = this.#switcher;
    // The schema's enum and the load-time refusal of s2s rosters keep both out of reach.
    if (target === undefined || switcher === undefined) throw new GatewayError("internal", `${from.config.name} cannot hand off to ${key} here.`);
    await this.#drop();
    const controller = new AbortController();
    const state: State = { kind: "preparing", target, controller };
    this.#state = state;
    try {
      const segment = await segmentOf(target, this.#deps, this.#request);
      const prepared = await switcher(segment, AbortSignal.any([signal, controller.signal]));
      if (this.#state !== state) {
        await prepared.dispose();
        return { text: `The hand-off to ${key} was called off.`, isError: true };
      }
      this.#state = { kind: "ready", target, segment, prepared };
      return { text: `${key} takes over once you finish this reply, with the conversation so far. Tell the caller you are putting them through.` };
    } catch (error) {
      if (this.#state === state) this.#state = { kind: "steady" };
      throw error;
    }
  }

  /** Abandon a hand-off not yet made: stop its preparation, or release what it prepared. */
  async #drop(): Promise<void> {
    const state = this.#state;
    this.#state = { kind: "steady" };
    if (state.kind === "preparing") state.controller.abort(new Error("hand-off called off"));
    if (state.kind === "ready") {
      await state.prepared.dispose().catch((error: unknown) => this.#deps.log.warn({ err: error }, "hand-off release failed"));
    }
  }
}

/** A `transfer_to_agent` call: from the agent whose tool it is, to its roster member `key`. */
type Transfer = (from: TeamAgent, key: string, signal: AbortSignal) => Promise<ToolResult>;

/** An agent's segment: its roster's tool (when it has one), its sub-agent tools, its table and prompt. */
async function segmentOf(agent: TeamAgent, deps: HandOffDeps, request: Transfer): Promise<AgentSegment> {
  const extra: Toolset[] = [];
  const roster = rosterToolset(agent, (key, signal) => request(agent, key, signal));
  if (roster !== undefined) extra.push(roster);
  const delegation = await deps.delegation(agent);
  if (delegation !== undefined) extra.push(delegation);
  return { agent, settings: resolveConfig(agent.config), table: deps.table(agent, extra), instructions: deps.instructions(agent) };
}

/** `transfer_to_agent` (source "roster"): one tool whose `agent` names a member of this agent's roster, described by its `listing` (else its name). */
function rosterToolset(agent: TeamAgent, request: (key: string, signal: AbortSignal) => Promise<ToolResult>): Toolset | undefined {
  if (agent.roster.size === 0) return undefined;
  const keys = [...agent.roster.keys()];
  const members = [...agent.roster].map(([key, member]) => `${key} (${member.config.listing ?? member.config.name})`).join("; ");
  const transfer = tool({
    description: `Hand this conversation to another agent, who takes over after your current reply, with the conversation so far. Call it when the caller needs one of them, and tell the caller you are putting them through. Agents: ${members}.`,
    parameters: compileJsonSchema(
      { type: "object", properties: { agent: { type: "string", enum: keys, description: "Who takes over." } }, required: ["agent"], additionalProperties: false },
      HAND_OFF_TOOL,
    ),
    effect: "write",
    execute: (args, ctx) => request((args as { agent: string }).agent, ctx.signal),
  });
  return toolset("roster", { [HAND_OFF_TOOL]: transfer });
}
