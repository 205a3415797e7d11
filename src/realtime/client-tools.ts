/**
 * Client tools on `WS /v1/realtime` (docs/realtime.md "Client tools"): the agent's clientTools
 * (declared with `clientTool({...})`, docs/config.md §7) that a Realtime client runs. The gateway
 * composes the session's tools once and advertises them to the model unchanged; a client only
 * declares which of the agent's clientTools it runs, by listing a `function` tool of the same name
 * in `session.update` `tools`. The agent's description and parameters stand.
 *
 * This module keeps the declared names, the calls waiting for the client's `function_call_output`,
 * and the reply's story across its calls: the response ends at a call (as the API's does), the
 * agent continues by itself once answered, in a new response that answers the client's
 * `response.create`. Pure: no sockets, no timers.
 */
import type { RealtimeErrorBody } from "./client-events.js";
import * as server from "./server-events.js";
import type { FunctionCallItem, RealtimeServerEvent, RealtimeToolView } from "./server-events.js";
import { spread } from "../spread.js";

/** One of the agent's clientTools, as a client may declare it: the agent's description and JSON Schema. */
export interface ClientToolSpec {
  readonly description: string;
  readonly parameters: unknown;
}

/** What the model reads when it calls a clientTool the client did not declare (it fails at once, not after its timeout). */
export function clientToolRefusal(toolName: string): string {
  return `${toolName} runs in the client, and this client (on /v1/realtime) did not declare it in session.update tools: answer without it.`;
}

/** A refusal the binding sends as an `invalid_request_error`. */
type Problem = Pick<RealtimeErrorBody, "code" | "message" | "param">;

export class ClientTools {
  readonly #agent: ReadonlyMap<string, ClientToolSpec>;
  /** The names the client declared in its last `session.update` with `tools`. */
  #declared = new Set<string>();
  /** Calls handed to the client and not yet settled, by call id (the session's `toolCallId`). */
  readonly #waiting = new Set<string>();
  /**
   * A `function_call_output` was accepted since the last `response.create` (the next one is
   * absorbed): `continued` once a response opened after it (the continuation, which answers it).
   */
  #answered: "no" | "yes" | "continued" = "no";
  /** The session's reply runs (from its first response to its end): it continues across calls by itself. */
  #replying = false;
  /** What the reply showed in the responses that ended at its calls. */
  #shown = "";
  /** A `response.create` was absorbed and no response has opened since. */
  #owed = false;

  constructor(agent: ReadonlyMap<string, ClientToolSpec>) {
    this.#agent = agent;
  }

  /** The agent has this clientTool (declared or not). */
  isClientTool(name: string): boolean {
    return this.#agent.has(name);
  }

  /** The client declared it runs this tool. */
  declared(name: string): boolean {
    return this.#declared.has(name);
  }

  /**
   * Replace the declared set with `names` (a `session.update` with `tools`), or name the first that
   * is not one of the agent's clientTools: then nothing is applied.
   */
  declare(names: readonly string[]): Problem | undefined {
    for (const [index, name] of names.entries()) {
      if (this.#agent.has(name)) continue;
      const known = [...this.#agent.keys()].join(", ") || "none";
      return {
        code: "unsupported_value",
        param: `session.tools.${index}.name`,
        message: `session.update: tool ${JSON.stringify(name)} is not one of the agent's client tools (${known}): declare it in the agent with clientTool({...}); the agent's other tools run in the gateway`,
      };
    }
    this.#declared = new Set(names);
    return undefined;
  }

  /** The declared tools as `session.updated` shows them: the agent's declarations. */
  views(): RealtimeToolView[] {
    return [...this.#declared].flatMap((name) => {
      const spec = this.#agent.get(name);
      return spec === undefined ? [] : [{ name, description: spec.description, parameters: spec.parameters }];
    });
  }

  /**
   * A declared tool's call, handed to the client as the last output of the open response (which
   * showed `shown`), in the Realtime API's order: the item added (in progress), its arguments
   * (whole, as one delta: the session hands the call over complete), the item done (completed).
   * It waits for its `function_call_output`. Returns the completed item.
   */
  call(
    send: (event: RealtimeServerEvent) => void,
    eventId: () => string,
    at: { readonly responseId: string; readonly outputIndex: number; readonly previous: string | null; readonly shown: string },
    call: { readonly id: string; readonly callId: string; readonly name: string; readonly args: unknown },
  ): FunctionCallItem {
    this.#waiting.add(call.callId);
    this.#shown = [this.#shown, at.shown].filter((part) => part !== "").join(" ");
    const started: FunctionCallItem = { type: "function_call", id: call.id, callId: call.callId, name: call.name, arguments: "", status: "in_progress" };
    const done: FunctionCallItem = spread(started, { arguments: JSON.stringify(call.args ?? {}), status: "completed" });
    send(server.outputItemAdded(eventId(), at.responseId, started, at.outputIndex));
    send(server.itemAdded(eventId(), started, at.previous));
    send(server.argumentsDelta(eventId(), at.responseId, done, at.outputIndex));
    send(server.argumentsDone(eventId(), at.responseId, done, at.outputIndex));
    send(server.outputItemDone(eventId(), at.responseId, done, at.outputIndex));
    return done;
  }

  /** The session settled a call (`tool.completed`: answered, timed out, cancelled): the client's output is no longer taken. */
  settled(callId: string): void {
    this.#waiting.delete(callId);
  }

  /** The client's answer to `callId`: accepted once, while the call waits; the problem otherwise. */
  answer(callId: string): Problem | undefined {
    if (!this.#waiting.delete(callId)) {
      return {
        code: "invalid_value",
        param: "item.call_id",
        message: `conversation.item.create: no function call ${JSON.stringify(callId)} is waiting for an output (unknown, already answered, timed out or cancelled)`,
      };
    }
    this.#answered = "yes";
    return undefined;
  }

  // ── the reply across its calls: the session continues by itself after an output ──────────────

  /** A response opened: the reply runs (unless it is an owed empty one), and it answers an absorbed `response.create`. */
  responseBegan(replying: boolean): void {
    this.#replying = replying;
    this.#owed = false;
    if (replying && this.#answered === "yes") this.#answered = "continued";
  }

  /** The part of the session's text of the reply (its snapshots cover the whole reply) not shown before the reply's last call. */
  unshown(text: string): string {
    return this.#shown !== "" && text.startsWith(this.#shown) ? text.slice(this.#shown.length).trimStart() : text;
  }

  /**
   * A `response.create` with nothing typed to answer. After an accepted output it is absorbed: the
   * agent continues by itself, and its continuation is the response asked for (`absorbed`); when
   * the reply already ended with no response since, an empty response answers it now (`pay`).
   * Otherwise `none`: there is nothing to answer.
   */
  absorb(responseOpen: boolean): "none" | "absorbed" | "pay" {
    if (this.#answered === "no") return "none";
    this.#owed = !responseOpen && this.#answered === "yes";
    this.#answered = "no";
    if (!this.#owed || this.#replying) return "absorbed";
    this.#owed = false;
    return "pay";
  }

  /** A `response.create` with typed messages: the outputs before it are covered. */
  created(): void {
    this.#answered = "no";
  }

  /** The session's reply ended (`reply.completed`, `reply.cancelled`, a fatal error): true when an absorbed `response.create` is still owed a response (an empty one). */
  replyEnded(): boolean {
    const owed = this.#owed;
    this.#replying = false;
    this.#shown = "";
    this.#owed = false;
    return owed;
  }
}
