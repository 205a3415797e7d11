/**
 * OpenAI Realtime: one in-band response at a time, by state, never by the wording of an error.
 *
 * "Only one Response can write to the default Conversation at a time" (the `openai` SDK's
 * `ResponseCreateEvent`), and a `response.create` meanwhile is refused, so the default
 * conversation's response on the current socket is a slot:
 * - idle: none runs and none of ours is on its way: the next held request may go out;
 * - requested: our `response.create` (`eventId`) is on its way; no in-band `response.created` yet;
 * - running: an in-band response runs — ours, or one the service started on its own (server VAD) —
 *   from its `response.created` until its `response.done`.
 * Requests wait in `#held` while the slot is not idle or no socket is ready.
 */
import type { ProviderLog } from "../../../providers/provider-log.js";
import { recordAt, stringAt } from "../../../providers/ws-frames.js";
import { VENDOR } from "./config.js";
import { spread } from "../../../spread.js";

/**
 * Our in-band `response.create`s carry `metadata: {switchboard_request: <its event_id>}`; the service
 * echoes a response's `metadata` in `response.created` (`RealtimeResponse.metadata`, the `openai` SDK
 * 7.59.0 `src/resources/realtime/realtime.ts`; "The `metadata` field is a good way to disambiguate
 * multiple simultaneous Responses"), so a response that does not carry it was not started by that
 * request. Keys up to 64 characters, values up to 512.
 */
const REQUEST_METADATA_KEY = "switchboard_request";
/**
 * The `event_id`s we give our `response.create` / `response.cancel` ("Optional client-generated ID
 * used to identify this event"); an `error` names the client event that caused it in
 * `error.event_id` ("if applicable"), so these prefixes say which request of ours it answers.
 */
const CREATE_EVENT_PREFIX = "sb_create_";
const CANCEL_EVENT_PREFIX = "sb_cancel_";

/** An in-band response asked for: its `response` parameters (e.g. `instructions`), none for a plain one. */
export interface InBandRequest {
  readonly response: Readonly<Record<string, unknown>> | undefined;
}

type InBandSlot =
  | { readonly state: "idle" }
  | { readonly state: "requested"; readonly request: InBandRequest; readonly eventId: string }
  | { readonly state: "running"; readonly responseId: string };

const IDLE: InBandSlot = { state: "idle" };

/** Where requests go: `send` is called only while `ready()`. */
export interface InBandOutlet {
  ready(): boolean;
  send(message: object): void;
}

export class InBandResponses {
  #slot: InBandSlot = IDLE;
  #held: InBandRequest[] = [];
  /** Our `response.create`s (event ids) that crossed a response the service started: their refusal is due. */
  #refusalsDue: string[] = [];
  /** Numbers the `event_id`s we mint. */
  #eventSeq = 0;

  constructor(
    private readonly outlet: InBandOutlet,
    private readonly log: ProviderLog,
  ) {}

  /** An in-band response runs on this socket. */
  get running(): boolean {
    return this.#slot.state === "running";
  }

  /** The `event_id` of a `response.cancel`. */
  cancelEventId(): string {
    return `${CANCEL_EVENT_PREFIX}${++this.#eventSeq}`;
  }

  /** An in-band response is wanted: it waits behind those held before it, then for the slot. */
  ask(request: InBandRequest): void {
    this.hold(request, "last");
    this.next();
  }

  /** Hold a request. A plain one next to a plain one adds nothing: one response answers the conversation as it stands. */
  hold(request: InBandRequest, where: "first" | "last"): void {
    const neighbour = where === "first" ? this.#held[0] : this.#held.at(-1);
    if (request.response === undefined && neighbour !== undefined && neighbour.response === undefined) return;
    if (where === "first") this.#held.unshift(request);
    else this.#held.push(request);
  }

  /** idle → requested: the oldest held request goes out, tagged so its `response.created` and any refusal name it. */
  next(): void {
    if (!this.outlet.ready() || this.#slot.state !== "idle") return;
    const request = this.#held.shift();
    if (request === undefined) return;
    const eventId = `${CREATE_EVENT_PREFIX}${++this.#eventSeq}`;
    this.#slot = { state: "requested", request, eventId };
    this.outlet.send({ type: "response.create", event_id: eventId, response: spread(request.response, { metadata: { [REQUEST_METADATA_KEY]: eventId } }) });
  }

  /** An in-band `response.created`: the slot runs it. */
  started(responseId: string, response: Record<string, unknown> | undefined): void {
    const slot = this.#slot;
    if (slot.state === "requested" && stringAt(recordAt(response, "metadata"), REQUEST_METADATA_KEY) !== slot.eventId) {
      // The service started a response of its own (its VAD) before our request reached it: ours is
      // refused, in whatever words. It goes out again, first in line, after this one's response.done.
      this.log.debug({ responseId, eventId: slot.eventId }, `${VENDOR}: a response started before ours; asking again after it`);
      this.#refusalsDue.push(slot.eventId);
      this.hold(slot.request, "first");
    }
    this.#slot = { state: "running", responseId };
  }

  /** An in-band `response.done`: running → idle, and the next held request goes out. */
  done(responseId: string): void {
    if (this.#slot.state !== "running" || this.#slot.responseId !== responseId) return;
    this.#slot = IDLE;
    // A refusal is sent when the request arrives, while this response ran: one not seen by now is not coming.
    this.#refusalsDue = [];
    this.next();
  }

  /** The socket is gone: a response asked for and not started is asked for again on the next socket, first in line. */
  lost(): void {
    if (this.#slot.state === "requested") this.hold(this.#slot.request, "first");
    this.#slot = IDLE;
    this.#refusalsDue = [];
  }

  /**
   * An `error` the adapter expects, whatever its code and message; true when it is one (not reported).
   * `cause` is the `error.event_id` (the client event it answers), when the service names one.
   */
  expectedError(cause: string | undefined): boolean {
    if (cause?.startsWith(CANCEL_EVENT_PREFIX) === true) {
      // Sent while the response ran, by our count; its response.done crossed it. "It's safe to call
      // `response.cancel` even if no response is in progress" (the SDK's `ResponseCancelEvent`).
      this.log.debug({ cause }, `${VENDOR}: a cancel crossed the end of its response`);
      return true;
    }
    // A refusal of a request that crossed a response the service started (already held again). One
    // that names no event is taken as the oldest due: a refusal arrives before that response's done.
    const due = cause === undefined ? (this.#refusalsDue.length > 0 ? 0 : -1) : this.#refusalsDue.indexOf(cause);
    if (due >= 0) {
      this.#refusalsDue.splice(due, 1);
      this.log.debug({ cause }, `${VENDOR}: our response.create was refused while another response ran; asked again after it`);
      return true;
    }
    const slot = this.#slot;
    if (slot.state === "requested" && cause === slot.eventId) {
      // Refused while no response runs: a retry would be refused the same way. Reported (by the
      // caller); the slot is free for the next request.
      this.#slot = IDLE;
      this.next();
    }
    return false;
  }
}
