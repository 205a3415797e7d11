import { spread } from "../../../spread.js";
/** What every carrier REST call shares: the injected fetch, a per-request timeout, errors that name the carrier's answer. */

/** The carrier answered, and not 2xx: it did not do what was asked (unlike a timeout or a network error, after which it may have). */
export class CarrierRefusal extends Error {
  override readonly name = "CarrierRefusal";
  constructor(
    message: string,
    /** The carrier's HTTP status. */
    readonly status: number,
  ) {
    super(message);
  }
}

export interface RestContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly fetch: typeof fetch;
  /** Per request (ms). */
  readonly timeoutMs: number;
}

/** A set, non-empty variable. */
export function envValue(env: RestContext["env"], name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === "" ? undefined : value;
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
}

/** A carrier's answer is read up to this many characters (a call resource is a few KB). */
const MAX_ANSWER_CHARS = 64 * 1024;

/**
 * Send one request and read its JSON answer: the parsed object, or `{}` when the carrier answered
 * 2xx with something that is not a JSON object (its answer is a stranger's: the caller validates
 * every field it reads). Throws as `send` does when it is not 2xx.
 */
export async function sendForJson(ctx: RestContext, what: string, url: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<Record<string, unknown>> {
  const response = await ctx.fetch(url, spread(init, { signal: AbortSignal.timeout(ctx.timeoutMs) }));
  const text = (await response.text().catch(() => "")).slice(0, MAX_ANSWER_CHARS);
  if (!response.ok) throw new CarrierRefusal(`${what} answered ${response.status}: ${text.slice(0, 200)}`, response.status);
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Send one request; throws naming `what` and the carrier's status (and the start of its body) when it is not 2xx. */
export async function send(ctx: RestContext, what: string, url: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<void> {
  const response = await ctx.fetch(url, spread(init, { signal: AbortSignal.timeout(ctx.timeoutMs) }));
  if (response.ok) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  const body = (await response.text().catch(() => "")).slice(0, 200);
  throw new CarrierRefusal(`${what} answered ${response.status}: ${body}`, response.status);
}
