/**
 * What `/v1/realtime` tells a client of tokens (docs/realtime.md "Semantics": Usage, Rate limits): a
 * response's `usage` and `rate_limits.updated`, from what the session reports — never invented.
 * Shapes as the `openai` package declares them (`RealtimeResponseUsage`, `RateLimitsUpdatedEvent`).
 */
import type { EventOf } from "../events.js";

/** One reply's model tokens, as `reply.completed` carries them (docs/protocol.md). */
export type ReplyUsage = NonNullable<EventOf<"reply.completed">["usage"]>;

/**
 * A response's `usage`. The token details (cached, text, audio) are left out: the session does not
 * report that split, and every field of Realtime's usage is optional.
 */
export function realtimeUsage(usage: ReplyUsage): { total_tokens: number; input_tokens: number; output_tokens: number } {
  return { total_tokens: usage.totalTokens, input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
}

/**
 * The one limit the gateway enforces in tokens: the agent's `usageLimits.totalTokens`, a budget for
 * the whole session (it never resets, so no `reset_seconds`), `used` so far (`usage.updated`'s
 * `totalTokens`). Crossing it ends the session at the next turn (docs/protocol.md `usage.updated`).
 */
export function tokenRateLimits(limit: number, used: number): { name: "tokens"; limit: number; remaining: number }[] {
  return [{ name: "tokens", limit, remaining: Math.max(0, limit - used) }];
}
