import { GatewayError } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import type { SttProvider } from "../../stt-port.js";
import type { Env } from "../keys.js";
import type { ProviderLog } from "../../../providers/provider-log.js";
import { assemblyAiStt } from "./assemblyai.js";
import { deepgramStt } from "./deepgram.js";
import { localStt } from "./local.js";

/**
 * The local recognizer's binary when the descriptor names none (default `pocketsphinx_continuous`
 * on PATH): a pocketsphinx outside PATH, or — in tests — a path that does not exist, to see what a
 * machine without pocketsphinx does.
 */
export const POCKETSPHINX_ENV = "SWITCHBOARD_POCKETSPHINX";

/** The STT provider for a descriptor. A missing key throws MissingKeyError naming the variable. */
export function resolveStt(descriptor: ProviderDescriptor, env: Env, log?: ProviderLog): SttProvider {
  const runtime = log === undefined ? {} : { log };
  switch (descriptor.kind) {
    case "deepgram":
      return deepgramStt(descriptor, env, runtime);
    case "assemblyai":
      return assemblyAiStt(descriptor, env, runtime);
    case "local": {
      const binary = env[POCKETSPHINX_ENV];
      return localStt(descriptor, { ...runtime, ...(binary === undefined || binary === "" ? {} : { binary }) });
    }
    default:
      throw new GatewayError("stt", `no STT provider of kind "${descriptor.kind}" is available in this gateway (deepgram, assemblyai, local).`, { fatal: true });
  }
}
