import type { AgentConfigSource, HostOnlyAgentField } from "./agent-config.js";
import type { AgentRoute } from "./agent-routes.js";
import type { AgentEvents } from "./agent-events.js";
import type { AnyDialog, DialogPosition } from "./dialog.js";
import { ConfigError } from "./errors.js";
import type { SessionMode } from "./mode.js";
import type { RecordOutcome } from "./recording.js";
import type { SubagentDef } from "./subagent.js";
import type { JsonValue, ToolMap } from "./tool-def.js";
import type { Toolset } from "./toolset.js";
import type { AnyWorkflowDef } from "./workflow.js";
import type { OutboundCall } from "./workflow-calls.js";
import type { Carrier } from "./providers.js";
import { spread } from "../spread.js";

/**
 * A phone session's line, as the carrier's signed voice webhook named it (docs/telephony.md "The
 * caller's number"); never from the media stream or a client. `from`/`to`: E.164 (`+` and digits),
 * a SIP URI (`sip:…`), or a Twilio client id (`client:…`); each absent when the webhook named none
 * or one that is none of these. On a call the gateway placed they are the placement's own.
 */
export interface PhoneLine {
  readonly carrier: Carrier;
  /** Who called: the caller on an inbound call, the gateway's number on one it placed. */
  readonly from?: string;
  /** Who was called: the agent's number on an inbound call, the callee on one it placed. */
  readonly to?: string;
  /** `inbound`: the carrier brought the call to the gateway; `outbound`: the gateway placed it (`POST /v1/calls`, `ctx.calls.place`). */
  readonly direction: "inbound" | "outbound";
  /** The carrier's id of the call (Twilio/Telnyx `CallSid`, Plivo `CallUUID`, Vonage `uuid`), when the webhook named one. */
  readonly callId?: string;
}

/** What the host knows about a session when it asks the agent for something. */
export interface SessionInfo {
  readonly sessionId: string;
  readonly mode: SessionMode;
  /** A call a workflow placed (`ctx.calls.place`): the run, to whom and why. Absent on every other session. */
  readonly outbound?: OutboundCall;
  /** A phone call whose carrier's webhook was signed and verified: its numbers. Absent on browser and text sessions, and on calls of an open (unsigned) carrier or Exotel. */
  readonly phone?: PhoneLine;
}

/** A guardrail's verdict: `undefined` lets the text through. */
export interface GuardrailVerdict {
  /** What is said instead (output) or answered (input). */
  readonly replacement: string;
  readonly reason?: string;
}

/** Checks user input or agent output; runs per turn. */
export type Guardrail<Session = unknown> = (
  text: string,
  ctx: { readonly sessionId: string; readonly session: Session },
) => GuardrailVerdict | undefined | Promise<GuardrailVerdict | undefined>;


/** What `syncState` reads besides the session value. */
export interface SyncStateContext {
  /** Each registered dialog's position in this conversation, by id. */
  readonly dialogs: Readonly<Record<string, DialogPosition>>;
}

/** The host-only half of an agent definition: code, not configuration. */
export interface AgentHostFields<Session = unknown> {
  /** Its tools, keyed by the name the model calls — from tools/<name>.ts files via `withTools`. */
  readonly tools: ToolMap;
  /** State projected to the client as `state.updated`, from the session context and the dialogs' positions. */
  readonly syncState?: ((session: Session, ctx: SyncStateContext) => JsonValue) | undefined;
  readonly workflows?: Readonly<Record<string, AnyWorkflowDef>> | undefined;
  /**
   * Agents this one may hand the session to, keyed by the name the model gives
   * (docs/config.md "Roster and hand-off"). A function returning the def names one declared
   * later in the module (a hand-back). Members share the session, hence the shared `Session` type.
   */
  readonly roster?: Readonly<Record<string, TeamMemberDef<Session> | (() => TeamMemberDef<Session>)>> | undefined;
  /**
   * Tools that run another agent on a sub-task and answer with its reply, keyed by the name the
   * model calls: `subagent(def, { description })` (docs/config.md "Sub-agents"). The sub-agent's
   * tools see this session's `ctx.session`, hence the shared `Session` type.
   */
  readonly subagents?: Readonly<Record<string, SubagentDef<Session>>> | undefined;
  /** Scripted sub-conversations (`dialog({...})`), each under its own id. */
  readonly dialogs?: Readonly<Record<string, AnyDialog>> | undefined;
  /** Server-side observers of the session's client-protocol events, keyed by event type or `"*"`; never awaited by the session. */
  readonly events?: AgentEvents | undefined;
  readonly inputGuardrails?: readonly Guardrail<Session>[] | undefined;
  readonly outputGuardrails?: readonly Guardrail<Session>[] | undefined;
  /** Makes the per-session value tools and gates receive as `ctx.session`. */
  readonly sessionContext?: ((info: SessionInfo) => Session) | undefined;
  /**
   * Once the session has ended. `record`: where the call record went, or why it was not written
   * (docs/config.md "Recording"); absent when the agent sets no `recording`.
   */
  readonly onSessionEnd?: ((info: SessionInfo & { readonly session: Session; readonly record?: RecordOutcome }) => void | Promise<void>) | undefined;
  /**
   * HTTP routes the gateway mounts for this agent, keyed `"<METHOD> <path>"` (docs/config.md
   * §5): a handler `(Request) => Response` behind the gateway's auth, or
   * `{ handler, auth: "none" }` for a route anyone may call.
   */
  readonly routes?: Readonly<Record<string, AgentRoute>> | undefined;
}

/** An agent definition as an author writes it (through `agent()`). */
export type AgentDef<Session = unknown> = Omit<AgentConfigSource, HostOnlyAgentField> & AgentHostFields<Session>;

/**
 * An agent as another one holds it (a roster member, a sub-agent): its tools and hooks take the
 * session's value, `Session` (an agent whose take a wider type fits, `agent({...})` included).
 * Its own `sessionContext` is typed loosely: only the served agent's makes the value, and a
 * member's or sub-agent's own is refused when the agent loads (docs/config.md §11, §12).
 */
export type TeamMemberDef<Session = unknown> = Omit<AgentDef<Session>, "sessionContext"> & {
  readonly sessionContext?: ((info: SessionInfo) => unknown) | undefined;
};

/** An AgentDef as the RUNTIME holds it: plus every toolset beyond the tools/ files, resolved. */
export type ResolvedAgentDef<Session = unknown> = AgentDef<Session> & { readonly toolsets?: readonly Toolset[] };

/** What `agent()` takes: the definition without `tools`, which come from files. */
export type AgentOptions<Session = unknown> = Omit<AgentDef<Session>, "tools" | "toolsets">;

/**
 * Define an agent. Its tools are files (`tools/<name>.ts`, attached by the loader through
 * `withTools`), so `agent()` returns an empty tool table and refuses a `tools` argument: a
 * second place to declare tools is a second place for them to disagree.
 */
export function agent<Session = unknown>(options: AgentOptions<Session>): AgentDef<Session> {
  const raw = options as Record<string, unknown>;
  if (raw.tools !== undefined || raw.toolsets !== undefined) {
    const field = raw.tools !== undefined ? "tools" : "toolsets";
    throw new ConfigError("Invalid agent", [
      {
        path: field,
        message: `agent() takes no \`${field}\`: put each tool in tools/<name>.ts (default-export tool({...})), or attach a registry with withTools(agent({...}), { name: tool({...}) }).`,
      },
    ]);
  }
  return Object.freeze(spread(options, { tools: Object.freeze({}) }));
}
