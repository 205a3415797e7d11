/**
 * Out-of-band responses on `/v1/realtime` (docs/realtime.md "Out-of-band responses"): a
 * `response.create` with `conversation: "none"` — a classification, a summary — that the session
 * answers with the agent's model and no tools (session/out-of-band.ts), touching neither the
 * conversation nor the binding's state machine. Its events are a response's, in text, with
 * `conversation_id` null and the client's `metadata` echoed; its item joins no conversation (no
 * `conversation.item.*`). At most one at a time.
 */
import type { LinkCommand } from "../transport/protocol.js";
import type { OutOfBandRequest } from "./out-of-band-request.js";
import * as server from "./server-events.js";
import type { MessageItem, RealtimeServerEvent, ResponseStatus, StatusDetails } from "./server-events.js";

interface Active {
  readonly id: string;
  readonly itemId: string;
  readonly controller: AbortController;
  readonly metadata: Readonly<Record<string, string>> | null;
  text: string;
}

export interface OutOfBandOptions {
  readonly send: (event: RealtimeServerEvent) => void;
  /** A fresh id with the given prefix (`event`, `item`, `resp`). */
  readonly id: (prefix: string) => string;
  /** The gateway calls the agent's model (text, pipeline); false for s2s, whose service holds the conversation. */
  readonly served: boolean;
}

/** A refusal of `response.create`, in the API's terms. */
export interface OutOfBandRefusal {
  readonly code: string;
  readonly message: string;
  readonly param?: string;
}

/** Why an s2s agent refuses out-of-band responses. */
const S2S_REFUSAL =
  'response.create: out-of-band responses (conversation: "none") are served for agents whose model the gateway calls (text, pipeline); this agent\'s speech-to-speech service holds its conversation';

export class OutOfBandResponses {
  readonly #options: OutOfBandOptions;
  #active: Active | undefined;

  constructor(options: OutOfBandOptions) {
    this.#options = options;
  }

  /** Start one: `response.created` and its item and part, and the session's command; a refusal while one runs. */
  start(request: OutOfBandRequest): { readonly command: LinkCommand } | { readonly refusal: OutOfBandRefusal } {
    if (!this.#options.served) return { refusal: { code: "unsupported_value", message: S2S_REFUSAL, param: "response.conversation" } };
    if (this.#active !== undefined) {
      const message = `response.create: an out-of-band response (${this.#active.id}) is in progress: wait for its response.done, or cancel it`;
      return { refusal: { code: "conversation_already_has_active_response", message } };
    }
    const active: Active = { id: this.#options.id("resp"), itemId: this.#options.id("item"), controller: new AbortController(), metadata: request.metadata ?? null, text: "" };
    this.#active = active;
    const item = this.#item(active, "in_progress");
    this.#send(server.responseCreated(this.#eventId(), this.#view(active, "in_progress", [])));
    this.#send(server.outputItemAdded(this.#eventId(), active.id, item));
    this.#send(server.contentPartAdded(this.#eventId(), this.#at(active), "text"));
    const ask = {
      signal: active.controller.signal,
      ...(request.instructions === undefined ? {} : { instructions: request.instructions }),
      ...(request.input === undefined ? {} : { input: request.input }),
      ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
    };
    const sink = {
      delta: (text: string) => {
        if (this.#active !== active || text === "") return;
        active.text += text;
        this.#send(server.textDelta(this.#eventId(), this.#at(active), text));
      },
      done: (outcome: { readonly status: "completed" | "cancelled" | "failed"; readonly text: string; readonly error?: string }) => {
        if (this.#active !== active) return;
        if (outcome.status === "completed") this.#finish(active, "completed");
        else if (outcome.status === "cancelled") this.#finish(active, "cancelled", { type: "cancelled", reason: "client_cancelled" });
        else {
          this.#send(server.errorEvent(this.#eventId(), { type: "server_error", code: "llm", message: outcome.error ?? "the out-of-band response failed" }));
          this.#finish(active, "failed", { type: "failed", error: { type: "server_error", code: "llm" } });
        }
      },
    };
    return { command: { type: "respond_out_of_band", ask, sink } };
  }

  /** `response.cancel` naming the out-of-band response in flight: true when it was that one. */
  cancel(responseId: string): boolean {
    if (this.#active?.id !== responseId) return false;
    this.#active.controller.abort(new Error("cancelled"));
    return true;
  }

  /** The socket or session ended: the model call is aborted, nothing more is sent. */
  close(): void {
    this.#active?.controller.abort(new Error("closed"));
    this.#active = undefined;
  }

  #finish(active: Active, status: Exclude<ResponseStatus, "in_progress">, details?: StatusDetails): void {
    this.#active = undefined;
    const at = this.#at(active);
    this.#send(server.textDone(this.#eventId(), at, active.text));
    this.#send(server.contentPartDone(this.#eventId(), at, "text", active.text));
    const item = this.#item(active, status === "completed" ? "completed" : "incomplete");
    this.#send(server.outputItemDone(this.#eventId(), active.id, item));
    this.#send(server.responseDone(this.#eventId(), this.#view(active, status, [item], details)));
  }

  #view(active: Active, status: ResponseStatus, output: readonly MessageItem[], details?: StatusDetails): server.ResponseView {
    return { id: active.id, status, modality: "text", output, outOfBand: { metadata: active.metadata }, ...(details === undefined ? {} : { statusDetails: details }) };
  }

  #item(active: Active, status: MessageItem["status"]): MessageItem {
    return { id: active.itemId, role: "assistant", status, content: status === "in_progress" ? [] : [{ type: "output_text", text: active.text }] };
  }

  #at(active: Active): { responseId: string; itemId: string } {
    return { responseId: active.id, itemId: active.itemId };
  }

  #eventId(): string {
    return this.#options.id("event");
  }

  #send(event: RealtimeServerEvent): void {
    this.#options.send(event);
  }
}
