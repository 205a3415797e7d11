/** `switchboard call <agent> <input.wav>`: one session from a recording; prints the conversation. */
import { readFile, writeFile } from "node:fs/promises";
import process from "node:process";
import { readWav, writeWav } from "../audio/wav.js";
import type { ServerEvent } from "../transport/protocol.js";
import { describe, EXIT, fail, flag, text, type Command, type Values } from "./command.js";
import { loadDotEnv, noteDotEnv } from "./env.js";
import { describeEvent } from "./events.js";

async function call(agentPath: string, input: string, values: Values): Promise<number> {
  const flags = { out: text(values, "out"), json: flag(values, "json"), offline: flag(values, "offline"), timeout: text(values, "timeout") };
  const timeoutMs = flags.timeout === undefined ? 60_000 : Number(flags.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) return fail(`--timeout must be a positive number of ms (got ${flags.timeout}).`, EXIT.usage);
  let agent;
  let recording;
  try {
    noteDotEnv(loadDotEnv(agentPath));
    agent = await (await import("../server/loader.js")).loadAgent(agentPath, { warn: () => {} });
    recording = readWav(new Uint8Array(await readFile(input)));
  } catch (error) {
    return fail(describe(error));
  }
  const print = (event: ServerEvent): void => {
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(event)}\n`);
      return;
    }
    // A fatal error ends the call: it goes to stderr below, once.
    if (event.type === "error.reported" && event.fatal) return;
    const line = describeEvent(event);
    if (line !== undefined) process.stdout.write(`${line}\n`);
  };
  const [{ callAgent }, { PLAYBACK_SAMPLE_RATE }] = await Promise.all([import("../server/call.js"), import("../audio/rates.js")]);
  const result = await callAgent(agent, recording, { offline: flags.offline ? true : "auto", onEvent: print, timeoutMs });
  if (flags.out !== undefined) await writeFile(flags.out, writeWav(result.audio, PLAYBACK_SAMPLE_RATE));
  // E.g. no pocketsphinx: "the local STT needs pocketsphinx (…); install it with: … (or set DEEPGRAM_API_KEY to use deepgram)".
  if (result.fatal !== undefined) return fail(`the session failed: ${result.fatal.code}: ${result.fatal.message}`);
  if (!result.answered) {
    process.stderr.write("switchboard: no speech was recognized in the recording.\n");
    return 2;
  }
  return 0;
}


export const callCommand: Command = {
  name: "call",
  args: "<agent> <input.wav>",
  summary: "one session from a recording; prints the conversation",
  optionHelp: `      --out <reply.wav>       write the agent's audio
      --json                  print events as JSON lines
      --offline               force the offline stack
      --timeout <ms>          how long to wait for the reply (default 60000)
`,
  options: { out: { type: "string" }, json: { type: "boolean" }, offline: { type: "boolean" }, timeout: { type: "string" } },
  run: ([target, input], values) =>
    target === undefined || input === undefined ? Promise.resolve(fail("call needs an agent and a WAV file.", EXIT.usage)) : call(target, input, values),
};
