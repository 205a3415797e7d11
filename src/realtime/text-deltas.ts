/**
 * Realtime's text streams append (`*.delta` events), while the session's snapshots replace
 * (`agent-transcript.updated`, `user-transcript.updated`: docs/protocol.md). The one rule mapping
 * the latter onto the former (docs/realtime.md "Semantics"): a snapshot that extends what was
 * already sent is sent as the text it adds; one that rewrites earlier text cannot be, since a
 * delta never takes text back, so nothing is sent for it and the stream's `done`/`completed`
 * event carries the whole text.
 */

/** The text `snapshot` adds to `sent` (possibly ""), or undefined when it rewrote what was sent. */
export function appendedText(sent: string, snapshot: string): string | undefined {
  return snapshot.startsWith(sent) ? snapshot.slice(sent.length) : undefined;
}
