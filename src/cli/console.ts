/**
 * `switchboard console <agent>`: talk to an agent from the terminal. Typed lines are `user_text`
 * turns; the reply streams as it is written, with tool calls, tool lines and results, and a latency
 * line per turn. `--voice` adds the machine's microphone and speaker (sox `rec`/`play`, else ALSA
 * `arecord`/`aplay`, as child processes).
 *
 * Design: like `call`, the console starts the agent's gateway in-process on 127.0.0.1:0 and is a
 * protocol client of it (`connectAgent`, src/server/call.ts). That costs a loopback socket, and
 * buys exactly what a page gets — the offline choice, provider resolution, the audio edge and the
 * pacer, the same events (`--json` prints them as a client receives them) — with no second way of
 * building a session to keep in step with the gateway.
 */
import process from "node:process";
import { createInterface, type Interface } from "node:readline";
import type { AgentConnection } from "../server/call.js";
import type { ServerEvent } from "../transport/protocol.js";
import { describe, EXIT, fail, flag, type Command, type Values } from "./command.js";
import { findAudioTools, Microphone, Speaker, voiceRefusal, type AudioTool } from "./console-audio.js";
import { loadDotEnv, noteDotEnv } from "./env.js";
import { describeEvent } from "./events.js";
import { TranscriptWriter, TurnTracker } from "./console-transcript.js";
import { spread } from "../spread.js";

/** How long the greeting may take (ms; a pipeline greeting ends once its audio has played). */
const GREETING_MS = 30_000;

