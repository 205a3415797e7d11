/** Reading a provider socket's frames: their text, their size, whether parsed JSON is an object, and its fields. */
import type { RawData } from "ws";

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `object[key]` when it is an object. */
export function recordAt(object: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
  const value = object?.[key];
  return isRecord(value) ? value : undefined;
}

/** `object[key]` when it is a string. */
export function stringAt(object: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = object?.[key];
  return typeof value === "string" ? value : undefined;
}

/** A frame as UTF-8 text, whichever shape `ws` delivered it in. */
export function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString("utf8");
}

/** The first `chars` characters of a parsed message as JSON, for a log line (a vendor's message can be large). */
export function jsonSample(message: unknown, chars = 200): string {
  try {
    return String(JSON.stringify(message)).slice(0, chars);
  } catch {
    return typeof message;
  }
}

/** A frame's size in bytes. */
export function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return data.byteLength;
}
