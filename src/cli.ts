#!/usr/bin/env node
/**
 * `switchboard <command>`: a thin shell over the library. Parses flags, dispatches to the
 * command's module under `src/cli/`, prints what happened. Exit codes: 0 done, 1 the command
 * failed, 2 it was used wrongly (README "Exit codes").
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import process from "node:process";
import { callCommand } from "./cli/call.js";
import { checkCommand } from "./cli/check.js";
import { describe, EXIT, fail, type Command } from "./cli/command.js";
import { consoleCommand } from "./cli/console.js";
import { devCommand } from "./cli/dev.js";
import { initCommand } from "./cli/init.js";
import { serveCommand, startCommand } from "./cli/serve.js";

const COMMANDS: readonly Command[] = [serveCommand, startCommand, devCommand, checkCommand, callCommand, consoleCommand, initCommand];

function usageLine(command: Command): string {
  return `${command.name}${command.args === "" ? "" : ` ${command.args}`}`;
}

/** The overview: every command with its options. */
function usage(): string {
  const lines = ["Usage: switchboard <command> [options]", "", "Commands:"];
  let previous = "";
  for (const command of COMMANDS) {
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
    process.stdout.write(about === undefined ? usage() : commandUsage(about));
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
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
