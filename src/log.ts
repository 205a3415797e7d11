import { createRequire } from "node:module";
import { pino, type DestinationStream, type Logger } from "pino";
import type PinoPretty from "pino-pretty";

import { redactingLogger } from "./log-redaction.js";
import { SmallMap } from "./small-map.js";
import { spread } from "./spread.js";

export type { Logger } from "pino";

/**
 * Paths censored wherever they appear in a log object (log-redaction.ts): keys, tokens and
 * authorization headers never reach a log line.
 */
export const REDACT_PATHS = [
  "apiKey",
  "*.apiKey",
  "key",
  "*.key",
  "token",
  "*.token",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "req.headers.authorization",
  "req.query.token",
  // A Realtime browser client carries its key in a subprotocol (openai-insecure-api-key.<key>).
  'headers["sec-websocket-protocol"]',
  '*.headers["sec-websocket-protocol"]',
  "secret",
  "*.secret",
];

/** What a log line writes in place of a secret. */
export const REDACTED = "[redacted]";



/** `json`: one JSON object a line (for machines). `pretty`: time, level, message and fields (pino-pretty, for people). */
export type LogFormat = "json" | "pretty";

export interface LoggerOptions {
  readonly level?: string;
  readonly destination?: DestinationStream;
  /**
   * Default: JSON into a `destination`; onto stdout, {@link logFormat} — `LOG_FORMAT`, else
   * pretty on a terminal and JSON otherwise.
   */
  readonly format?: LogFormat;
}

/**
 * The log format: `LOG_FORMAT` (`json` or `pretty`) when it names one, else pretty when stdout
 * is a terminal and JSON otherwise (a pipe, a file, a container without `-t`, a log shipper).
 */
export function logFormat(env: Readonly<Record<string, string | undefined>> = process.env, terminal: boolean = process.stdout.isTTY === true): LogFormat {
  const chosen = env.LOG_FORMAT?.trim().toLowerCase();
  if (chosen === "json" || chosen === "pretty") return chosen;
  return terminal ? "pretty" : "json";
}

/**
 * pino-pretty as a synchronous destination: each JSON line pino writes (redaction already
 * applied) is formatted and written at once, so a line logged just before `process.exit` is not
 * lost, and a `--workers` worker writes its lines itself. Loaded only when a pretty logger is made.
 */
function prettyDestination(destination: DestinationStream | undefined): DestinationStream {
  const { prettyFactory } = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  const format = prettyFactory({
    // Colour only on a terminal: `LOG_FORMAT=pretty` into a file or a test's stream stays plain text.
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
  });
  const sink = destination ?? pino.destination({ fd: 1, sync: true });
  return {
    write: (line: string) => {
      sink.write(format(line));
    },
  };
}

/** The gateway's root logger, secrets redacted in either format. One child per session. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? "info";
  const chooses = options.format === undefined && options.destination === undefined;
  const format = options.format ?? (chooses ? logFormat() : "json");
  const destination = format === "pretty" ? prettyDestination(options.destination) : options.destination;
  const logger = redactingLogger((formatters) => (destination === undefined ? pino({ level, formatters }) : pino({ level, formatters }, destination)), REDACT_PATHS, REDACTED);
  const asked = process.env.LOG_FORMAT?.trim() ?? "";
  if (chooses && asked !== "" && !["json", "pretty"].includes(asked.toLowerCase())) {
    logger.warn({ LOG_FORMAT: asked, format }, "LOG_FORMAT is neither json nor pretty; chose the format by whether stdout is a terminal");
  }
  return logger;
}

/** A logger that writes nothing (library default, tests). */
export const silentLogger: Logger = pino({ level: "silent" });

/** How often one kind of warning a peer can cause may reach the log (ms). */
export const LOG_THROTTLE_MS = 10_000;

/**
 * Lines a stranger can cause (invalid frames, refused connections), at most one per kind per
 * interval: the first is written, the rest are counted, and the count rides on the next line of
 * that kind (`suppressed`). A peer sending a million bad frames costs a line every 10 s, not a
 * million lines. Kinds are the caller's constant messages, so the map stays small.
 */
export class LogThrottle {
  readonly #now: () => number;
  readonly #intervalMs: number;
  /** A few kinds at most (constant messages), and most throttles never write a line: no hash table for them. */
  readonly #kinds = new SmallMap<string, { until: number; suppressed: number }>();

  constructor(now: () => number, intervalMs = LOG_THROTTLE_MS) {
    this.#now = now;
    this.#intervalMs = intervalMs;
  }

  /** `log` is a pino logger, or any log with the level (a provider adapter's `ProviderLog` has `warn`). */
  warn(log: LevelLog<"warn">, fields: Record<string, unknown>, message: string): void {
    if (this.#admits(message)) log.warn(this.#counted(message, fields), message);
  }

  info(log: LevelLog<"info">, fields: Record<string, unknown>, message: string): void {
    if (this.#admits(message)) log.info(this.#counted(message, fields), message);
  }

  error(log: LevelLog<"error">, fields: Record<string, unknown>, message: string): void {
    if (this.#admits(message)) log.error(this.#counted(message, fields), message);
  }

  /** Whether a line of this kind may be written now; if not, it is counted. */
  #admits(message: string): boolean {
    const kind = this.#kinds.get(message);
    if (kind !== undefined && this.#now() < kind.until) {
      kind.suppressed += 1;
      return false;
    }
    return true;
  }

  /** The line's fields with the count of its kind's suppressed lines; the kind's interval starts again. */
  #counted(message: string, fields: Record<string, unknown>): Record<string, unknown> {
    const suppressed = this.#kinds.get(message)?.suppressed ?? 0;
    this.#kinds.set(message, { until: this.#now() + this.#intervalMs, suppressed: 0 });
    return suppressed > 0 ? spread(fields, { suppressed }) : fields;
  }
}

/** A log that writes at `level` (pino's `Logger` has them all). */
export type LevelLog<L extends "warn" | "info" | "error"> = Readonly<Record<L, (fields: object, message: string) => void>>;
