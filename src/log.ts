import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger } from "pino";

/**
 * Paths pino redacts wherever they appear in a log object: keys, tokens and authorization
 * headers never reach a log line.
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
  "secret",
  "*.secret",
];

export interface LoggerOptions {
  readonly level?: string;
  readonly destination?: DestinationStream;
}

/** The gateway's root logger: JSON lines, secrets redacted. One child per session. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = { level: options.level ?? process.env.LOG_LEVEL ?? "info", redact: { paths: REDACT_PATHS, censor: "[redacted]" } };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
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
  readonly #kinds = new Map<string, { until: number; suppressed: number }>();

  constructor(now: () => number, intervalMs = LOG_THROTTLE_MS) {
    this.#now = now;
    this.#intervalMs = intervalMs;
  }

  warn(log: Logger, fields: Record<string, unknown>, message: string): void {
    this.#write(log, "warn", fields, message);
  }

  info(log: Logger, fields: Record<string, unknown>, message: string): void {
    this.#write(log, "info", fields, message);
  }

  #write(log: Logger, level: "warn" | "info", fields: Record<string, unknown>, message: string): void {
    const now = this.#now();
    const kind = this.#kinds.get(message);
    if (kind !== undefined && now < kind.until) {
      kind.suppressed += 1;
      return;
    }
    const suppressed = kind?.suppressed ?? 0;
    this.#kinds.set(message, { until: now + this.#intervalMs, suppressed: 0 });
    log[level](suppressed > 0 ? { ...fields, suppressed } : fields, message);
  }
}
