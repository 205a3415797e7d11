import type { Logger } from "../../log.js";
import type { ProviderDescriptor } from "../../manifest/index.js";
import { adapterFor, type AdapterTable } from "../../providers/registry.js";
import type { S2sProvider } from "../s2s-port.js";
import { geminiLive } from "./gemini-live.js";
import { openAiRealtime } from "./openai-realtime.js";

type Env = Readonly<Record<string, string | undefined>>;

/** What an s2s adapter is made from: its descriptor, the keys, and its runtime (the log). */
const S2S: AdapterTable<ProviderDescriptor, [Env, { log?: Logger }], S2sProvider> = {
  "openai-realtime": (descriptor, env, runtime) => openAiRealtime(descriptor, env, runtime),
  "gemini-live": (descriptor, env, runtime) => geminiLive(descriptor, env, runtime),
};

/** The speech-to-speech provider for a descriptor. A missing key throws MissingKeyError naming the variable. */
export function resolveS2s(descriptor: ProviderDescriptor, env: Env, log?: Logger): S2sProvider {
  return adapterFor("s2s", "speech-to-speech", S2S, descriptor, env, log === undefined ? {} : { log });
}
