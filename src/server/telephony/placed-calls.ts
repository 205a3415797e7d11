/**
 * The calls this gateway placed (`POST /v1/calls`), and nobody else's. Before the carrier is asked,
 * the gateway keeps an unguessable placement ticket and puts it in the URLs the carrier calls back:
 * the voice webhook (`/telephony/<carrier>/voice?placed=<ticket>`) and the answering-machine
 * callback (`/telephony/<carrier>/amd/<ticket>`). The signed voice webhook redeems the placement
 * once and binds it to the call id it names; the signed AMD callback is then taken once, only for
 * that call (and a machine's greeting end once more after a machine verdict). Kept by the coordinator, so every process of the deployment agrees (coordination.ts).
 */
import { randomBytes } from "node:crypto";
import { E164, type OutboundCall } from "../../manifest/index.js";
import type { CarrierName } from "../../transport/carriers/index.js";
import type { Coordinator } from "../coordination.js";
import { outboundOf, TICKET } from "./answered-calls.js";

/** A placed call is answered (its voice webhook comes) within this (ms): carriers ring for at most a few minutes. */
export const PLACEMENT_TTL_MS = 10 * 60_000;

/** What a placement says about its call. */
export interface Placement {
  readonly carrier: CarrierName;
  /** The carrier's answering-machine detection was asked for: its verdict will come to the AMD callback. */
  readonly carrierDetection: boolean;
  /** A workflow placed it: its session sees this. */
  readonly outbound?: OutboundCall | undefined;
  /** The numbers the call was placed from and to (E.164): its session's `phone`. */
  readonly from?: string | undefined;
  readonly to?: string | undefined;
}

export class PlacedCalls {
  readonly #coordinator: Coordinator;

  constructor(coordinator: Coordinator) {
    this.#coordinator = coordinator;
  }

  /** A ticket for a call about to be placed; undefined when the coordinator could not keep it. */
  async open(placement: Placement): Promise<string | undefined> {
    const ticket = randomBytes(18).toString("base64url");
    return (await this.#coordinator.hold(`placed:${ticket}`, JSON.stringify(placement), PLACEMENT_TTL_MS)) ? ticket : undefined;
  }

  /** The carrier refused the call: its placement is dropped. */
  async cancel(ticket: string): Promise<void> {
    await this.#coordinator.take(`placed:${ticket}`);
  }

  /**
   * The call's signed voice webhook came, naming `callId`: the placement, once (undefined for an
   * unknown, expired or used ticket, or another carrier's). With the carrier's detection on, its
   * AMD callback is bound to `callId` for `callTtlMs`.
   */
  async answered(ticket: string, carrier: CarrierName, callId: string | undefined, callTtlMs: number): Promise<Placement | undefined> {
    if (!TICKET.test(ticket)) return undefined;
    const held = await this.#coordinator.take(`placed:${ticket}`);
    if (held === undefined) return undefined;
    let placement: Partial<Placement>;
    try {
      placement = JSON.parse(held) as Partial<Placement>;
    } catch {
      return undefined;
    }
    if (placement.carrier !== carrier) return undefined;
    const carrierDetection = placement.carrierDetection === true && callId !== undefined;
    if (carrierDetection && !(await this.#coordinator.hold(`amd-call:${ticket}`, callId, callTtlMs))) return undefined;
    const outbound = outboundOf(placement.outbound);
    const number = (value: unknown): string | undefined => (typeof value === "string" && E164.test(value) ? value : undefined);
    const [from, to] = [number(placement.from), number(placement.to)];
    return { carrier, carrierDetection, ...(outbound === undefined ? {} : { outbound }), ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
  }

  /**
   * An AMD callback for `ticket` names `callId`: "ok", once, when its placement was bound to that
   * call. A callback naming another call leaves the binding for the right one. `greetingEnd`: the
   * callback reports the end of a machine's greeting (a beep), which may follow the machine verdict
   * (`expectGreetingEnd`) — or come as the first verdict.
   */
  async amdFor(ticket: string, callId: string | undefined, callTtlMs: number, greetingEnd = false): Promise<"ok" | "unknown" | "another call"> {
    if (!TICKET.test(ticket)) return "unknown";
    const afterVerdict = greetingEnd ? await this.#bound(`amd-end:${ticket}`, callId, callTtlMs) : "unknown";
    return afterVerdict === "unknown" ? this.#bound(`amd-call:${ticket}`, callId, callTtlMs) : afterVerdict;
  }

  /**
   * A machine verdict came for `callId` while its greeting still plays: one more callback, the
   * greeting's end, is taken for it (Vonage reports the beep after the machine; `amdFor` with
   * `greetingEnd`). False when the coordinator could not keep it.
   */
  expectGreetingEnd(ticket: string, callId: string, callTtlMs: number): Promise<boolean> {
    return this.#coordinator.hold(`amd-end:${ticket}`, callId, callTtlMs);
  }

  async #bound(key: string, callId: string | undefined, callTtlMs: number): Promise<"ok" | "unknown" | "another call"> {
    const bound = await this.#coordinator.take(key);
    if (bound === undefined) return "unknown";
    if (bound === callId) return "ok";
    await this.#coordinator.hold(key, bound, callTtlMs);
    return "another call";
  }
}

