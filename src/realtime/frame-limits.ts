/**
 * The sizes `/v1/realtime` reads, apart from the parser (client-events.ts) so the server can size
 * its socket server without importing the front door before a Realtime client connects.
 */

/** The largest text frame `/v1/realtime` reads (bytes): room for one `input_audio_buffer.append` of `MAX_APPEND_AUDIO_BYTES` as base64, plus its JSON. */
export const MAX_REALTIME_FRAME_BYTES = 1024 * 1024;
/**
 * The most audio one `input_audio_buffer.append` may carry (bytes of PCM16 after base64 decoding):
 * 512 KiB is about 10.9 s at 24 kHz. Realtime clients send 20–100 ms a frame; OpenAI's own cap
 * (15 MiB) is far above what one socket should hand the gateway at once.
 */
export const MAX_APPEND_AUDIO_BYTES = 512 * 1024;

