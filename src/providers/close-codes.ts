/**
 * The one close-code table of the provider sockets (docs/vendors.md, "Close codes"): which close
 * of a session's socket, not asked for by the gateway, a reconnect may cure. Every s2s adapter
 * reads it, before and after its session is ready.
 *
 * Transient (reconnect with backoff): 1001 going away, 1006 abnormal (no close frame: a network
 * drop), 1011 server error, 1012 service restart, 1013 try again later (RFC 6455 §7.4.1 and the
 * IANA WebSocket close-code registry).
 *
 * Everything else is fatal: 1000 that the gateway did not ask for (the vendor ended the session),
 * 1002/1003/1007 (a protocol or payload error: the same setup gets the same answer), 1008 policy
 * (a refused key, quota), and the vendors' own 4xxx codes (application refusals: a bad key, a bad
 * setup, a closed account), which a retry would meet again.
 */

const TRANSIENT_CLOSE_CODES: ReadonlySet<number> = new Set([1001, 1006, 1011, 1012, 1013]);

/** A close a reconnect may cure. */
export function isTransientClose(code: number): boolean {
  return TRANSIENT_CLOSE_CODES.has(code);
}

/** A vendor application code (4000–4999): a refusal that may concern the key, so a message names the variable to check. */
export function isVendorClose(code: number): boolean {
  return code >= 4000 && code <= 4999;
}
