import { randomFillSync } from "node:crypto";
import { z } from "zod";

/** Client protocol version this module speaks (docs/protocol.md). */
export const PROTOCOL_VERSION = 1;

/** Limits of protocol.md; all configurable on the gateway. */
export const DEFAULT_LIMITS = {
  /** Largest text frame accepted (bytes). */
  maxTextFrameBytes: 256 * 1024,
  /** Largest binary (audio) frame accepted (bytes). */
  maxBinaryFrameBytes: 1024 * 1024,
  /** Audio buffered before the session has started (bytes). */
  preStartAudioBytes: 1024 * 1024,
  /** Commands buffered before the session has started. */
  preStartCommands: 100,
  /** Outbound socket backlog that closes the connection 1008 (bytes). */
  maxBacklogBytes: 4 * 1024 * 1024,
  /** ws-level ping interval (ms); a peer that misses two pongs is closed. */
  pingIntervalMs: 15_000,
  /**
   * Frames a client may send per second, sustained (input-budget.ts): 20 ms audio is 50, and
   * playback reports and commands add a few. Past it (and past a burst of `inputBurstSeconds`)
   * its socket stops being read until the budget refills.
   */
  maxFramesPerSecond: 200,
  /** Audio a client may send, as a multiple of real time at its declared rate (PCM16 bytes; Opus is far smaller). */
  maxAudioRealtime: 3,
  /**
   * Bytes of text frames a client may send per second, sustained. Reading text is cheap (parsing
   * 1 MiB of JSON is a few ms); what a typed turn costs is bounded by the turn queue instead.
   */
  maxTextBytesPerSecond: 1024 * 1024,
  /** Seconds of each budget that may arrive at once. */
  inputBurstSeconds: 2,
} as const;
export type Limits = { -readonly [K in keyof typeof DEFAULT_LIMITS]: number };

// ── Commands (client → server) ──────────────────────────────────────────────────────────────

const empty = <T extends string>(type: T) => z.object({ type: z.literal(type) });

/**
 * The longest `user_text` (characters after trimming). One typed turn is one user message in the
 * model history and one transcript line: 20 000 characters is a long pasted document, and a tenth
 * of the history's character budget (MAX_HISTORY_CHARS), so one turn cannot crowd it out.
 * Longer texts are refused at parse (a non-fatal `protocol` error naming the limit).
 */
export const MAX_USER_TEXT_CHARS = 20_000;

/** The most unplayed audio a playback report may claim (ms; docs/protocol.md `playback_progress`): 10 minutes. */
export const MAX_BUFFERED_MS = 600_000;

export const CommandSchemas = {
  audio_ready: empty("audio_ready"),
  cancel: empty("cancel"),
  reset: empty("reset"),
  playback_progress: z.object({
    type: z.literal("playback_progress"),
    bufferedMs: z.number().min(0).max(MAX_BUFFERED_MS),
  }),
  tool_result: z.object({
    type: z.literal("tool_result"),
    toolCallId: z.string().min(1).max(256),
    result: z.string().max(1_000_000),
    error: z.union([z.string(), z.boolean()]).optional(),
  }),
  user_text: z.object({
    type: z.literal("user_text"),
    text: z.string().trim().min(1).max(MAX_USER_TEXT_CHARS, `too long: at most ${MAX_USER_TEXT_CHARS} characters`),
  }),
  user_turn_start: empty("user_turn_start"),
  user_turn_commit: empty("user_turn_commit"),
  user_turn_clear: empty("user_turn_clear"),
} as const;

export type CommandType = keyof typeof CommandSchemas;
export type Command = { [K in CommandType]: z.output<(typeof CommandSchemas)[K]> }[CommandType];
/** One message of an out-of-band response's own input (`response.input` on `/v1/realtime`). */
export interface OutOfBandMessage {
  readonly role: "user" | "assistant" | "system";
  readonly text: string;
}

/** What an out-of-band response asks of the agent's model (docs/realtime.md "Out-of-band responses"). */
export interface OutOfBandAsk {
  /** The system prompt for this response alone; default the agent's. */
  readonly instructions?: string;
  /** The messages it answers; default the conversation so far. */
  readonly input?: readonly OutOfBandMessage[];
  /** Tokens it may write at most; default the agent's `maxOutputTokens`. */
  readonly maxOutputTokens?: number;
  /** Aborted by the client's `response.cancel` or the socket's close. */
  readonly signal: AbortSignal;
}

/** Where an out-of-band response's text goes, as the model writes it, and how it ended (called once). */
export interface OutOfBandSink {
  delta(text: string): void;
  done(outcome: { readonly status: "completed" | "cancelled" | "failed"; readonly text: string; readonly error?: string }): void;
}

/**
 * Commands only a link hands its session, never read from `/websocket`'s wire (`/v1/realtime`, docs/realtime.md):
 * - `truncate_heard` — the listener stopped playing the latest reply (the latest whose audio went out) at `audioMs` of its audio
 *   (`conversation.item.truncate`);
 * - `respond_out_of_band` — a response that does not touch the conversation (`response.create`
 *   with `conversation: "none"`), its text handed to `sink`.
 */
