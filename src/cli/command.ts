/**
 * What every `switchboard` subcommand is: its name, a one-line summary, its own usage text and
 * options (`node:util` parseArgs), and what it runs. `src/cli.ts` dispatches; one module per
 * command under `src/cli/`.
 */
import type { ParseArgsConfig } from "node:util";

export type Options = NonNullable<ParseArgsConfig["options"]>;
export type Values = Readonly<Record<string, string | boolean | readonly (string | boolean)[] | undefined>>;

export interface Command {
  readonly name: string;
  /** `<agent-dir-or-file>` and the like, for the usage line. */
  readonly args: string;
  readonly summary: string;
  /** The option lines of its usage (already indented), if any. */
  readonly optionHelp: string;
  readonly options: Options;
  /** Resolves with the exit code (a server never resolves). */
  run(positionals: readonly string[], values: Values): Promise<number>;
}

/** Exit codes (README "Exit codes"): 0 done, 1 the command failed, 2 it was used wrongly. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export function fail(message: string, code: number = EXIT.failed): number {
  process.stderr.write(`switchboard: ${message}\n`);
  return code;
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `--flag` as a string, or undefined. */
export function text(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** `--flag` as a boolean. */
export function flag(values: Values, name: string): boolean {
  return values[name] === true;
}