async function runConsole(agentPath: string, values: Values): Promise<number> {
  const flags = { json: flag(values, "json"), offline: flag(values, "offline"), voice: flag(values, "voice") };
  let tools: { readonly recorder: AudioTool; readonly player: AudioTool } | undefined;
  if (flags.voice) {
    const found = findAudioTools(process.env.PATH);
    const { recorder, player } = found;
    if (recorder === undefined || player === undefined) return fail(voiceRefusal(found) ?? "");
    tools = { recorder, player };
  }
  let agent;
  try {
    noteDotEnv(loadDotEnv(agentPath));
    agent = await (await import("../server/loader.js")).loadAgent(agentPath, { warn: () => {} });
  } catch (error) {
    return fail(describe(error));
  }
  if (tools !== undefined && agent.config.mode === "text") {
    return fail(`--voice needs a voice agent: ${agent.config.name} is a text agent (an llm, no stt/tts or s2s). Leave out --voice to type to it.`);
  }

  const out = process.stdout;
  const tty = process.stdin.isTTY && out.isTTY;
  /** A prompt is on screen (TTY only): output first clears it, and the prompt comes back once the output is done. */
  let prompting = false;
  const write = (text: string): void => {
    if (prompting) {
      out.write("\r\x1b[K");
      prompting = false;
    }
    out.write(text);
  };
  const transcript = new TranscriptWriter(write);
  const turns = new TurnTracker((line) => {
    if (!flags.json) transcript.line(line);
  });
  /** Typed lines already on screen after the prompt (TTY): their `you:` line is not repeated. */
  const echoed: string[] = [];
  let rl: Interface | undefined;
  let idle = false;
  const prompt = (): void => {
    if (rl === undefined || !tty || !idle || transcript.streaming || prompting) return;
    rl.prompt(true);
    prompting = true;
  };
  let connection: AgentConnection | undefined;
  let deviceFailure: string | undefined;
  const stopDevices = (why: string): void => {
    deviceFailure ??= why;
    void connection?.close();
  };
  const speaker = tools === undefined ? undefined : new Speaker(tools.player, stopDevices);

  const show = (event: ServerEvent): void => {
    // `reset` cancels first, replying or not: "[interrupted]" only when something was.
    const busy = transcript.replying || turns.pending;
    turns.event(event);
    // Barge-in, cancel, reset: what the player still holds is not to be heard.
    if (event.type === "reply.cancelled" || event.type === "session.reset") speaker?.flush();
    if (flags.json) {
      out.write(`${JSON.stringify(event)}\n`);
      return;
    }
    switch (event.type) {
      case "agent-transcript.updated":
        transcript.snapshot(event.text);
        return;
      case "agent-transcript.committed":
        // Streamed already; shown whole only if no snapshot came.
        if (!transcript.replying) transcript.line(`agent: ${event.text}`);
        transcript.endReply();
        break;
      case "reply.completed":
        transcript.endReply();
        break;
      case "tool.message":
        transcript.toolLine(event.text);
        transcript.line(describeEvent(event) ?? "");
        break;
      case "user-transcript.committed": {
        const at = echoed.indexOf(event.text);
        if (at >= 0) echoed.splice(at, 1);
        else transcript.line(describeEvent(event) ?? "");
        break;
      }
      case "error.reported":
        if (event.fatal) return; // it ends the console: said once, on stderr
        transcript.line(describeEvent(event) ?? "");
        break;
      case "reply.cancelled":
      case "session.reset":
        transcript.endReply();
        if (event.type === "session.reset" || busy) transcript.line(describeEvent(event) ?? "");
        break;
      default: {
        const line = describeEvent(event);
        if (line !== undefined) transcript.line(line);
      }
    }
    prompt();
  };

  const { connectAgent } = await import("../server/call.js");
  try {
    connection = await connectAgent(agent, {
      offline: flags.offline ? true : "auto",
      onEvent: show,
      // A voice console has no other way to be heard: no recognizer is a refusal, not a typed fallback.
      requireStt: tools !== undefined,
      onAudio: (pcm) => speaker?.write(pcm),
    });
  } catch (error) {
    speaker?.close();
    return fail(describe(error));
  }
  const session = connection;
  let leaving = false;
  let ended: { readonly code: number; readonly reason: string; readonly byUs: boolean } | undefined;
  const sessionEnded = session.closed.then((close) => {
    ended = spread(close, { byUs: leaving });
    turns.end();
    rl?.close();
  });

  if (!flags.json) {
    const { config, offline } = session;
    const missing = offline.missing.map((m) => m.split(" ")[0]).join(", ");
    const stack = offline.on ? `, offline stack${missing === "" ? "" : ` (missing ${missing})`}` : "";
    write(`${config.name}: ${config.mode} mode${stack}. Type a message and press Enter; /reset starts over, /quit or Ctrl-D leaves.\n`);
    if (tools !== undefined) write(`Voice: ${tools.recorder.command} → the agent → ${tools.player.command}. There is no echo cancellation: use headphones, or the agent hears itself.\n`);
  }
  const microphone = tools === undefined ? undefined : new Microphone(tools.recorder);
  try {
    if (session.config.greeting !== "") await session.waitFor((e) => e.type === "reply.completed" || e.type === "reply.cancelled", GREETING_MS);
    // The mic opens after the greeting, so the greeting is not barged in on by the room (or by itself).
    if (microphone !== undefined && session.open && session.fatal === undefined) {
      await microphone.start((frame) => session.sendAudio(frame), stopDevices).catch((error: unknown) => stopDevices(describe(error)));
    }
    if (session.open && session.fatal === undefined && deviceFailure === undefined) {
      // Created now: stdin waits, paused, until then; its iterator at once, so no line is missed.
      const lines = createInterface({ input: process.stdin, ...(tty ? { output: out, prompt: "> " } : {}), terminal: tty });
      rl = lines;
      const iterator = lines[Symbol.asyncIterator]();
      // Ctrl-C: interrupts the reply in flight; at an idle prompt, leaves.
      lines.on("SIGINT", () => {
        if (turns.pending || transcript.streaming) session.send({ type: "cancel" });
        else lines.close();
      });
      idle = true;
      prompt();
      for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
        prompting = false;
        // Lines read before the session ended (end_call, idle timeout) have no one to go to.
        if (!session.open) break;
        const text = String(next.value).trim();
        if (text === "") {
          prompt();
          continue;
        }
        if (text === "/quit" || text === "/exit") break;
        idle = false;
        if (text === "/reset") {
          const before = session.events.length;
          const greets = session.config.greeting !== "";
          session.send({ type: "reset" });
          await session.waitFor((e) => session.events.indexOf(e) >= before && (greets ? e.type === "reply.completed" : e.type === "session.reset"), GREETING_MS);
        } else if (text.startsWith("/")) {
          transcript.line(`(${text} is not a console command: /reset starts over, /quit leaves)`);
        } else {
          if (tty) echoed.push(text);
          const settled = turns.typed(text);
          session.send({ type: "user_text", text });
          await settled;
        }
        idle = true;
        prompt();
      }
    }
  } finally {
    idle = false;
    leaving = true;
    microphone?.stop();
    speaker?.close();
    rl?.close();
    await session.close();
    await sessionEnded;
    transcript.endReply();
    // A piped stdin may still be open (the session ended first): let go of it, so the process can exit.
    process.stdin.destroy();
  }
  const fatal = session.fatal;
  if (fatal !== undefined) return fail(`the session failed: ${fatal.code}: ${fatal.message}`);
  if (deviceFailure !== undefined) return fail(`${deviceFailure}; leave out --voice to type instead.`);
  if (ended !== undefined && !ended.byUs) {
    if (ended.code !== 1000) return fail(`the session ended (close ${ended.code}${ended.reason === "" ? "" : `: ${ended.reason}`}).`);
    if (!flags.json) write(`(the session ended${ended.reason === "" ? "" : `: ${ended.reason}`})\n`);
  }
  return EXIT.ok;
}

export const consoleCommand: Command = {
  name: "console",
  args: "<agent>",
  summary: "talk to an agent from the terminal: typed (or spoken) turns, the streamed reply, tool calls, latency per turn",
  optionHelp: `      --voice                 speak and listen through the microphone and speaker (sox rec/play, or ALSA arecord/aplay)
      --json                  print events as JSON lines
      --offline               force the offline stack
`,
  options: { voice: { type: "boolean" }, json: { type: "boolean" }, offline: { type: "boolean" } },
  run: ([target], values) => (target === undefined ? Promise.resolve(fail("console needs an agent (a directory or an agent file).", EXIT.usage)) : runConsole(target, values)),
};
