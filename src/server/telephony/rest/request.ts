/** What every carrier REST call shares: the injected fetch, a per-request timeout, errors that name the carrier's answer. */

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

/** Send one request; throws naming `what` and the carrier's status (and the start of its body) when it is not 2xx. */
export async function send(ctx: RestContext, what: string, url: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<void> {
  const response = await ctx.fetch(url, { ...init, signal: AbortSignal.timeout(ctx.timeoutMs) });
  if (response.ok) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  const body = (await response.text().catch(() => "")).slice(0, 200);
  throw new Error(`${what} answered ${response.status}: ${body}`);
}
