/**
 * The one error catalogue. Every error the gateway reports to a client is a GatewayError with a
 * code from ERROR_CODES; `docs/protocol.md` lists the same codes (a test keeps them in sync).
 */
export const ERROR_CODES = ["stt", "llm", "tts", "s2s", "tool", "protocol", "auth", "connection", "audio", "internal"] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** WebSocket close codes the gateway uses (RFC 6455 §7.4.1). */
export const CLOSE = {
  /** Normal end: client close, idle timeout, carrier stop, end_call. */
  normal: 1000,
  /** Going away: the gateway is draining. */
  goingAway: 1001,
  /** Policy: auth, protocol abuse, a client that stopped reading. */
  policy: 1008,
  /** Start failure or internal error. */
  internal: 1011,
} as const;
export type CloseCode = (typeof CLOSE)[keyof typeof CLOSE];

export interface GatewayErrorOptions {
  readonly fatal?: boolean;
  /** Close code for a fatal error; defaults by code (auth/protocol → 1008, else 1011). */
  readonly closeCode?: CloseCode;
  readonly cause?: unknown;
}

/** An error a session reports: its code, whether it ends the session, and how the socket closes. */
export class GatewayError extends Error {
  override readonly name = "GatewayError";
  readonly code: ErrorCode;
  readonly fatal: boolean;
  readonly closeCode: CloseCode;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.fatal = options.fatal ?? false;
    this.closeCode = options.closeCode ?? (code === "auth" || code === "protocol" ? CLOSE.policy : CLOSE.internal);
  }
}

/** A provider that cannot be built because its key is missing: names the variable to set. */
export class MissingKeyError extends GatewayError {
  readonly variable: string;

  constructor(provider: string, variable: string) {
    super("internal", `${provider} needs an API key: set ${variable} in the environment (or options.apiKeyEnv), or run on the offline stack (--offline, or createGateway({ offline: true })).`, {
      fatal: true,
    });
    this.variable = variable;
  }
}

/** The message of anything thrown, for logs and client errors. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
