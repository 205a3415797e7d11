/**
 * Reading a run's journal (the world's events) as the engine shows it: one entry per event,
 * without payloads, and where a live run is (in a step, waiting for a hook, sleeping).
 */
import type { Event } from "@workflow/world";
import type { RunEvent, RunStatus } from "./engine.js";
import { stepName } from "./sdk-contract.js";

/** An error as text, clipped: what the journal and a run's `error` show (characters). */
export const MAX_ERROR_CHARS = 500;

export function errorText(error: unknown): string {
  const text =
    typeof error === "string" ? error : error instanceof Error ? error.message : typeof (error as { message?: unknown } | null)?.message === "string" ? (error as { message: string }).message : JSON.stringify(error);
  return (text ?? "").slice(0, MAX_ERROR_CHARS);
}

/** Whether `error` is the SDK's "no such run" / "no such hook" (matched by name: errors cross realms). */
export const isNamed = (error: unknown, name: string): boolean => error instanceof Error && error.name === name;

/** One journal entry, without payloads. `tries`: step_started events seen so far per step (the world may not record the attempt). */
export function toRunEvent(event: Event, tries: Map<string, number>): RunEvent {
  const data = ("eventData" in event ? event.eventData : undefined) as Record<string, unknown> | undefined;
  const step = typeof data?.stepName === "string" ? stepName(data.stepName) : undefined;
  const out: { -readonly [K in keyof RunEvent]: RunEvent[K] } = { id: event.eventId, type: event.eventType, at: event.createdAt.getTime() };
  if (event.correlationId !== undefined) out.correlationId = event.correlationId;
  if (step !== undefined) out.step = step;
  if (event.eventType === "step_started") {
    const attempt = (tries.get(event.correlationId) ?? 0) + 1;
    tries.set(event.correlationId, attempt);
    out.attempt = typeof data?.attempt === "number" ? data.attempt : attempt;
  }
  if (data?.error !== undefined) out.error = errorText(data.error);
  if (event.eventType === "hook_created" && typeof data?.token === "string") out.token = data.token;
  if (event.eventType === "wait_created" && data?.resumeAt instanceof Date) out.wakeAt = data.resumeAt.getTime();
  return out;
}

/** Where a running run is, from its journal: in a step, waiting for a hook, or sleeping. */
export function liveState(events: readonly RunEvent[]): { status: RunStatus; waitingFor?: string; wakeAt?: number } {
  const steps = new Set<string>();
  const hooks = new Map<string, string>();
  const waits = new Map<string, number>();
  for (const event of events) {
    const id = event.correlationId ?? "";
    if (event.type === "step_created") steps.add(id);
    else if (event.type === "step_completed" || event.type === "step_failed") steps.delete(id);
    else if (event.type === "hook_created") hooks.set(id, event.token ?? "");
    else if (event.type === "hook_received" || event.type === "hook_disposed") hooks.delete(id);
    else if (event.type === "wait_created") waits.set(id, event.wakeAt ?? 0);
    else if (event.type === "wait_completed") waits.delete(id);
  }
  if (steps.size > 0) return { status: "running" };
  // The most recent open wait is the one the body is in (an earlier one may be a timeout that lost its race).
  const wakeAt = [...waits.values()].at(-1);
  const token = [...hooks.values()].at(-1);
  if (token !== undefined) return { status: "waiting", waitingFor: token, ...(wakeAt === undefined ? {} : { wakeAt }) };
  if (wakeAt !== undefined) return { status: "sleeping", wakeAt };
  return { status: "running" };
}
