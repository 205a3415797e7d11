import type { WebSocket } from "ws";

/** A provider link's audio backlog past which mic audio is dropped (bytes; docs/protocol.md "Limits", "STT audio backlog"). */
export const MAX_PROVIDER_BACKLOG_BYTES = 1024 * 1024;

/**
 * Send audio on a provider socket unless its backlog is over the limit: then the audio is
 * dropped and counted (control messages never go through here, so they are never dropped).
 * Returns the bytes dropped by this call.
 */
export function sendAudioOrDrop(ws: WebSocket, data: Uint8Array | string, bytes: number): number {
  if (ws.readyState !== ws.OPEN) return bytes;
  if (ws.bufferedAmount > MAX_PROVIDER_BACKLOG_BYTES) return bytes;
  ws.send(data);
  return 0;
}
