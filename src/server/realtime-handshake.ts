/**
 * What the server needs of `WS /v1/realtime` before any Realtime client connects: the path, and
 * the subprotocol its handshake answers with. The rest of the front door (`realtime-route.ts`,
 * `src/realtime/`) is imported on the first upgrade to the path.
 */
/** The path Realtime clients connect to (`<baseURL>/realtime` with the `openai` package's `baseURL` at `/v1`). */
export const REALTIME_PATH = "/v1/realtime";
/** The subprotocol browsers carry a key in (the Realtime API's documented browser form). */
export const KEY_SUBPROTOCOL_PREFIX = "openai-insecure-api-key.";
/** The subprotocol the gateway answers with when offered; it never echoes one carrying a key. */
export const REALTIME_SUBPROTOCOL = "realtime";

/** Pick the handshake's subprotocol: `realtime` if offered, else none. */
export function chooseRealtimeProtocol(offered: ReadonlySet<string>): string | false {
  return offered.has(REALTIME_SUBPROTOCOL) ? REALTIME_SUBPROTOCOL : false;
}
