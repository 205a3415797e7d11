/**
 * Which of this process's sessions are still on the line: the agent's `sessionContext` adds a
 * session, its `onSessionEnd` removes it, and the workflow's `onTheLine` step reads it. The
 * embedded workflow engine runs in the gateway's own process (docs/workflows.md "Where runs live"),
 * so the set it reads is the one the sessions write.
 */
const live = new Set<string>();

export const lines = {
  opened: (sessionId: string): void => void live.add(sessionId),
  closed: (sessionId: string): void => void live.delete(sessionId),
  onTheLine: (sessionId: string): boolean => live.has(sessionId),
};

/** A phone number the desk may call back: E.164. */
export const CALLABLE = /^\+[1-9][0-9]{6,14}$/;

/**
 * The key a caller's watches are kept under: their number on a phone call (as the carrier's signed
 * webhook named it), else the account they gave in a text or browser session.
 */
export function watchKey(caller: string | undefined, account: string | undefined): string | undefined {
  if (caller !== undefined) return caller;
  const id = account?.trim().toUpperCase();
  return id !== undefined && /^[A-Z0-9-]{1,32}$/.test(id) ? `account:${id}` : undefined;
}
