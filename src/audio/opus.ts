/**
 * Opus for the browser protocol's `opus` codec: one Opus packet per 20 ms frame, mono.
 *
 * A thin wrapper over `@discordjs/opus` (libopus via a native addon). The addon is loaded lazily
 * with a dynamic import, on the first `loadOpus`, `createOpusCodec` or `opusAvailable` call, so
 * importing this module never fails: the rest of the gateway runs where the addon is not built,
 * and only a session that actually asks for Opus gets an error ("audio", fatal).
 *
 * PCM is 16-bit signed little-endian, mono, at the codec's sample rate: any of libopus's 8, 12,
 * 16, 24 or 48 kHz, whatever rate the packets were encoded at (libopus converts internally).
 * `encode` takes exactly one 20 ms frame (`frameSamples` samples; an Int16Array, or a Uint8Array
 * of PCM16 LE bytes) and returns one packet. `decode` returns the PCM16 LE bytes of one packet (normally 20 ms, but
 * Opus packets may carry 2.5–120 ms; the length is whatever the packet held).
 *
 * Corrupt packets: `decode` never throws for bad input. A packet libopus rejects (for instance an
 * empty one, or one whose framing violates RFC 6716 §3.4) decodes to an EMPTY Uint8Array; the
 * caller counts those (e.g. as dropped frames) and carries on. Opus has no checksum, so a garbled
 * packet that still parses decodes to noise and cannot be told apart here. Encoding a frame of
 * the wrong size is a caller bug and does throw (GatewayError "audio").
 *
 * One codec holds one encoder and one decoder with their own state: use one per stream direction
 * and feed it packets in order.
 */
import { GatewayError } from "../errors.js";

export type OpusSampleRate = 48000 | 24000 | 16000 | 12000 | 8000;

export const OPUS_SAMPLE_RATES: readonly OpusSampleRate[] = [48000, 24000, 16000, 12000, 8000];

/** Opus's full band: the rate it codes internally (RFC 6716 §2). */
export const OPUS_FULL_BAND_RATE: OpusSampleRate = 48000;

/** The browser protocol's frame: one packet per 20 ms. */
export const OPUS_FRAME_MS = 20;

export interface OpusCodecOptions {
  readonly sampleRate: OpusSampleRate;
  readonly channels: 1;
}

export interface OpusCodec {
  /** Encodes exactly one 20 ms frame (`frameSamples` PCM16 samples) into one Opus packet. */
  encode(pcm20ms: Int16Array | Uint8Array): Uint8Array;
  /** Decodes one packet to PCM16 LE bytes; an empty Uint8Array if the packet is corrupt. */
  decode(packet: Uint8Array): Uint8Array;
  /** Samples per 20 ms frame at this sample rate (e.g. 320 at 16 kHz, 960 at 48 kHz). */
  readonly frameSamples: number;
  readonly sampleRate: OpusSampleRate;
}

/** The part of @discordjs/opus's OpusEncoder this wrapper uses. */
interface NativeOpusEncoder {
  encode(buf: Buffer): Buffer;
  decode(buf: Buffer): Buffer;
}
type NativeOpusEncoderCtor = new (rate: number, channels: number) => NativeOpusEncoder;

let loading: Promise<NativeOpusEncoderCtor | Error> | undefined;

function loadNative(): Promise<NativeOpusEncoderCtor | Error> {
  loading ??= (async (): Promise<NativeOpusEncoderCtor | Error> => {
    try {
      // A CommonJS addon: Node exposes its exports as `default`; named exports may or may not be detected.
      const mod = (await import("@discordjs/opus")) as { default?: { OpusEncoder?: unknown }; OpusEncoder?: unknown };
      const ctor = mod.default?.OpusEncoder ?? mod.OpusEncoder;
      if (typeof ctor !== "function") return new Error("@discordjs/opus loaded but exports no OpusEncoder");
      return ctor as NativeOpusEncoderCtor;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  })();
  return loading;
}

/** Whether the native Opus addon loads here. Never throws; the answer is cached. */
export async function opusAvailable(): Promise<boolean> {
  return !((await loadNative()) instanceof Error);
}

function asBuffer(bytes: Uint8Array | Int16Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A plain Uint8Array over the same memory (copied if misaligned for Int16Array views). */
function asUint8(buf: Buffer): Uint8Array {
  if (buf.byteOffset % 2 === 0) return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  return Uint8Array.from(buf);
}

/** Whether libopus codes PCM at `rate` natively (RFC 6716 §2: it converts to and from its internal 48 kHz itself). */
export function isOpusRate(rate: number): rate is OpusSampleRate {
  return (OPUS_SAMPLE_RATES as readonly number[]).includes(rate);
}

/** Makes codecs synchronously, once the addon has loaded (`loadOpus`): a link picks its rates when the session declares them. */
export interface OpusCodecs {
  /** Throws GatewayError("audio", fatal) for an unsupported rate or channel count. */
  create(options: OpusCodecOptions): OpusCodec;
}

/** Loads the native addon (once). Rejects with GatewayError("audio", fatal) where it is not available. */
export async function loadOpus(): Promise<OpusCodecs> {
  const native = await loadNative();
  if (native instanceof Error) {
    throw new GatewayError("audio", `Opus is not available: @discordjs/opus did not load (${native.message}); use the pcm16 codec`, {
      fatal: true,
      cause: native,
    });
  }
  return { create: (options) => codecOf(native, options) };
}

/**
 * Creates an Opus encoder/decoder pair for 20 ms mono frames. Rejects with GatewayError("audio",
 * fatal) if the native addon is not available, or for an unsupported rate or channel count.
 */
export async function createOpusCodec(options: OpusCodecOptions): Promise<OpusCodec> {
  checkOptions(options);
  return (await loadOpus()).create(options);
}

function checkOptions({ sampleRate, channels }: OpusCodecOptions): void {
  if (!isOpusRate(sampleRate)) {
    throw new GatewayError("audio", `Opus does not support ${String(sampleRate)} Hz; use one of ${OPUS_SAMPLE_RATES.join(", ")}`, { fatal: true });
  }
  if (channels !== 1) throw new GatewayError("audio", `Opus codec here is mono only (got ${String(channels)} channels)`, { fatal: true });
}

function codecOf(native: NativeOpusEncoderCtor, options: OpusCodecOptions): OpusCodec {
  checkOptions(options);
  const { sampleRate, channels } = options;
  const codec = new native(sampleRate, channels);
  const frameSamples = (sampleRate * OPUS_FRAME_MS) / 1000;
  const frameBytes = frameSamples * 2;

  return {
    frameSamples,
    sampleRate,
    encode(pcm20ms: Int16Array | Uint8Array): Uint8Array {
      if (pcm20ms.byteLength !== frameBytes) {
        const got = pcm20ms instanceof Int16Array ? `${pcm20ms.length} samples` : `${pcm20ms.byteLength} bytes`;
        throw new GatewayError("audio", `Opus encode needs one 20 ms frame: ${frameSamples} samples (${frameBytes} bytes) at ${sampleRate} Hz, got ${got}`);
      }
      try {
        return asUint8(codec.encode(asBuffer(pcm20ms)));
      } catch (error) {
        throw new GatewayError("audio", `Opus encode failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    },
    decode(packet: Uint8Array): Uint8Array {
      // libopus treats an empty packet as "lost" and would synthesize concealment audio; here it is invalid.
      if (packet.byteLength === 0) return new Uint8Array(0);
      try {
        return asUint8(codec.decode(asBuffer(packet)));
      } catch {
        return new Uint8Array(0);
      }
    },
  };
}
