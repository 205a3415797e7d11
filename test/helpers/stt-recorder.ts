import type { SttEvents } from "../../src/pipeline/stt-port.js";

export type SttCall = { name: string; args: unknown[] };
export type TimedSttCall = SttCall & { at: number };

export interface SttRecorderOptions {
  /** How long `waitFor` waits by default. */
  timeoutMs?: number;
  /** How often `waitFor` polls. */
  pollMs?: number;
  /** Stamp each call with `at: Date.now()`, and name each call's first argument in timeouts. */
  timestamps?: boolean;
}

export interface SttRecorder<C extends SttCall = SttCall> {
  calls: C[];
  events: SttEvents;
  of: (name: string) => C[];
  waitFor: (name: string, count?: number, timeoutMs?: number) => Promise<C>;
  finals: () => string[];
}

/** Records an STT session's events in order; `waitFor` polls until `count` calls of `name`. */
export function sttRecorder(options: SttRecorderOptions & { timestamps: true }): SttRecorder<TimedSttCall>;
export function sttRecorder(options?: SttRecorderOptions): SttRecorder;
export function sttRecorder({ timeoutMs: defaultTimeoutMs = 2000, pollMs = 2, timestamps = false }: SttRecorderOptions = {}): SttRecorder<SttCall | TimedSttCall> {
  const calls: (SttCall | TimedSttCall)[] = [];
  const push = (name: string, ...args: unknown[]): void => {
    calls.push(timestamps ? { name, args, at: Date.now() } : { name, args });
  };
  const events: SttEvents = {
    partial: (text, info) => push("partial", text, info),
    final: (text, info) => push("final", text, info),
    speechStarted: () => push("speechStarted"),
    error: (error, info) => push("error", error, info),
    closed: (info) => push("closed", info),
  };
  const of = (name: string): SttCall[] => calls.filter((c) => c.name === name);
  const waitFor = async (name: string, count = 1, timeoutMs = defaultTimeoutMs): Promise<SttCall> => {
    const deadline = Date.now() + timeoutMs;
    while (of(name).length < count) {
      if (Date.now() > deadline) {
        const got = timestamps ? calls.map((c) => [c.name, c.args[0]]) : calls.map((c) => c.name);
        throw new Error(`timed out waiting for ${count} × ${name}; got ${JSON.stringify(got)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    return of(name)[count - 1]!;
  };
  const finals = (): string[] => of("final").map((c) => c.args[0] as string);
  return { calls, events, of, waitFor, finals };
}
