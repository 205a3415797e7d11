import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { TtsProvider } from "../../tts-port.js";
import type { Env } from "../keys.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { adapterFor, type AdapterTable } from "../../../providers/registry.js";
import { cartesiaTts } from "./cartesia.js";
import { elevenLabsTts } from "./elevenlabs.js";
import { localTts } from "./local.js";
import { openAiTts } from "./openai.js";

/** What a TTS adapter is made from: its descriptor, the keys, and its runtime (the log). */
const TTS: AdapterTable<ProviderDescriptor, [Env, { log?: ProviderLog }], TtsProvider> = {
  cartesia: (descriptor, env, runtime) => cartesiaTts(descriptor, env, runtime),
  elevenlabs: (descriptor, env, runtime) => elevenLabsTts(descriptor, env, runtime),
  openai: (descriptor, env, runtime) => openAiTts(descriptor, env, runtime),
  local: (descriptor, _env, runtime) => localTts(descriptor, runtime),
};

/** The TTS provider for a descriptor. A missing key throws MissingKeyError naming the variable. */
export function resolveTts(descriptor: ProviderDescriptor, env: Env, log?: ProviderLog): TtsProvider {
  return adapterFor("tts", "TTS", TTS, descriptor, env, log === undefined ? {} : { log });
}
