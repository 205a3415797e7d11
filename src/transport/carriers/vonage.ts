/**
 * Vonage Voice API WebSocket codec (docs/vendors.md (Carriers)). Pure; decode never throws.
 * Binary frames are L16 audio (mono, 20 ms); text frames are JSON events. Vonage has no stream id
 * and no marks; the audio is the call's mix (no leg can be selected).
 */
import {
  MAX_PAYLOAD_BYTES,
  dtmfDigit,
  ignored,
  label,
  parseTextFrame,
  safely,
  str,
  type CarrierCodec,
  type CarrierInbound,
  type JsonObject,
  type MediaEncoder,
} from "./carrier.js";

/** Every stream's media encoder: a frame is the audio itself, a binary message of its own. */
const BINARY_MEDIA: MediaEncoder = { encode: (payload) => new Uint8Array(payload) };

/** The rate in `audio/l16;rate=16000`; undefined when the content type is not L16. */
function l16Rate(contentType: string): number | undefined {
  const match = /^audio\/l16\s*(?:;\s*rate\s*=\s*(\d{4,6}))?\s*$/i.exec(contentType);
  if (match === null) return undefined;
  return match[1] === undefined ? 16000 : Number(match[1]);
}

function decodeConnected(frame: JsonObject): CarrierInbound {
  const contentType = frame["content-type"];
  const sampleRate = contentType === undefined ? 16000 : typeof contentType === "string" ? l16Rate(contentType) : undefined;
  if (sampleRate === undefined || sampleRate === 0) return ignored(`unsupported content-type ${label(contentType)}`);
  // The NCCO `headers` come back as top-level keys.
  const customParameters = Object.fromEntries(
    Object.entries(frame).filter(
      (e): e is [string, string] => e[0] !== "event" && e[0] !== "content-type" && typeof e[1] === "string",
    ),
  );
  const streamId = str(frame, "uuid") ?? "";
  return { kind: "start", streamId, customParameters, encoding: "l16", sampleRate };
}

function decodeText(frame: JsonObject): CarrierInbound {
  const event = frame["event"];
  switch (event) {
    case "websocket:connected":
      return decodeConnected(frame);
    case "websocket:dtmf":
      return dtmfDigit(frame["digit"]);
    case "websocket:cleared":
      return ignored("websocket:cleared");
    default:
      return ignored(typeof event === "string" ? `unknown event ${event.slice(0, 64)}` : "frame without an event");
  }
}

function decodeBinary(frame: string | Uint8Array): CarrierInbound {
  if (!(frame instanceof Uint8Array)) return ignored("binary frame is not bytes");
  if (frame.byteLength === 0) return ignored("empty audio frame");
  if (frame.byteLength > MAX_PAYLOAD_BYTES) return ignored("payload too large");
  if (frame.byteLength % 2 !== 0) return ignored("odd-length L16 frame");
  return { kind: "media", payload: new Uint8Array(frame) };
}

export const vonageCodec: CarrierCodec = {
  carrier: "vonage",
  /**
   * No marks: nothing reports what Vonage has played. Its `notify` command echoes
   * `websocket:notify`, but whether that waits for queued audio is not documented
   * (docs/vendors.md (Carriers)), so the bridge estimates playback in real time instead of
   * leaning on it.
   */
  marks: false,
  decode(frame, isBinary) {
    return safely(() => {
      if (isBinary) return decodeBinary(frame);
      const parsed = parseTextFrame(frame, false);
      return typeof parsed === "string" ? ignored(parsed) : decodeText(parsed);
    });
  },
  /** A binary frame; Vonage expects exactly 320 or 640 bytes (20 ms), so the caller frames the audio. */
  mediaEncoder() {
    return BINARY_MEDIA;
  },
  encodeMark() {
    return undefined;
  },
  encodeClear() {
    return JSON.stringify({ action: "clear" });
  },
  /** Exactly one 20 ms frame per message: 640 bytes at 16 kHz, 320 at 8 kHz (docs/vendors.md (Carriers)). */
  framing(_encoding, sampleRate) {
    const bytes = (sampleRate / 1000) * 2 * 20;
    return { multipleOf: bytes, minBytes: bytes, maxBytes: bytes };
  },
};
