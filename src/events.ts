import { z } from "zod";
import { ERROR_CODES } from "./errors.js";

/**
 * The bodies of the events a session emits (client protocol v1, protocol.md). Bottom tier:
 * the pipeline, s2s and session layers emit them; the transport stamps and sends them.
 */

/** Every event type the client protocol sends (docs/protocol.md "Events"). */
export const EVENT_TYPES = [
  "session.configured",
  "speech.started",
  "speech.stopped",
  "user-transcript.updated",
  "user-transcript.committed",
  "agent-transcript.updated",
  "agent-transcript.committed",
  "tool.called",
  "tool.message",
  "tool.completed",
  "audio.completed",
  "reply.completed",
  "reply.cancelled",
  "session.reset",
  "session.timed-out",
  "error.reported",
  "state.updated",
  "history.restored",
  "usage.updated",
  "agent.changed",
  "transfer.requested",
  "voicemail.detected",
  "workflow.updated",
  "user-turn.exceeded",
  "metrics.turn",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The events that re-send what came before plus a little (the reply or the caller's words so
 * far), many a second while someone speaks. Metrics and traces read neither: a session builds one
 * only when its link shows it or an observer takes it (`ClientLink.shows`).
 */
export type TranscriptSnapshot = "agent-transcript.updated" | "user-transcript.updated";

/**
 * Every event's body (without its `meta`), keyed by type. Built on first use (`eventBodySchemas`):
 * the gateway never parses its own events, so only conformance checks and the types need them
 * (about 0.5 MiB of an idle gateway's heap, issue 23). `satisfies` keeps the keys and
 * `EVENT_TYPES` the same list.
 */
function buildEventBodySchemas() {
  const ErrorCodeSchema = z.enum(ERROR_CODES);
  const ToolCallRecordSchema = z.object({
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
    result: z.string().optional(),
    isError: z.boolean().optional(),
  });
  return {
    "session.configured": z.object({
      audioFormat: z.enum(["pcm16", "opus"]),
      sampleRate: z.number().int(),
      ttsSampleRate: z.number().int(),
      sessionId: z.string(),
      /** The secret that, with `sessionId`, resumes or takes over this session (`?resumeKey=`). */
      resumeKey: z.string(),
      mode: z.enum(["s2s", "pipeline", "text"]),
    }),
    "speech.started": z.object({}),
    "speech.stopped": z.object({}),
    "user-transcript.updated": z.object({ text: z.string(), eotConfidence: z.number().optional() }),
    /** `refused`: an input guardrail refused the turn (docs/config.md "Guardrails"); absent otherwise. */
    "user-transcript.committed": z.object({ text: z.string(), refused: z.literal(true).optional() }),
    "agent-transcript.updated": z.object({ text: z.string() }),
    "agent-transcript.committed": z.object({ text: z.string() }),
    "tool.called": z.object({ toolCallId: z.string(), toolName: z.string(), args: z.unknown() }),
    "tool.message": z.object({ toolCallId: z.string(), kind: z.enum(["start", "delayed", "complete", "failed"]), text: z.string() }),
    "tool.completed": z.object({ toolCallId: z.string(), result: z.string().max(4000), isError: z.boolean().optional() }),
    "audio.completed": z.object({}),
    /**
     * `usage`: the model tokens of this reply (its steps summed; an s2s service's tool-only steps
     * before it included), when the model reported them; absent when it did not (docs/protocol.md).
     */
    "reply.completed": z.object({ usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() }).optional() }),
    "reply.cancelled": z.object({}),
    "session.reset": z.object({}),
    "session.timed-out": z.object({}),
    "error.reported": z.object({ code: ErrorCodeSchema, message: z.string(), fatal: z.boolean() }),
    "state.updated": z.object({ state: z.unknown() }),
    "history.restored": z.object({
      messages: z.array(z.object({ role: z.enum(["user", "assistant"]), text: z.string(), refused: z.literal(true).optional() })),
      toolCalls: z.array(ToolCallRecordSchema),
    }),
    "usage.updated": z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number(), steps: z.number() }),
    /** A hand-off: `agent` (its `name`) speaks on the session from now on, after `previous`. */
    "agent.changed": z.object({ agent: z.string(), previous: z.string() }),
    /**
     * `transfer_call` on a client's session: hand the user to a person at `destination` (one of the
     * agent's `transfer.destinations`), after the agent's line has played. The socket closes 1000 right after.
     */
    "transfer.requested": z.object({
      destination: z.string(),
      number: z.string().optional(),
      sip: z.string().optional(),
      mode: z.enum(["cold", "warm"]),
      summary: z.string().optional(),
    }),
    /**
     * A machine answered the call (docs/telephony.md "Voicemail and answering machines"): who said
     * so (`carrier`: its AMD, with its `answeredBy`; `transcript`: the greeting's words, with the
     * `reason` and the `phrase`; `beep`: a tone, with its `frequencyHz`) and what the agent does.
     */
    "voicemail.detected": z.object({
      source: z.enum(["carrier", "transcript", "beep"]),
      action: z.enum(["hangup", "message"]),
      answeredBy: z.string().optional(),
      reason: z.string().optional(),
      phrase: z.string().optional(),
      frequencyHz: z.number().optional(),
    }),
    /**
     * Workflow runs the session started with `notify: true` ended, and the agent is told now (at a
     * polite moment), just before the reply that says it (docs/workflows.md "From a live session").
     * `note`: what the model reads (bounded).
     */
    "workflow.updated": z.object({
      runs: z.array(z.object({ runId: z.string(), workflow: z.string(), status: z.enum(["completed", "failed", "cancelled"]) })),
      note: z.string(),
    }),
    "user-turn.exceeded": z.object({ limit: z.enum(["words", "duration"]), words: z.number(), durationMs: z.number() }),
    "metrics.turn": z.object({
      turnId: z.string(),
      endpointMs: z.number().optional(),
      sttFinalMs: z.number().optional(),
      llmFirstTokenMs: z.number().optional(),
      ttsFirstAudioMs: z.number().optional(),
      voiceToVoiceMs: z.number().optional(),
    }),
  } as const satisfies Record<EventType, z.ZodObject>;
}

type EventBodySchemaTable = ReturnType<typeof buildEventBodySchemas>;
let eventBodies: EventBodySchemaTable | undefined;

/** Every event's body schema, keyed by type (built once, on the first call). */
export function eventBodySchemas(): EventBodySchemaTable {
  eventBodies ??= buildEventBodySchemas();
  return eventBodies;
}

/** zod's output of an empty object is an index signature of `never`; an empty body is `{}`. */
type Fields<T> = string extends keyof T ? object : T;

/** An event body as the session emits it (no meta yet). */
export type EventBody = { [K in EventType]: { type: K } & Fields<z.output<EventBodySchemaTable[K]>> }[EventType];
/** An event of one type, body only. */
export type EventOf<K extends EventType> = Extract<EventBody, { type: K }>;


export interface EventMeta {
  /** "evt_" + a ULID: sortable, unique. */
  readonly id: string;
  /** Epoch ms when the event was emitted. */
  readonly at: number;
}

/** An event on the wire: its body stamped once with its meta (src/transport/protocol.ts `stamp`). */
export type ServerEvent = EventBody & { readonly meta: EventMeta };
