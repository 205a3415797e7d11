/**
 * Reading an agent's waiting sounds (docs/config.md `waitingAudio`, docs/telephony.md "Audio
 * while waiting"): each file, relative to the agent directory, read once when the agent loads
 * (bounded before it is read) and decoded by `audio/waiting-sound.ts`. A missing, oversized or
 * unsupported file is refused in one ConfigError naming the field and the fix.
 */
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { decodeWaitingSound, MAX_WAITING_SOUND_BYTES, type WaitingSound, type WaitingSounds } from "../audio/waiting-sound.js";
import { messageOf } from "../errors.js";
import { ConfigError, DEFAULTS, type AgentConfig } from "../manifest/index.js";
import { spread } from "../spread.js";

type Issue = { readonly path: string; readonly message: string };

async function soundAt(dir: string, file: string, path: string, issues: Issue[]): Promise<WaitingSound | undefined> {
  const full = resolve(dir, file);
  const info = await stat(full).catch(() => undefined);
  if (info === undefined || !info.isFile()) {
    issues.push({ path, message: `${file}: no such file in the agent directory; put a PCM16 WAV there, or remove the field.` });
    return undefined;
  }
  if (info.size > MAX_WAITING_SOUND_BYTES) {
    issues.push({ path, message: `${file}: is ${info.size} bytes; a waiting sound may be at most ${MAX_WAITING_SOUND_BYTES} bytes (use a shorter loop).` });
    return undefined;
  }
  try {
    return decodeWaitingSound(new Uint8Array(await readFile(full)));
  } catch (error) {
    issues.push({ path, message: `${file}: ${messageOf(error).replace(/^readWav: /, "")}.` });
    return undefined;
  }
}

/**
 * The agent's `waitingAudio`, its files read from `dir` and decoded, with every default written
 * in; undefined when the agent has none. Throws ConfigError(`Invalid agent "<name>"`) listing each
 * file it cannot use.
 */
export async function loadWaitingSounds(dir: string, config: AgentConfig): Promise<WaitingSounds | undefined> {
  const waiting = config.waitingAudio;
  if (waiting === undefined) return undefined;
  const issues: Issue[] = [];
  const defaults = DEFAULTS.waitingAudio;
  const thinking = waiting.thinking === undefined ? undefined : await soundAt(dir, waiting.thinking.file, "waitingAudio.thinking.file", issues);
  const ambience = waiting.ambience === undefined ? undefined : await soundAt(dir, waiting.ambience.file, "waitingAudio.ambience.file", issues);
  if (issues.length > 0) throw new ConfigError(`Invalid agent "${config.name}"`, issues);
  return spread(thinking === undefined || waiting.thinking === undefined
      ? {}
      : { thinking: { sound: thinking, gain: waiting.thinking.volume ?? defaults.thinkingVolume, afterMs: waiting.thinking.afterMs ?? defaults.thinkingAfterMs } }, ambience === undefined || waiting.ambience === undefined ? {} : { ambience: { sound: ambience, gain: waiting.ambience.volume ?? defaults.ambienceVolume } });
}
