import { GatewayError } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { ProviderDescriptor } from "../../manifest/index.js";
import type { S2sProvider } from "../s2s-port.js";
import { geminiLive } from "./gemini-live.js";
import { openAiRealtime } from "./openai-realtime.js";

/** The speech-to-speech provider for a descriptor. A missing key throws MissingKeyError naming the variable. */
export function resolveS2s(descriptor: ProviderDescriptor, env: Readonly<Record<string, string | undefined>>, log?: Logger): S2sProvider {
  const options = log === undefined ? {} : { log };
  switch (descriptor.kind) {
    case "openai-realtime":
      return openAiRealtime(descriptor, env, options);
    case "gemini-live":
      return geminiLive(descriptor, env, options);
    default:
      throw new GatewayError("s2s", `no speech-to-speech provider of kind "${descriptor.kind}" is available in this gateway (openai-realtime, gemini-live).`, { fatal: true });
  }
}
