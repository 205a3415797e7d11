/**
 * Where a session's events leave it. Each event is, in this order, counted (metrics), traced (one
 * span per turn, `TurnTracer`, when an OpenTelemetry SDK was registered as the session started), sent on the link (stamped there), then shown to the agent's `events`
 * observers with what was sent. Once the session ends (`close`) nothing more leaves.
 */
import type { ErrorCode, GatewayError } from "../errors.js";
import type { AgentEvents, SessionMode } from "../manifest/index.js";
import type { ClientLink } from "../transport/client-connection.js";
import type { TranscriptSnapshot } from "../events.js";
import type { EventBody } from "../transport/protocol.js";
import type { SessionMetrics } from "./metrics-port.js";
import { EventObservers } from "./observers.js";
import type { SessionIdentity } from "./session-deps.js";
import { TurnTracer, tracingRegistered } from "./turn-tracer.js";

export interface EventOutletOptions extends SessionIdentity {
  readonly metrics: SessionMetrics;
  readonly link: Pick<ClientLink, "emit" | "shows">;
  /** The agent's `events` observers (none: nothing is done per event for them). */
  readonly observers: AgentEvents | undefined;
}

export class EventOutlet {
  readonly #mode: SessionMode;
  readonly #transport: string;
  readonly #metrics: SessionMetrics;
  readonly #link: Pick<ClientLink, "emit" | "shows">;
  /** None when no OpenTelemetry SDK was registered as the session started. */
  readonly #tracer: TurnTracer | undefined;
  readonly #observers: EventObservers | undefined;
  #open = true;

  constructor(options: EventOutletOptions) {
    const { clock, log, sessionId, mode, transport } = options;
    this.#mode = mode;
    this.#transport = transport;
    this.#metrics = options.metrics;
    this.#link = options.link;
    this.#tracer = tracingRegistered()
      ? new TurnTracer(clock, {
          "switchboard.session.id": sessionId,
          "switchboard.agent": options.agentName,
          "switchboard.mode": mode,
          "switchboard.transport": transport,
        })
      : undefined;
    this.#observers = EventObservers.for(options.observers, { sessionId, mode }, { clock, log });
  }

  emit(event: EventBody): void {
    if (!this.#open) return;
    this.#metrics.event(this.#mode, this.#transport, event);
    this.#tracer?.event(event);
    const sent = this.#link.emit(event);
    this.#observers?.observe(event, sent);
  }

  /** Someone takes a snapshot of this type: the link shows it, or an observer receives it (metrics and traces read none). */
  wants(type: TranscriptSnapshot): boolean {
    return this.#open && ((this.#link.shows?.(type) ?? true) || this.#observers?.observes(type) === true);
  }

  /** A problem the client should know of; the session goes on. */
  report(code: ErrorCode, message: string): void {
    this.#metrics.error(code);
    this.emit({ type: "error.reported", code, message, fatal: false });
  }

  /** A fatal error, counted and reported once; the caller closes the socket with its code. */
  fatal(error: GatewayError): void {
    this.#metrics.error(error.code);
    this.emit({ type: "error.reported", code: error.code, message: error.message, fatal: true });
  }

  /** The session ended: no more events; the open turn's span ends. */
  close(): void {
    this.#open = false;
    this.#tracer?.close();
  }

  /** After the session's cleanup: one line if its observers misbehaved. */
  settle(): void {
    this.#observers?.ended();
  }
}
