#!/usr/bin/env node
/**
 * `switchboard <command>`: a thin shell over the library. Parses flags, calls the library,
 * prints what happened. `start` serves the bundled example until the gateway lands.
 */
import process from "node:process";

const USAGE = `Usage: switchboard <command>

Commands:
  start                 serve the example agent (no gateway yet in this version)
  help                  show this message
`;

function main(argv: readonly string[]): number {
  const [command = "help"] = argv;
  switch (command) {
    case "start":
    case "serve":
      process.stdout.write("switchboard: no gateway yet — the manifest layer is in place; the server arrives with the gateway issue.\n");
      return 0;
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`switchboard: unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