export type LinkCommand =
  | { readonly type: "truncate_heard"; readonly audioMs: number }
  | { readonly type: "respond_out_of_band"; readonly ask: OutOfBandAsk; readonly sink: OutOfBandSink };
/** The commands a link hands its session: `playback_progress` is the link's to report (`ConnectionHandler.playback`). */
export type SessionCommand = Exclude<Command, { readonly type: "playback_progress" }> | LinkCommand;
export const COMMAND_TYPES = Object.keys(CommandSchemas) as readonly CommandType[];

/** The outcome of reading one text frame. Never throws. */
export type ParsedFrame =
  | { readonly kind: "command"; readonly command: Command }
  | { readonly kind: "invalid-json" }
  | { readonly kind: "malformed"; readonly type: CommandType; readonly message: string }
  | { readonly kind: "unknown"; readonly type: string | undefined };

function isCommandType(type: unknown): type is CommandType {
  return typeof type === "string" && Object.hasOwn(CommandSchemas, type);
}

/**
 * Lenient two-phase parsing: JSON first, then the schema of the named type. Invalid JSON and
 * unknown types are dropped by the caller (forward compatibility); a known type that is
 * malformed earns a non-fatal protocol error naming the field.
 */
export function parseCommand(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "invalid-json" };
  }
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  if (!isCommandType(type)) return { kind: "unknown", type: typeof type === "string" ? type : undefined };
  const parsed = CommandSchemas[type].safeParse(value);
  if (parsed.success) return { kind: "command", command: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? "" : `${issue.path.join(".")}: `;
  return { kind: "malformed", type, message: `${type}: ${field}${issue?.message ?? "invalid"}` };
}

// ── Events (server → client) ────────────────────────────────────────────────────────────────

export { eventBodySchemas, EVENT_TYPES, type EventBody, type EventMeta, type EventOf, type EventType, type ServerEvent } from "../events.js";
import { eventBodySchemas, EVENT_TYPES, type EventBody, type EventType, type ServerEvent } from "../events.js";
import { spread } from "../spread.js";

let serverEvents: z.ZodDiscriminatedUnion<[z.ZodObject, ...z.ZodObject[]]> | undefined;

/**
 * The wire schema of every event, meta included, for conformance checks: built on first use, since
 * the gateway never parses its own events (about 150 zod schemas, 0.5 MiB of an idle gateway's heap, issue 23).
 */
export function serverEventSchema(): z.ZodDiscriminatedUnion<[z.ZodObject, ...z.ZodObject[]]> {
  serverEvents ??= z.discriminatedUnion(
    "type",
    EVENT_TYPES.map((type) =>
      eventBodySchemas()[type].extend({
        type: z.literal(type),
        meta: z.object({ id: z.string().regex(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/), at: z.number().int() }),
      }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  );
  return serverEvents;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastMs = -1;
/** The 80-bit random part as five 16-bit words, incremented within a millisecond (monotonic ULID). */
const randomWords = new Uint16Array(5);
/**
 * Random words drawn from the CSPRNG in one call and handed out five at a time: `randomBytes(10)`
 * per id cost 2–3 µs hot and about 20 µs as the pipeline calls it (once a turn, cache-cold; a CPU
 * profile of bench:pipeline), a 4 KiB refill about 10 µs per 409 ids.
 */
const randomPool = new Uint16Array(2048);
let poolAt = randomPool.length;

/**
 * A monotonic ULID (48-bit ms timestamp + 80 random bits, Crockford base32): sortable, unique.
 * One random draw per millisecond, not per character: an id costs a few hundred ns.
 */
export function ulid(now: number): string {
  if (now > lastMs) {
    lastMs = now;
    if (poolAt + 5 > randomPool.length) {
      randomFillSync(randomPool);
      poolAt = 0;
    }
    for (let i = 0; i < 5; i++) randomWords[i] = randomPool[poolAt + i] ?? 0;
    poolAt += 5;
  } else {
    for (let i = 4; i >= 0; i--) {
      randomWords[i] = ((randomWords[i] ?? 0) + 1) & 0xffff;
      if (randomWords[i] !== 0) break;
    }
  }
  let time = "";
  let t = Math.max(lastMs, 0);
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD.charAt(t % 32) + time;
    t = Math.floor(t / 32);
  }
  // 80 bits = 16 base32 characters, 5 bits at a time from the most significant end.
  let random = "";
  let buffer = 0;
  let bits = 0;
  for (const word of randomWords) {
    buffer = (buffer << 16) | word;
    bits += 16;
    while (bits >= 5) {
      bits -= 5;
      random += CROCKFORD.charAt((buffer >>> bits) & 31);
    }
    buffer &= (1 << bits) - 1;
  }
  return time + random;
}

/** Stamp an event once with its meta (id sortable within a process, `at` from the given clock). */
export function stamp(body: EventBody, now: number): ServerEvent {
  return spread(body, { meta: { id: `evt_${ulid(now)}`, at: now } });
}

/** The events that wait behind held audio, and the ones that clear it and go out at once. */
export const AFTER_AUDIO_EVENTS: ReadonlySet<EventType> = new Set(["audio.completed", "reply.completed"]);
export const CLEARING_EVENTS: ReadonlySet<EventType> = new Set(["reply.cancelled", "session.reset"]);
