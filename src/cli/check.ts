/** `switchboard check <agent>`: validate an agent and list its tools, providers and keys. */
import process from "node:process";
import { describe, fail, EXIT, type Command } from "./command.js";

async function check(path: string): Promise<number> {
  let agent;
  try {
    agent = await (await import("../server/loader.js")).loadAgent(path, { warn: (message) => process.stderr.write(`warning: ${message}\n`) });
  } catch (error) {
    return fail(describe(error));
  }
  const { config, def } = agent;
  const out: string[] = [`${config.name}: ${config.mode} agent`];
  out.push("tools:");
  const builtins = config.builtinTools ?? [];
  for (const [name, tool] of Object.entries(def.tools)) {
    const kinds = Object.keys(tool.messages ?? {});
    out.push(`  ${name.padEnd(18)} tools/${name}${kinds.length > 0 ? `  messages: ${kinds.join(", ")}` : ""}${tool.gate === undefined ? "" : "  (gated)"}`);
  }
  for (const name of builtins) out.push(`  ${name.padEnd(18)} builtin`);
  for (const key of Object.keys(config.mcpServers ?? {})) out.push(`  mcp_${key}_*${" ".repeat(Math.max(1, 13 - key.length))}mcp server "${key}" (listed at session start)`);
  out.push("providers:");
  let missing = 0;
  for (const slot of ["stt", "llm", "tts", "s2s"] as const) {
    const descriptor = config[slot];
    if (descriptor === undefined) continue;
    const variable = (await import("../server/offline.js")).missingKey(descriptor, process.env);
    out.push(`  ${slot.padEnd(4)} ${descriptor.kind}${variable === undefined ? "" : `  — needs ${variable}`}`);
    if (variable !== undefined) missing += 1;
  }
  for (const variable of config.requiredEnv ?? []) {
    if ((process.env[variable] ?? "") === "") {
      out.push(`  requiredEnv ${variable} — missing`);
      missing += 1;
    }
  }
  if (missing > 0) out.push(`${missing} missing; serve falls back to the offline stack for missing provider keys.`);
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}


export const checkCommand: Command = {
  name: "check",
  args: "<agent-dir-or-file>",
  summary: "validate an agent: mode, tools (source, messages), providers and keys",
  optionHelp: "",
  options: {},
  run: ([target]) => (target === undefined ? Promise.resolve(fail("check needs an agent directory or file.", EXIT.usage)) : check(target)),
};
