/** The log every provider adapter writes to: STT, TTS and s2s alike. */

/** The part of a pino logger the adapters use (pino's `Logger` fits). */
export interface ProviderLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The default log: silent. */
export const NO_LOG: ProviderLog = { debug: () => undefined, warn: () => undefined };
