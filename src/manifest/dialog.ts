/**
 * Dialogs: a scripted part of a conversation as a statechart (docs/config.md, "Dialogs"). A
 * dialog's tools run only in the states that allow them; out of state they refuse with where the
 * dialog is and what must happen first, and every result says where it is now. The check is the
 * tool's own (its `gate`, and again in its `execute`), so it travels with the def wherever it is
 * used: a gateway session, `toAiTool` under the AI SDK, a direct call.
 *
 * The chart is interpreted with xstate v5's pure functions (`createMachine`, `transition`): no
 * actor, no timers. A position is only the state's name, so what a session record keeps is plain
 * JSON that outlives an xstate upgrade. xstate is required by the first dialog defined: an agent
 * without dialogs does not load it (about 0.6 MiB of an idle gateway's heap, issue 23).
 */
import { createRequire } from "node:module";
import type * as XState from "xstate";
import { DialogStore } from "./dialog-store.js";
import { ConfigError, IssueList, ToolDefinitionError, didYouMean, kindOf } from "./errors.js";
import { toolNameOf } from "./registry.js";
import type { ParameterSchema } from "./schema.js";
import {
  refusalText,
  resultText,
  tool,
  toToolResult,
  type AnyToolDef,
  type ArgsOf,
  type ToolContext,
  type ToolDef,
  type ToolOptions,
  type ToolRefusal,
  type ToolResult,
  type ToolReturn,
} from "./tool-def.js";
import { spread } from "../spread.js";

const DIALOG = Symbol.for("switchboard.dialog");

/**
 * Dialog ids, state names and event names: letters, digits and `_`, starting with a letter. No
 * `.` or `#` (xstate's state-path and id syntax) and no `*` (its wildcard event).
 */
const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** One state of a dialog, as authored. */
export interface DialogStateOptions<Name extends string = string> {
  /** What the model must do while the dialog is here; it reads it in every result and refusal of the dialog's tools. */
  readonly instruction: string;
  /** The events this state handles: event name → the state it moves to. */
  readonly on?: Readonly<Record<string, Name>>;
  /** `"final"`: the dialog is done here; a final state handles no events. */
  readonly type?: "final";
}

/** What `dialog()` takes. State names are inferred from `states`; `initial` and every target must be one of them. */
export interface DialogOptions<Name extends string> {
  /** Names the dialog in refusals, results, the session record and `syncState`; an agent registers it under this key. */
  readonly id: string;
  readonly initial: NoInfer<Name>;
  readonly states: { readonly [K in Name]: DialogStateOptions<NoInfer<Name>> };
}

/** Where a dialog is: its state, whether that state is final, and the state's instruction. */
export interface DialogPosition<Name extends string = string> {
  readonly state: Name;
  readonly done: boolean;
  readonly instruction: string;
}

/**
 * A dialog tool's details: the body's details with the position added (`{...details, dialog}`), or
 * under `details` when they are not an object (`{details, dialog}`), as `toAiTool` places `text`.
 */
export type DialogDetails<Details, Name extends string = string> = (Details extends readonly unknown[]
  ? { readonly details: Details }
  : Details extends object
    ? Details
    : { readonly details?: Details }) & { readonly dialog: DialogPosition<Name> };

/** What `<dialog>.tool()` takes: a `tool()`'s options, plus where it may run and what it moves. */
export interface DialogToolOptions<P extends ParameterSchema | undefined, Details, Session, Name extends string>
  extends ToolOptions<P, Details, Session> {
  /** The states this tool runs in; anywhere else it refuses without running `execute`. */
  readonly allowedIn: readonly Name[];
  /**
   * The event a call sends the dialog once `execute` returned: a name (sent unless the result is
   * an error), or a function of the normalized result and the arguments (`undefined`: no event).
   * An event the dialog's current state does not handle leaves it where it is.
   */
  readonly sends?: string | ((result: ToolResult<Details>, args: ArgsOf<P>) => string | undefined);
}

/** A dialog made by `dialog()`. */
export interface Dialog<Name extends string = string> {
  readonly [DIALOG]: true;
  readonly id: string;
  readonly initial: Name;
  readonly states: Readonly<Record<Name, DialogStateOptions<Name>>>;
  /** Where this dialog is in the conversation `store` keeps. */
  position(store: DialogStore): DialogPosition<Name>;
  /** A tool of this dialog: an ordinary tool def that runs only in `allowedIn` and reports the position. */
  tool<P extends ParameterSchema | undefined = undefined, Details = unknown, Session = unknown>(
    options: DialogToolOptions<P, Details, Session, Name>,
  ): ToolDef<ArgsOf<P>, DialogDetails<Details, Name>, Session>;
}

/** A dialog of any states, as collections hold them. */
export type AnyDialog = Dialog<string>;

