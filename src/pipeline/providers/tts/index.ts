import { GatewayError } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { TtsProvider } from "../../tts-port.js";
import type { Env } from "../keys.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { cartesiaTts } from "./cartesia.js";
import { elevenLabsTts } from "./elevenlabs.js";
import { localTts } from "./local.js";
import { openAiTts } from "./openai.js";

/** The TTS provider for a descriptor. A missing key throws MissingKeyError naming the variable. */
export function resolveTts(descriptor: ProviderDescriptor, env: Env, log?: ProviderLog): TtsProvider {
  const options = log === undefined ? {} : { log };
  switch (descriptor.kind) {
    case "cartesia":
      return cartesiaTts(descriptor, env, options);
    case "elevenlabs":
      return elevenLabsTts(descriptor, env, options);
    case "openai":
      return openAiTts(descriptor, env, options);
    case "local":
      return localTts(descriptor, options);
    default:
      throw new GatewayError("tts", `no TTS provider of kind "${descriptor.kind}" is available in this gateway (cartesia, elevenlabs, openai, local).`, { fatal: true });
  }
}
