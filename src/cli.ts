#!/usr/bin/env node
/**
 * `switchboard <command>`: a thin shell over the library. Parses flags, dispatches to the
 * command's module under `src/cli/`, prints what happened. Exit codes: 0 done, 1 the command
 * failed, 2 it was used wrongly (README "Exit codes").
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import process from "node:process";
import { describe, EXIT, fail, type Command } from "./cli/command.js";

/**
 * Each command's module, loaded when that command runs (or help lists them all): `serve` does not
 * carry the console's audio, `init`'s templates or `check`'s reports in the memory of an idle
 * gateway (docs/benchmarks.md, "Idle memory"). In the order help lists them.
 */
const COMMANDS: readonly { readonly name: string; readonly load: () => Promise<Command> }[] = [
  { name: "serve", load: async () => (await import("./cli/serve.js")).serveCommand },
  { name: "start", load: async () => (await import("./cli/serve.js")).startCommand },
  { name: "dev", load: async () => (await import("./cli/dev.js")).devCommand },
  { name: "check", load: async () => (await import("./cli/check.js")).checkCommand },
  { name: "call", load: async () => (await import("./cli/call.js")).callCommand },
  { name: "console", load: async () => (await import("./cli/console.js")).consoleCommand },
  { name: "init", load: async () => (await import("./cli/init.js")).initCommand },
];

function usageLine(command: Command): string {
  return `${command.name}${command.args === "" ? "" : ` ${command.args}`}`;
}

/** The overview: every command with its options. */
function usage(commands: readonly Command[]): string {
  const lines = ["Usage: switchboard <command> [options]", "", "Commands:"];
  let previous = "";
  for (const command of commands) {
    const same = command.optionHelp !== "" && command.optionHelp === previous;
    lines.push(`  ${usageLine(command).padEnd(28)}${command.summary}${same ? " (options as above)" : ""}`);
    if (command.optionHelp !== "" && !same) lines.push(command.optionHelp.trimEnd());
    previous = command.optionHelp;
  }
  lines.push(`  ${"help [command]".padEnd(28)}show this message, or one command's`, "", "Options: --help (-h) on any command, --version (-v).", "");
  return lines.join("\n");
}

/** One command's help. */
function commandUsage(command: Command): string {
  return `Usage: switchboard ${usageLine(command)}${command.optionHelp === "" ? "" : " [options]"}\n\n${command.summary}\n${command.optionHelp === "" ? "" : `\nOptions:\n${command.optionHelp}`}`;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string };
  return `switchboard ${pkg.version ?? "unknown"} (node ${process.version})\n`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [name = "help", ...rest] = argv;
  if (name === "--version" || name === "-v" || name === "version") {
    process.stdout.write(version());
    return EXIT.ok;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    const about = COMMANDS.find((c) => c.name === rest[0]);
    process.stdout.write(about === undefined ? usage(await Promise.all(COMMANDS.map((c) => c.load()))) : commandUsage(await about.load()));
    return EXIT.ok;
  }
  const command = await COMMANDS.find((c) => c.name === name)?.load();
  if (command === undefined) return fail(`unknown command "${name}"; the commands are ${COMMANDS.map((c) => c.name).join(", ")} (switchboard --help).`, EXIT.usage);
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(commandUsage(command));
    return EXIT.ok;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], allowPositionals: true, options: command.options });
  } catch (error) {
    return fail(`${describe(error)}\n\n${commandUsage(command)}`, EXIT.usage);
  }
  return command.run(parsed.positionals, parsed.values);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`switchboard: ${describe(error)}\n`);
    process.exitCode = EXIT.failed;
  },
);