/** What a dialog tool is: its dialog and the states it runs in (for `check` and the agent's registration). */
export interface DialogToolInfo {
  readonly dialog: AnyDialog;
  readonly allowedIn: readonly string[];
}

/**
 * Where a dialog tool's def carries its `DialogToolInfo`: a registered symbol, like the tool brand,
 * so a second copy of this module (an agent that imports the package's source while the CLI runs
 * its build) still recognizes the def.
 */
const DIALOG_TOOL = Symbol.for("switchboard.dialogTool");

/** The dialog a tool def belongs to, if it was made by `<dialog>.tool()`. */
export function dialogToolOf(def: AnyToolDef): DialogToolInfo | undefined {
  return (def as unknown as Record<PropertyKey, DialogToolInfo | undefined>)[DIALOG_TOOL];
}

/** Whether a value is a dialog made by `dialog()`. */
export function isDialog(value: unknown): value is AnyDialog {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[DIALOG] === true;
}

/** Stores kept by session object, for hosts that give no `ctx.dialogs` (the AI SDK, a direct call). */
const sessionStores = new WeakMap<object, DialogStore>();

/** The conversation's store: the host's `ctx.dialogs`, else one kept for the `ctx.session` object (one conversation = one session object). */
function findStore(ctx: ToolContext<unknown>): DialogStore | undefined {
  if (ctx.dialogs !== undefined) return ctx.dialogs;
  const session = ctx.session;
  if ((typeof session !== "object" || session === null) && typeof session !== "function") return undefined;
  let store = sessionStores.get(session);
  if (store === undefined) {
    store = new DialogStore();
    sessionStores.set(session, store);
  }
  return store;
}

/**
 * `findStore`, for a call that is about to run. With neither a store nor a session object there is
 * nowhere to keep a position, and a fresh dialog per call would let a tool skip ahead, so the call
 * fails with what to give it.
 */
function storeFor(ctx: ToolContext<unknown>, id: string): DialogStore {
  const store = findStore(ctx);
  if (store !== undefined) return store;
  throw new ToolDefinitionError(
    `dialog ${id}: nowhere to keep this conversation's position: ctx.dialogs is not set and ctx.session is ${kindOf(ctx.session)}. Give the tools one object per conversation as their session (AI SDK: the same context object to each of the dialog's tools), or a DialogStore as ctx.dialogs.`,
  );
}

/** The line a dialog tool's result ends with: a model instruction, not words to say (`[guidance]`, as a system-role tool message). */
function positionLine(id: string, position: DialogPosition): string {
  const where = position.done ? `is done (at ${position.state})` : `is now at ${position.state}`;
  return `[guidance] Dialog ${id} ${where}. Next: ${position.instruction}`;
}

