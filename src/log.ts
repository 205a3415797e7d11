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
