/**
 * Voice sessions resample: the links (audio-edge, carrier-audio), the call recorder, the local TTS
 * and VAD. The voice modes import this module (`pipeline-mode.ts`, `s2s-mode.ts`), so the Speex
 * resampler (WASM) has loaded, or failed over to the polyphase filter, before a voice session
 * opens; a gateway that runs only text sessions never loads it (about 5 MiB of RSS, issue 23).
 */
import { loadResampler, type ResamplerEngine } from "../audio/resample.js";

export const VOICE_RESAMPLER: ResamplerEngine = await loadResampler();
