import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { SttProvider } from "../../stt-port.js";
import type { Env } from "../keys.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { adapterFor, type AdapterTable } from "../../../providers/registry.js";
import { assemblyAiStt } from "./assemblyai.js";
import { deepgramStt } from "./deepgram.js";
import { localStt } from "./local.js";
import { spread } from "../../../spread.js";

/**
 * The local recognizer's binary when the descriptor names none (default `pocketsphinx_continuous`
 * on PATH): a pocketsphinx outside PATH, or — in tests — a path that does not exist, to see what a
 * machine without pocketsphinx does.
 */
export const POCKETSPHINX_ENV = "SWITCHBOARD_POCKETSPHINX";

/** What an STT adapter is made from: its descriptor, the keys, and its runtime (the log). */
const STT: AdapterTable<ProviderDescriptor, [Env, { log?: ProviderLog }], SttProvider> = {
  deepgram: (descriptor, env, runtime) => deepgramStt(descriptor, env, runtime),
  assemblyai: (descriptor, env, runtime) => assemblyAiStt(descriptor, env, runtime),
  local: (descriptor, env, runtime) => {
    const binary = env[POCKETSPHINX_ENV];
    return localStt(descriptor, spread(runtime, binary === undefined || binary === "" ? {} : { binary }));
  },
};

/** The STT provider for a descriptor. A missing key throws MissingKeyError naming the variable. */
export function resolveStt(descriptor: ProviderDescriptor, env: Env, log?: ProviderLog): SttProvider {
  return adapterFor("stt", "STT", STT, descriptor, env, log === undefined ? {} : { log });
}
