import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, type ConfigIssue } from "../../../src/manifest/index.js";
import { loadAgent } from "../../../src/server/loader.js";
import { throwingToolSource } from "../../helpers/throwing-tool.js";

const MANIFEST = JSON.stringify(new URL("../../../src/manifest/index.ts", import.meta.url).href);
const TEXT_AGENT = `import { agent } from ${MANIFEST};\nexport default agent({ name: "t", mode: "text", llm: { kind: "scripted", options: {} } });\n`;

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** An agent directory (an ES module scope) with these files (path → source); agent.ts defaults to a scripted text agent. */
async function agentDir(files: Readonly<Record<string, string>>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "switchboard-loader-"));
  dirs.push(dir);
  for (const [path, source] of Object.entries({ "package.json": '{ "type": "module" }\n', "agent.ts": TEXT_AGENT, ...files })) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), source);
  }
  return dir;
}

/** The ConfigError loadAgent throws, and its issues. */
async function refusal(dir: string): Promise<{ error: ConfigError; issues: ConfigIssue[] }> {
  const error = await loadAgent(dir, { warn: () => undefined }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return { error: error as ConfigError, issues: (error as ConfigError).issues.map((issue) => ({ ...issue })) };
}

describe("loadAgent: a file that throws while it loads is named, with the line in the author's source", () => {
  it("a runtime error at a tool's top level: tools/<file>:line:column (the .ts line, past erased types) and the message", async () => {
    const dir = await agentDir({
      "tools/lookup.ts": throwingToolSource(MANIFEST),
    });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([{ path: "tools/lookup.ts:9:32", message: "Cannot read properties of undefined (reading 'description')" }]);
  });

  it("a tool() definition error names the tool file and the call's line", async () => {
    const dir = await agentDir({
      "tools/bad_def.ts": `import { tool } from ${MANIFEST};\n\ntype Unused = string;\n\nexport default tool({ description: "", execute: () => "x" });\n`,
    });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([{ path: "tools/bad_def.ts:5:16", message: expect.stringMatching(/^tool\(\): `description` must be a non-empty string/) as string }]);
  });

  it("a helper module of the agent that throws is named, with the file that imported it", async () => {
    const dir = await agentDir({
      "lib/db.ts": "type Row = { id: string };\nconst rows: Row[] = [];\nexport const first = rows[0]!.id;\n",
      "tools/uses_db.ts": `import { tool } from ${MANIFEST};\nimport { first } from "../lib/db.js";\nexport default tool({ description: first, execute: () => "x" });\n`,
    });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([{ path: "lib/db.ts:3:31", message: "Cannot read properties of undefined (reading 'id') (while loading tools/uses_db.ts)" }]);
  });

  it("a ConfigError from agent() in agent.ts keeps its issues, under the file and line", async () => {
    const dir = await agentDir({ "agent.ts": `import { agent } from ${MANIFEST};\n\nexport default agent({ name: "x", tools: {} } as never);\n` });
    const { error, issues } = await refusal(dir);
    expect(error.message).toMatch(/^agent\.ts:3:16: Invalid agent/);
    expect(issues.map((issue) => issue.path)).toEqual(["tools"]);
  });
});

describe("loadAgent records where each tool came from", () => {
  it("a file under tools/ by its path, a tool attached with withTools in agent.ts not at all", async () => {
    const dir = await agentDir({
      "agent.ts": `import { agent, tool, withTools } from ${MANIFEST};\nexport default withTools(agent({ name: "t", mode: "text", llm: { kind: "scripted", options: {} } }), { ping: tool({ description: "Ping", execute: () => "pong" }) });\n`,
      "tools/lookup_order.ts": `import { tool } from ${MANIFEST};\nexport default tool({ description: "Look up", execute: () => "ok" });\n`,
    });
    const loaded = await loadAgent(dir);
    expect(Object.keys(loaded.def.tools).sort()).toEqual(["lookup_order", "ping"]);
    expect(loaded.toolFiles).toEqual({ lookup_order: "tools/lookup_order.ts" });
  });
});

describe("loadAgent refuses an agent every session of which would fail at start", () => {
  const agentWith = (fields: string): string => `import { agent } from ${MANIFEST};\nexport default agent({ name: "t", ${fields} });\n`;

  it("an offline.json the scripted model refuses, naming the field and the fix", async () => {
    const dir = await agentDir({ "offline.json": JSON.stringify({ rules: [{ when: "hello", sya: "Hi!" }] }) });
    const { error, issues } = await refusal(dir);
    expect(error.message).toMatch(/^Invalid agent "t": 1 problem/);
    expect(issues).toEqual([{ path: "offline.json rules[0].sya", message: "is not a field here (known: when, say, call, then, delayMs). Did you mean `say`?" }]);
  });

  it("an offline.json rule whose regular expression does not compile", async () => {
    const dir = await agentDir({ "offline.json": JSON.stringify({ rules: [{ when: "order (", say: "Sure." }] }) });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([{ path: "offline.json rules[0].when", message: expect.stringContaining("not a valid regular expression") as string }]);
  });

  it("checks offline.json for a voice agent too: it is the script of the offline fallback", async () => {
    const dir = await agentDir({ "agent.ts": agentWith(""), "offline.json": JSON.stringify({ fallback: 3 }) });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([{ path: "offline.json fallback", message: "must be a string" }]);
  });

  it("a scripted llm's inline script (llm.options.script) when there is no offline.json", async () => {
    const dir = await agentDir({ "agent.ts": agentWith('mode: "text", llm: { kind: "scripted", options: { script: { rules: [{ when: "x", say: "{name}" }] } } }') });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([{ path: "llm.options.script rules[0].say", message: expect.stringContaining("unknown placeholder {name}") as string }]);
  });

  it("provider options, as the providers refuse them at session start, whether or not the key is set", async () => {
    const dir = await agentDir({
      "agent.ts": agentWith('stt: { kind: "deepgram", options: { url: "http://stt.example" } }, tts: { kind: "elevenlabs", options: {} }, llm: { kind: "openai", options: {} }'),
    });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([
      { path: "stt.options.url", message: 'must be a ws:// or wss:// URL, got "http://stt.example".' },
      { path: "llm", message: 'llm openai needs options.model, e.g. "gpt-4.1-mini".' },
      { path: "tts", message: expect.stringContaining("tts.options.voiceId") as string },
    ]);
  });

  it("speech-to-speech options", async () => {
    const dir = await agentDir({ "agent.ts": agentWith('s2s: { kind: "openai-realtime", options: { turnDetection: "always" } }') });
    const { issues } = await refusal(dir);
    expect(issues).toEqual([{ path: "s2s.options.turnDetection", message: 'must be "server_vad", "semantic_vad" or an object with one of those as its type.' }]);
  });

  it("an unknown builtin, a dtmf.tool the agent lacks, and a workflow-app agent", async () => {
    const dir = await agentDir({ "agent.ts": agentWith('telephony: true, builtinTools: ["current_tim"], dtmf: { tool: "enter_pin" }') });
    expect((await refusal(dir)).issues).toEqual([
      { path: "builtinTools[0]", message: expect.stringMatching(/^unknown builtin tool `current_tim`\. Did you mean `current_time`\?/) as string },
      { path: "dtmf.tool", message: 'this agent has no tool named enter_pin; add it to the agent\'s tools or set dtmf: "text".' },
    ]);
    const app = await agentDir({ "agent.ts": agentWith('mode: "workflow-app"') });
    expect((await refusal(app)).issues).toEqual([{ path: "mode", message: expect.stringMatching(/^a workflow-app agent serves its workflows over HTTP and no sessions, and this one declares none/) as string }]);
  });

  it("a workflow-app agent with a workflow loads; a workflow named for one of the API's paths does not", async () => {
    const flow = `import { workflow } from ${MANIFEST};\nexport default workflow({ description: "Nightly report" }).body(async () => "done");\n`;
    const app = await agentDir({ "agent.ts": agentWith('mode: "workflow-app"'), "workflows/nightly.ts": flow });
    const loaded = await loadAgent(app, { warn: () => undefined });
    expect(loaded.config.mode).toBe("workflow-app");
    expect(Object.keys(loaded.def.workflows ?? {})).toEqual(["nightly"]);
    const reserved = await agentDir({ "workflows/events.ts": flow });
    expect((await refusal(reserved)).issues).toEqual([
      { path: "workflows.events", message: '"events" is a path of the workflows API (/workflows/events/…), so a workflow cannot be named so: rename its file or its key.' },
    ]);
  });

  it("a missing key is not a load error (check reports it; serve falls back to the offline stack)", async () => {
    const dir = await agentDir({
      "agent.ts": agentWith('s2s: { kind: "gemini-live", options: { apiKeyEnv: "NO_SUCH_KEY_VARIABLE_SET" } }'),
      "offline.json": JSON.stringify({ rules: [{ when: "hello", say: "Hi!" }] }),
    });
    const loaded = await loadAgent(dir);
    expect(loaded.config.mode).toBe("s2s");
    expect(loaded.script).toEqual({ rules: [{ when: "hello", say: "Hi!" }] });
  });
});
