/**
 * OpenTelemetry traces of a session, read off the events it emits: one span per turn (the
 * caller's committed words → the reply's `metrics.turn`), a child span per tool call, and child
 * spans for the measured stages laid out on the turn's timeline (endpoint before the commit, the
 * LLM's first token after it, then the TTS's first audio; voice-to-voice from the end of speech).
 * Made only for a session that starts once the host has registered an OpenTelemetry SDK
 * (`tracingRegistered`; docs/deploy.md says to register it first): with none, a session has no
 * tracer and an event costs nothing here. A turn whose span does not record (`isRecording()`, the
 * API's own test: a sampler that dropped it) gets no child spans, contexts or attributes.
 */
import { ProxyTracerProvider, SpanStatusCode, context, trace, type Attributes, type Span } from "@opentelemetry/api";
import type { Clock } from "../clock.js";
import type { EventBody } from "../events.js";
import { SmallMap } from "../small-map.js";
import { spread } from "../spread.js";

/** What the API's proxy delegates to while no SDK is registered (a proxy of its own has no delegate). */
const NO_SDK = new ProxyTracerProvider().getDelegate();

/**
 * A tracer provider is registered: the API's global proxy has a delegate, or the global provider
 * is not this copy of the API's proxy (another copy registered its own: counted as registered).
 * Read once per session: with no SDK each turn's no-op span was about a tenth of the path from the
 * caller's last word to the model request at 50 sessions (docs/benchmarks.md, "Pipeline").
 */
export function tracingRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_SDK;
}

export class TurnTracer {
  /**
   * The SDK's tracer, got as the session starts (the SDK is registered by then: `tracingRegistered`).
   * Not one got when this module loaded: that is a proxy of the API's global proxy, which
   * `trace.disable()` replaces, so a host that re-registers its SDK would get no spans.
   */
  readonly #tracer = trace.getTracer("switchboard");
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
          span: this.#tracer.startSpan("switchboard.turn", { startTime: this.#clock.now(), attributes: this.#attributes }),
          committedAt: this.#clock.now(),
        };
        return;
      case "tool.called": {
        if (this.#turn !== undefined && !this.#turn.span.isRecording()) return;
        const parent = this.#turn === undefined ? context.active() : trace.setSpan(context.active(), this.#turn.span);
        const span = this.#tracer.startSpan(
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
          this.#tracer.startSpan(`switchboard.stage ${stage}`, { startTime: start, attributes: this.#attributes }, parent).end(start + ms);
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