function checkName(issues: IssueList, path: string, value: unknown, what: string): value is string {
  if (typeof value === "string" && NAME.test(value)) return true;
  issues.add(path, `${what} must be a name of letters, digits and _ starting with a letter (got ${JSON.stringify(value) ?? kindOf(value)}).`);
  return false;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const DIALOG_FIELDS = ["id", "initial", "states"];
const STATE_FIELDS = ["instruction", "on", "type"];

/** Every problem of a dialog definition, by path; the states, trimmed, when there are none. */
function checkDefinition(options: unknown): Record<string, DialogStateOptions> {
  const issues = new IssueList();
  if (!isPlainObject(options)) {
    throw new ConfigError("Invalid dialog", [{ path: "dialog", message: `pass an object such as { id, initial, states } (got ${kindOf(options)}).` }]);
  }
  const subject = typeof options.id === "string" ? `Invalid dialog "${options.id}"` : "Invalid dialog";
  for (const key of Object.keys(options)) {
    if (!DIALOG_FIELDS.includes(key)) issues.add(key, `\`${key}\` is not a field of a dialog.${didYouMean(key, DIALOG_FIELDS)}`);
  }
  checkName(issues, "id", options.id, "the id");
  const states = options.states;
  if (!isPlainObject(states) || Object.keys(states).length === 0) {
    issues.add("states", `must be an object of states by name, such as { ask: { instruction, on: { GOT: "done" } }, done: { instruction, type: "final" } } (got ${kindOf(states)}).`);
    issues.throwIfAny(subject);
    return {};
  }
  const names = Object.keys(states);
  const out: Record<string, DialogStateOptions> = {};
  for (const [name, raw] of Object.entries(states)) {
    const path = `states.${name}`;
    checkName(issues, path, name, "a state name");
    if (!isPlainObject(raw)) {
      issues.add(path, `must be { instruction, on?, type? } (got ${kindOf(raw)}).`);
      continue;
    }
    for (const key of Object.keys(raw)) {
      if (!STATE_FIELDS.includes(key)) issues.add(`${path}.${key}`, `\`${key}\` is not a field of a dialog state.${didYouMean(key, STATE_FIELDS)}`);
    }
    const instruction = typeof raw.instruction === "string" ? raw.instruction.trim() : "";
    if (instruction === "") issues.add(`${path}.instruction`, "must be a non-empty string: what the model must do while the dialog is here.");
    if (raw.type !== undefined && raw.type !== "final") issues.add(`${path}.type`, `must be "final" or left out (got ${JSON.stringify(raw.type) ?? kindOf(raw.type)}).`);
    const final = raw.type === "final";
    const on = raw.on ?? {};
    if (!isPlainObject(on)) {
      issues.add(`${path}.on`, `must be an object of events, such as { CONFIRMED: "${names[0] ?? "next"}" } (got ${kindOf(on)}).`);
      continue;
    }
    const events = Object.entries(on);
    if (final && events.length > 0) issues.add(`${path}.on`, 'a final state handles no events: remove `on`, or drop type: "final".');
    if (!final && events.length === 0) issues.add(path, 'has no way out: add on: { EVENT: "<state>" }, or mark it type: "final".');
    const transitions: Record<string, string> = {};
    for (const [event, target] of events) {
      checkName(issues, `${path}.on.${event}`, event, "an event name");
      if (typeof target !== "string" || !names.includes(target)) {
        issues.add(`${path}.on.${event}`, `unknown target state ${JSON.stringify(target) ?? kindOf(target)}.${typeof target === "string" ? didYouMean(target, names) : ""} States: ${names.join(", ")}.`);
      } else {
        transitions[event] = target;
      }
    }
    out[name] = { instruction, ...(final ? { type: "final" as const } : { on: transitions }) };
  }
  if (typeof options.initial !== "string" || !names.includes(options.initial)) {
    const hint = typeof options.initial === "string" ? didYouMean(options.initial, names) : "";
    issues.add("initial", `must name one of the states (got ${JSON.stringify(options.initial) ?? kindOf(options.initial)}).${hint} States: ${names.join(", ")}.`);
  }
  issues.throwIfAny(subject);
  return out;
}

let xstate: typeof XState | undefined;

/** xstate's CommonJS build: the one its ES entry (`xstate.cjs.mjs`) re-exports, so an author's own `import "xstate"` shares it. */
function loadXState(): typeof XState {
  xstate ??= createRequire(import.meta.url)("xstate") as typeof XState;
  return xstate;
}

/**
 * Define a dialog: `dialog({ id, initial, states: { name: { instruction, on?: { EVENT: target },
 * type?: "final" } } })`. The definition is checked here — every problem in one `ConfigError`
 * naming its path — and its tools come from `.tool()`.
 */
export function dialog<Name extends string>(options: DialogOptions<Name>): Dialog<Name> {
  const states = checkDefinition(options) as Readonly<Record<Name, DialogStateOptions<Name>>>;
  const { createMachine, transition } = loadXState();
  const { id, initial } = options;
  const machine = createMachine({
    id,
    initial,
    states: Object.fromEntries(
      Object.entries<DialogStateOptions>(states).map(([name, state]) => [
        name,
        state.type === "final" ? { type: "final" as const } : { on: Object.fromEntries(Object.entries(state.on ?? {}).map(([event, target]) => [event, { target }])) },
      ]),
    ),
  });
  const events = new Set(Object.values<DialogStateOptions>(states).flatMap((state) => Object.keys(state.on ?? {})));

  const position = (store: DialogStore): DialogPosition<Name> => {
    const at = store.stateOf(id);
    // A stored state this definition no longer has (a record saved by an older version of the agent) reads as the start.
    const state = (at !== undefined && Object.hasOwn(states, at) ? at : initial) as Name;
    const { instruction, type } = states[state];
    return { state, done: type === "final", instruction };
  };

  const send = (store: DialogStore, event: string): void => {
    const snapshot = machine.resolveState({ value: position(store).state, context: {} });
    const [next] = transition(machine, snapshot, { type: event });
    if (typeof next.value === "string") store.moveTo(id, next.value);
  };

  const refusalAt = (store: DialogStore, allowed: ReadonlySet<string>): ToolRefusal | undefined => {
    const here = position(store);
    if (allowed.has(here.state)) return undefined;
    return { reason: `the dialog ${id} is at ${here.state}${here.done ? " (done)" : ""}`, recover: `First: ${here.instruction}` };
  };

  const withPosition = (result: ToolResult, here: DialogPosition): ToolResult => {
    const { details } = result;
    let carried: Record<string, unknown>;
    if (details === undefined) carried = { dialog: here };
    else if (isPlainObject(details)) {
      if (Object.hasOwn(details, "dialog")) {
        throw new ToolDefinitionError(`dialog ${id}: the result's details have their own \`dialog\` field, which the dialog's position would overwrite. Rename the field in details.`);
      }
      carried = spread(details, { dialog: here });
    } else carried = { details, dialog: here };
    return spread(result, { text: `${resultText(result)}\n${positionLine(id, here)}`, details: carried });
  };

  const self: Dialog<Name> = {
    [DIALOG]: true,
    id,
    initial,
    states,
    position,
    tool<P extends ParameterSchema | undefined = undefined, Details = unknown, Session = unknown>(
      toolOptions: DialogToolOptions<P, Details, Session, Name>,
    ): ToolDef<ArgsOf<P>, DialogDetails<Details, Name>, Session> {
      const where = `dialog ${id}: tool()`;
      if (!isPlainObject(toolOptions)) throw new ToolDefinitionError(`${where}: pass an object such as { description, allowedIn, execute }.`);
      const { allowedIn, sends, execute, gate, ...rest } = toolOptions;
      const names = Object.keys(states);
      // Plain JavaScript can pass anything here.
      const listed: unknown = allowedIn;
      if (!Array.isArray(listed) || listed.length === 0) {
        throw new ToolDefinitionError(`${where}: \`allowedIn\` must list the states the tool runs in (states: ${names.join(", ")}).`);
      }
      listed.forEach((state: unknown, i) => {
        if (typeof state !== "string" || !Object.hasOwn(states, state)) {
          throw new ToolDefinitionError(`${where}: allowedIn[${i}]: unknown state ${JSON.stringify(state) ?? kindOf(state)}.${typeof state === "string" ? didYouMean(state, names) : ""} States: ${names.join(", ")}.`);
        }
      });
      if (typeof execute !== "function") throw new ToolDefinitionError(`${where}: \`execute\` must be a function (args, ctx) => result.`);
      if (typeof sends === "string" && !allowedIn.some((state: Name) => Object.hasOwn(states[state].on ?? {}, sends))) {
        throw new ToolDefinitionError(
          `${where}: sends: no state the tool runs in (${allowedIn.join(", ")}) handles \`${sends}\`, so the call would never move the dialog. Add on: { ${sends}: "<state>" } to one of them, or send another event.${didYouMean(sends, [...events])}`,
        );
      }
      if (sends !== undefined && typeof sends !== "string" && typeof sends !== "function") {
        throw new ToolDefinitionError(`${where}: \`sends\` must be an event name or a function (result, args) => event | undefined.`);
      }
      const allowed = new Set<string>(allowedIn);
      const eventOf = (result: ToolResult<Details>, args: ArgsOf<P>): string | undefined => {
        if (typeof sends !== "function") return result.isError === true ? undefined : sends;
        const event = sends(result, args);
        if (event !== undefined && !events.has(event)) {
          throw new ToolDefinitionError(`${where}: sends returned ${JSON.stringify(event)}, which no state of dialog ${id} handles (events: ${[...events].join(", ")}).`);
        }
        return event;
      };
      const def: ToolDef<ArgsOf<P>, DialogDetails<Details, Name>, Session> = tool<P, DialogDetails<Details, Name>, Session>(spread(rest, {
        // The dialog decides first: "not in this state" is where the conversation is, before any rule of the tool's own.
        // A gate never throws: with no store it lets the call through to `execute`, which fails it saying why.
        gate: (ctx: ToolContext<Session>) => {
          const store = findStore(ctx);
          return (store === undefined ? undefined : refusalAt(store, allowed)) ?? gate?.(ctx);
        },
        execute: async (args: ArgsOf<P>, ctx: ToolContext<Session>) => {
          const store = storeFor(ctx, id);
          // Checked again here, so a host that calls `execute` without the gate (the AI SDK, a direct call) is refused too.
          const refusal = refusalAt(store, allowed);
          if (refusal !== undefined) return { text: refusalText(toolNameOf(def) ?? "this tool", refusal), isError: true };
          const result = toToolResult(await execute(args, ctx)) as ToolResult<Details>;
          const event = eventOf(result, args);
          // Sent to the position as it is now: a call that ran beside this one may have moved it.
          if (event !== undefined) send(store, event);
          return withPosition(result, position(store)) as ToolReturn<DialogDetails<Details, Name>>;
        },
      }));
      const info: DialogToolInfo = { dialog: self, allowedIn: [...allowedIn] };
      return Object.defineProperty(def, DIALOG_TOOL, { value: info, enumerable: false });
    },
  };
  return Object.freeze(self);
}

/** Every registered dialog's position in `store`, by id: what `syncState` receives as `dialogs`. */
export function dialogPositions(dialogs: Readonly<Record<string, AnyDialog>> | undefined, store: DialogStore): Record<string, DialogPosition> {
  return Object.fromEntries(Object.entries(dialogs ?? {}).map(([id, d]) => [id, d.position(store)]));
}
