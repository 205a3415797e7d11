import type { JSONSchema7 } from "json-schema";
import { ToolDefinitionError } from "./errors.js";
import {
  invokeTool,
  isClientTool,
  type AnyToolDef,
  type ToolContext,
  type ToolEffect,
  type ToolMap,
  type ToolRefusal,
  type ToolReturn,
  type ToolUi,
} from "./tool-def.js";
import type { ToolMessages } from "./tool-messages.js";

/** Who runs a tool's body: this process, or the connected page (a clientTool). */
export type ToolExecutor = "host" | "client";

/** Where a Toolset's tools come from. Decides nothing about execution; the entry does. */
export type ToolSource = "files" | "builtin" | "mcp" | "roster" | "subagent";

/** One advertised tool: the def the model reads, and who executes it. */
export interface ToolsetEntry {
  readonly def: AnyToolDef;
  readonly executor: ToolExecutor;
  /** A per-call deadline the entry carries (a clientTool's timeoutMs). */
  readonly timeoutMs?: number;
}

/**
 * A source of tools, as the runtime consumes it.
 *
 * The advertised list is fixed for an agent's segment of a session on every transport (an s2s
 * service holds its tool list until it is told another; only a hand-off changes the agent, and
 * with it the whole list), so a rule about WHEN a tool may run is a `gate` at the call — which is
 * also where the model is told why, and how to recover.
 */
export interface Toolset {
  readonly source: ToolSource;
  /** Every tool this set advertises, by the name the model calls. */
  list(): Readonly<Record<string, ToolsetEntry>>;
  /** `undefined` when `name` may run now; otherwise the refusal the model reads. */
  gate(name: string, ctx: ToolContext): ToolRefusal | undefined;
  /** Run `name`'s body with already-validated arguments. Gating is the caller's. */
  execute(name: string, args: unknown, ctx: ToolContext): Promise<ToolReturn>;
}

/** A gate over one def — what `toolset` composes into `Toolset.gate`. */
export type ToolGate = (name: string, def: AnyToolDef, ctx: ToolContext) => ToolRefusal | undefined;

/** One resolved name in a ToolTable. */
export interface ResolvedTool {
  readonly name: string;
  readonly entry: ToolsetEntry;
  readonly toolset: Toolset;
}

/** Several toolsets composed into one name → tool lookup. */
export interface ToolTable {
  /** Every advertised tool, in precedence order. */
  readonly tools: readonly ResolvedTool[];
  resolve(name: string): ResolvedTool | undefined;
}

/** A tool declaration in wire form: the serializable counterpart of a ToolDef. */
export interface ToolSchema {
  type: "function";
  name: string;
  description: string;
  parameters: JSONSchema7;
  /** What the tool does to the world. Never sent to the model. */
  effect?: ToolEffect;
  /** The tool's spoken messages, normalized; absent when the tool declares none. */
  messages?: ToolMessages;
  /** How a page displays the tool; absent when the tool declares none. */
  ui?: ToolUi;
}

/** What carries tools: an agent definition (its tools/ files, plus attached toolsets). */
export interface ToolBearingDef {
  readonly tools: ToolMap;
  readonly toolsets?: readonly Toolset[];
}

/**
 * Classify one def into an entry: the ONE place a def's identity is inspected. A clientTool
 * (its brand) is executed by the page; everything else here.
 */
export function toolEntry(def: AnyToolDef): ToolsetEntry {
  const executor: ToolExecutor = isClientTool(def) ? "client" : "host";
  return def.timeoutMs === undefined ? { def, executor } : { def, executor, timeoutMs: def.timeoutMs };
}

/**
 * Build a Toolset over a map of defs. Each def's own `gate` is checked first, then `gate`
 * (if given).
 */
export function toolset(source: ToolSource, tools: ToolMap, gate?: ToolGate): Toolset {
  const entries: Readonly<Record<string, ToolsetEntry>> = Object.freeze(
    Object.fromEntries(Object.entries(tools).map(([name, def]) => [name, toolEntry(def)])),
  );
  const lookup = (name: string): ToolsetEntry => {
    const entry = Object.hasOwn(entries, name) ? entries[name] : undefined;
    if (entry === undefined) throw new ToolDefinitionError(`no tool named \`${name}\` in this ${source} toolset.`);
    return entry;
  };
  return {
    source,
    list: () => entries,
    gate(name, ctx) {
      const { def } = lookup(name);
      return def.gate?.(ctx as ToolContext<never>) ?? gate?.(name, def, ctx);
    },
    execute: (name, args, ctx) => {
      try {
        return invokeTool(lookup(name).def, args, ctx);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
  };
}

/** Layer extra gates over a set — every gate must pass, the set's own first. */
export function gateToolset(set: Toolset, gates: readonly ToolGate[]): Toolset {
  return {
    source: set.source,
    list: () => set.list(),
    gate(name, ctx) {
      const own = set.gate(name, ctx);
      if (own !== undefined) return own;
      const def = set.list()[name]?.def;
      if (def === undefined) return undefined;
      for (const gate of gates) {
        const refusal = gate(name, def, ctx);
        if (refusal !== undefined) return refusal;
      }
      return undefined;
    },
    execute: (name, args, ctx) => set.execute(name, args, ctx),
  };
}

/**
 * Compose toolsets, FIRST WINS: a later set's tool of an already-taken name is dropped, and
 * `onShadowed` hears about it — the precedence is the order.
 *
 * `onShadowed(name, kept, dropped)` gets the tool's name and the SOURCES of the set that kept
 * it and of the set whose tool was dropped (seed 000: `onShadowed?: (name, kept, dropped) =>
 * void`) — what a log line or a collision message says ("weather: files kept, mcp dropped");
 * the tables themselves stay inside.
 */
export function composeToolsets(
  sets: readonly Toolset[],
  onShadowed?: (name: string, kept: ToolSource, dropped: ToolSource) => void,
): ToolTable {
  const byName = new Map<string, ResolvedTool>();
  for (const set of sets) {
    for (const [name, entry] of Object.entries(set.list())) {
      const kept = byName.get(name);
      if (kept === undefined) byName.set(name, { name, entry, toolset: set });
      else onShadowed?.(name, kept.toolset.source, set.source);
    }
  }
  const tools = Object.freeze([...byName.values()]);
  return { tools, resolve: (name) => byName.get(name) };
}

/**
 * Every toolset an agent definition carries, in precedence order: its tools/ files, then what
 * `agent()` and a host step attached (toolsets — the roster, MCP). Builtins are the runtime's
 * to append, since they resolve against host options.
 */
export function agentToolsets(def: ToolBearingDef): Toolset[] {
  return [toolset("files", def.tools), ...(def.toolsets ?? [])];
}

/** The wire declaration of one def. Optional fields appear only when declared. */
export function toolSchema(name: string, def: AnyToolDef): ToolSchema {
  const schema: ToolSchema = { type: "function", name, description: def.description, parameters: def.parameters.json };
  if (def.effect !== undefined) schema.effect = def.effect;
  if (def.messages !== undefined) schema.messages = def.messages;
  if (def.ui !== undefined) schema.ui = def.ui;
  return schema;
}

/** The advertised list in wire form, composed first-wins. */
export function agentToolsToSchemas(toolsets: readonly Toolset[]): ToolSchema[] {
  return composeToolsets(toolsets).tools.map(({ name, entry }) => toolSchema(name, entry.def));
}
