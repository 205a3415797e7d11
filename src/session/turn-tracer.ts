/**
 * OpenTelemetry traces of a session, read off the events it emits: one span per turn (the
 * caller's committed words → the reply's `metrics.turn`), a child span per tool call, and child
 * spans for the measured stages laid out on the turn's timeline (endpoint before the commit, the
 * LLM's first token after it, then the TTS's first audio; voice-to-voice from the end of speech).
 * No-op unless the host registers an OpenTelemetry SDK (`@opentelemetry/api` returns a no-op
 * tracer otherwise). A turn whose span does not record (`isRecording()`, the API's own test: no SDK,
 * or a sampler that dropped it) gets no child spans, contexts or attributes, so by default a turn
 * costs one no-op span.
 */
import { SpanStatusCode, context, trace, type Attributes, type Span } from "@opentelemetry/api";
import type { Clock } from "../clock.js";
import type { EventBody } from "../events.js";
import { SmallMap } from "../small-map.js";
import { spread } from "../spread.js";

/**
 * The gateway's tracer, got once: the API hands out a proxy that delegates to the SDK's tracer
 * once one is registered, also when that happens after this module loaded (ProxyTracer re-checks
 * on each span until it finds one). Got per turn, it was a new proxy object every turn.
 */
const tracer = trace.getTracer("switchboard");

export class TurnTracer {
  readonly #clock: Clock;
  readonly #attributes: Attributes;
  #turn: { span: Span; committedAt: number } | undefined;
  /** Tool calls in flight (spans only when recording): none on most turns, a few at most. */
  readonly #tools = new SmallMap<string, Span>();

  constructor(clock: Clock, attributes: Attributes) {
    this.#clock = clock;
    this.#attributes = attributes;
  }

  event(event: EventBody): void {
    switch (event.type) {
      case "user-transcript.committed":
        this.#endTurn();
        this.#turn = {
          span: tracer.startSpan("switchboard.turn", { startTime: this.#clock.now(), attributes: this.#attributes }),
          committedAt: this.#clock.now(),
        };
        return;
      case "tool.called": {
        if (this.#turn !== undefined && !this.#turn.span.isRecording()) return;
        const parent = this.#turn === undefined ? context.active() : trace.setSpan(context.active(), this.#turn.span);
        const span = tracer.startSpan(
          `switchboard.tool ${event.toolName}`,
          { startTime: this.#clock.now(), attributes: spread(this.#attributes, { "switchboard.tool.name": event.toolName, "switchboard.tool.call_id": event.toolCallId }) },
          parent,
        );
        this.#tools.set(event.toolCallId, span);
        return;
      }
      case "tool.completed": {
        const span = this.#tools.get(event.toolCallId);
        if (span === undefined) return;
        this.#tools.delete(event.toolCallId);
        if (event.isError === true) span.setStatus({ code: SpanStatusCode.ERROR, message: event.result.slice(0, 200) });
        span.end(this.#clock.now());
        return;
      }
      case "reply.cancelled":
        if (this.#turn?.span.isRecording() === true) this.#turn.span.setAttribute("switchboard.turn.cancelled", true);
        return;
      case "metrics.turn": {
        const turn = this.#turn;
        if (turn === undefined) return;
        if (!turn.span.isRecording()) return this.#endTurn();
        const at = turn.committedAt;
        const stages: [string, number | undefined, number][] = [
          ["endpoint", event.endpointMs, at - (event.endpointMs ?? 0)],
          ["llm_first_token", event.llmFirstTokenMs, at],
          ["tts_first_audio", event.ttsFirstAudioMs, at + (event.llmFirstTokenMs ?? 0)],
          ["voice_to_voice", event.voiceToVoiceMs, at - (event.endpointMs ?? 0)],
        ];
        const parent = trace.setSpan(context.active(), turn.span);
        for (const [stage, ms, start] of stages) {
          if (ms === undefined) continue;
          turn.span.setAttribute(`switchboard.turn.${stage}_ms`, ms);
          tracer.startSpan(`switchboard.stage ${stage}`, { startTime: start, attributes: this.#attributes }, parent).end(start + ms);
        }
        turn.span.setAttribute("switchboard.turn.id", event.turnId);
        this.#endTurn();
        return;
      }
      default:
        return;
    }
  }

  /** The session ended: close whatever is still open. */
  close(): void {
    for (const [, span] of this.#tools.entries()) span.end(this.#clock.now());
    this.#tools.clear();
    this.#endTurn();
  }

  #endTurn(): void {
    this.#turn?.span.end(this.#clock.now());
    this.#turn = undefined;
  }
}
