// `switchboard check`: it runs every validation a session start runs, so an agent that passes
// it starts a session, and one that fails names the field and the fix.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { runCheck } from "../../../src/cli/check.js";
import { systemClock } from "../../../src/clock.js";
import { silentLogger } from "../../../src/log.js";
import { toolRegistry, withTools, type AgentDef } from "../../../src/manifest/index.js";
import { resolveStt } from "../../../src/pipeline/providers/stt/index.js";
import { resolveTts } from "../../../src/pipeline/providers/tts/index.js";
import { resolveS2s } from "../../../src/s2s/providers/index.js";
import { createGateway } from "../../../src/server/index.js";
import { FakeS2s } from "../../../src/testing/fake-s2s.js";
import { FakeStt, FakeTts } from "../../../src/testing/fake-speech.js";
import { TestClient } from "../../helpers/ws-client.js";
import { throwingToolSource } from "../../helpers/throwing-tool.js";
import { toneWav } from "../../helpers/tone.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../..", import.meta.url));
const SWITCHBOARD = JSON.stringify(new URL("../../../src/index.ts", import.meta.url).href);

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** An agent directory: agent.ts exporting `agentExpr` (in scope: agent, subagent, tool, withTools), plus files. */
async function agentDir(agentExpr: string, files: Readonly<Record<string, string>> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "switchboard-check-"));
  dirs.push(dir);
  const all = {
    "package.json": '{ "type": "module" }\n',
    "agent.ts": `import { agent, subagent, tool, withTools } from ${SWITCHBOARD};\n\nexport default ${agentExpr};\n`,
    ...files,
  };
  for (const [path, source] of Object.entries(all)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), source);
  }
  return dir;
}

const toolFile = (description: string): string => `import { tool } from ${SWITCHBOARD};\nexport default tool({ description: ${JSON.stringify(description)}, execute: () => "ok" });\n`;

/** `check` in this process, with `env` for keys; its exit code and what it wrote. */
async function check(dir: string, env: Readonly<Record<string, string>> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCheck(dir, { env, out: (text) => void (out += text), err: (text) => void (err += text) });
  return { code, out, err };
}

describe("switchboard check fails an agent whose sessions would fail, naming the field", () => {
  it("a typo'd rule field in offline.json (`sya` for `say`)", async () => {
    const dir = await agentDir('agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} } })', {
      "offline.json": JSON.stringify({ rules: [{ when: "hello", sya: "Hi!" }] }),
    });
    const { code, out, err } = await check(dir);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain("offline.json rules[0].sya: is not a field here (known: when, say, call, then, delayMs). Did you mean `say`?");
  });

  it("an ElevenLabs voice without voiceId — with its key set, and without it (serve would not fall back past a wrong option)", async () => {
    const dir = await agentDir('agent({ name: "voice", tts: { kind: "elevenlabs", options: {} } })');
    for (const env of [{ ELEVENLABS_API_KEY: "k", DEEPGRAM_API_KEY: "k", OPENAI_API_KEY: "k" }, {}]) {
      const { code, err } = await check(dir, env);
      expect(code).toBe(1);
      expect(err).toContain("tts.options.voiceId");
    }
  });

  it("passes a valid agent, listing each tool's real source, its providers and the keys it lacks", async () => {
    const dir = await agentDir('withTools(agent({ name: "shop", builtinTools: ["current_time"], tts: { kind: "elevenlabs", options: { voiceId: "v1" } } }), { ping: tool({ description: "Ping", execute: () => "pong" }) })', {
      "tools/lookup_order.ts": toolFile("Look up an order"),
      "offline.json": JSON.stringify({ rules: [{ when: "order", call: { tool: "lookup_order" } }, { when: "ping", call: { tool: "pingg" } }] }),
    });
    const { code, out, err } = await check(dir, { OPENAI_API_KEY: "k" });
    expect(code).toBe(0);
    expect(out).toMatch(/^shop: pipeline agent\ntools:\n/);
    expect(out).toMatch(/\n {2}ping +inline\n/);
    expect(out).toMatch(/\n {2}lookup_order +tools\/lookup_order\.ts\n/);
    expect(out).toMatch(/\n {2}current_time +builtin\n/);
    expect(out).toContain("  stt  deepgram  — needs DEEPGRAM_API_KEY\n  llm  openai\n  tts  elevenlabs  — needs ELEVENLABS_API_KEY\n");
    expect(out).toContain("offline.json: 2 rules");
    expect(out).toContain("2 missing; serve falls back to the offline stack for missing provider keys.");
    expect(err).toBe('warning: offline.json rules[1].call.tool: "pingg" is not a tool of this agent, so the offline model skips this rule\'s calls. Did you mean `ping`?\n');
  });

  it("lists the agent's routes and who may call each: public when they opt out, or while the gateway's auth is off", async () => {
    const routes = '{ "GET /shop/status": () => new Response("ok"), "GET /shop/hours": { handler: () => new Response("9-5"), auth: "none" } }';
    const dir = await agentDir(`agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} }, routes: ${routes} })`);
    const off = await check(dir);
    expect(off.code).toBe(0);
    expect(off.out).toContain("\nroutes:\n  GET /shop/status   public while SWITCHBOARD_API_KEY is unset (the gateway's auth)\n  GET /shop/hours    public (auth: \"none\")\nproviders:\n");
    expect((await check(dir, { SWITCHBOARD_API_KEY: "k" })).out).toContain("  GET /shop/status   API key or session token\n");
    expect(off.err).toBe("");
  });

  it("fails an agent with a route on a path the gateway serves itself, naming the route", async () => {
    const dir = await agentDir('agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} }, routes: { "GET /health": () => new Response("mine") } })');
    const { code, err } = await check(dir);
    expect(code).toBe(1);
    expect(err).toContain('routes["GET /health"]: /health is taken by the gateway\'s GET /health, whatever the method: give the route a path of its own, e.g. "GET /shop/health".');
  });

  it("lists the agent's dialogs, and each dialog tool with its dialog and states; a tool of an unregistered dialog fails", async () => {
    const files = (dialogs: string): Record<string, string> => ({
      "agent.ts": `import { agent } from ${SWITCHBOARD};\nimport { verify } from "./verify.js";\n\nexport default agent({ name: "bank", mode: "text", ${dialogs} });\n`,
      "verify.ts": `import { dialog } from ${SWITCHBOARD};\nexport const verify = dialog({ id: "verify", initial: "ask", states: { ask: { instruction: "Ask.", on: { OK: "done", LOCK: "locked" } }, done: { instruction: "Done.", type: "final" }, locked: { instruction: "Locked.", type: "final" } } });\n`,
      "tools/check_pin.ts": `import { verify } from "../verify.js";\nexport default verify.tool({ description: "Check the PIN", allowedIn: ["ask"], sends: "OK", execute: () => "ok" });\n`,
    });
    const { code, out } = await check(await agentDir("", files("dialogs: { verify }")), { OPENAI_API_KEY: "k" });
    expect(code).toBe(0);
    expect(out).toMatch(/\n {2}check_pin +tools\/check_pin\.ts {2}\(dialog verify: ask\)\ndialogs:\n {2}verify +3 states from ask to done or locked; tools: check_pin\nproviders:/);
    const refused = await check(await agentDir("", files("")), { OPENAI_API_KEY: "k" });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('tools.check_pin: is a tool of dialog "verify", which this agent does not register: add dialogs: { verify } to agent({...}).');
  });

  it("lists the agent's guardrails in the order they run, each by its function's name", async () => {
    const dir = await agentDir(
      'agent({ name: "guarded", mode: "text", llm: { kind: "scripted", options: {} }, inputGuardrails: [function noCardNumbers() { return undefined; }, () => undefined], outputGuardrails: [function neverSayCardNumber() { return undefined; }] })',
    );
    const { code, out } = await check(dir);
    expect(code).toBe(0);
    expect(out).toContain("guardrails:\n  input  noCardNumbers\n  input  #2\n  output neverSayCardNumber\n");
  });

  it("lists each sub-agent tool: who answers it, on which model, within what", async () => {
    const researcher = 'agent({ name: "researcher", mode: "text", llm: "openai/gpt-4.1-mini", usageLimits: { totalTokens: 2000 } })';
    const dir = await agentDir(`agent({ name: "desk", mode: "text", llm: { kind: "scripted", options: {} }, subagents: { research: subagent(${researcher}, { description: "Researches.", timeoutMs: 20000 }) } })`);
    const { code, out } = await check(dir, { OPENAI_API_KEY: "k" });
    expect(code).toBe(0);
    expect(out).toMatch(/\n {2}research +subagent "researcher": llm openai, up to 20000 ms, 2000 tokens\n/);
  });

  it("lists the roster: its hand-off tool, and each member with its voice, tools and whom it hands to", async () => {
    const billing = 'agent({ name: "billing", mode: "text", llm: { kind: "scripted", options: {} }, roster: { desk: () => desk } })';
    const dir = await agentDir(`(() => { const desk = agent({ name: "desk", mode: "text", llm: { kind: "scripted", options: {} }, roster: { billing: ${billing} } }); return desk; })()`);
    const { code, out } = await check(dir);
    expect(code).toBe(0);
    expect(out).toMatch(/\n {2}transfer_to_agent +roster: billing\n/);
    expect(out).toMatch(/\nroster:\n {2}roster\.billing +"billing": llm scripted; tools none; hands to desk\n/);
  });

  it("names a member's own provider whose key is missing: serve would take the team offline", async () => {
    const dir = await agentDir('agent({ name: "desk", mode: "text", llm: { kind: "scripted", options: {} }, roster: { billing: agent({ name: "billing", mode: "text", llm: "anthropic/claude-sonnet-4-5" }) } })');
    const { code, out } = await check(dir);
    expect(code).toBe(0);
    expect(out).toContain("  roster.billing llm anthropic  — needs ANTHROPIC_API_KEY\n");
    expect(out).toContain("1 missing; serve falls back to the offline stack for missing provider keys.");
  });

  it("warns (exit 0) for an MCP server a session would start without", async () => {
    const dir = await agentDir('agent({ name: "docs", mode: "text", llm: { kind: "scripted", options: {} }, mcpServers: { docs: { url: "https://mcp.example.com/mcp", tokenEnv: "DOCS_TOKEN" }, wiki: {} } })');
    const { code, out, err } = await check(dir);
    expect(code).toBe(0);
    expect(out).toMatch(/\n {2}mcp_docs_\* +mcp server "docs" \(listed at session start\)\n/);
    expect(err).toContain("warning: mcpServers.docs: environment variable DOCS_TOKEN (tokenEnv) is not set. Sessions start without this server's tools.");
    expect(err).toContain("warning: mcpServers.wiki: no `url` to connect to. Sessions start without this server's tools.");
  });
});

describe("switchboard check and the agent's waiting sounds", () => {
  it("lists each sound it loaded, and refuses one it cannot play, naming the field", async () => {
    const dir = await agentDir('agent({ name: "shop", waitingAudio: { ambience: { file: "sounds/office.wav" } } })');
    await mkdir(join(dir, "sounds"), { recursive: true });
    await writeFile(join(dir, "sounds", "office.wav"), toneWav({ ms: 1500, rate: 48000 }));
    const { code, out } = await check(dir, { OPENAI_API_KEY: "k", DEEPGRAM_API_KEY: "k", CARTESIA_API_KEY: "k" });
    expect(code).toBe(0);
    expect(out).toContain("waitingAudio.ambience: sounds/office.wav (1.5 s at 48000 Hz, volume 0.1)\n");
    await writeFile(join(dir, "sounds", "office.wav"), toneWav({ ms: 1500, rate: 22050 }));
    const refused = await check(dir);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("waitingAudio.ambience.file: sounds/office.wav: is at 22050 Hz; convert it to one of");
  });
});

describe("switchboard check and the agent's event observers", () => {
  it("lists them by key, and lists none for an agent without", async () => {
    const observed = await agentDir('agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} }, events: { "tool.completed": () => {}, "*": async () => {} } })');
    const { code, out } = await check(observed);
    expect(code).toBe(0);
    expect(out).toContain("\nobservers: tool.completed, * (every event)\nproviders:\n");
    const plain = await agentDir('agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} } })');
    expect((await check(plain)).out).not.toContain("observers:");
  });

  it("fails a key that is no client-protocol event type, naming the key and the type meant", async () => {
    const dir = await agentDir('agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} }, events: { "reply.complete": () => {} } })');
    const { code, out, err } = await check(dir);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain('events["reply.complete"]: "reply.complete" is not a client-protocol event type. Did you mean `reply.completed`?');
  });
});

describe("switchboard check and the agent's workflows", () => {
  it("lists them; a workflow-app agent opens no provider, so no key is missing and there is no offline stack", async () => {
    const flow = `import { workflow } from ${SWITCHBOARD};\nexport default workflow({ description: "Nightly report", steps: { total: () => 42 } }).body(async (_input, ctx) => ctx.steps.total());\n`;
    const app = await agentDir('agent({ name: "ops", mode: "workflow-app" })', { "workflows/report.ts": flow });
    const { code, out } = await check(app);
    expect(code).toBe(0);
    expect(out).toBe("ops: workflow-app agent\ntools:\nworkflows:\n  report             steps: total — Nightly report\nproviders: none (a workflow-app agent serves the workflows API, not sessions)\n");
    const voice = await agentDir('agent({ name: "shop", mode: "text", llm: { kind: "scripted", options: {} } })', { "workflows/report.ts": flow });
    expect((await check(voice)).out).toContain("\nworkflows:\n  report             steps: total — Nightly report\nproviders:\n  llm  scripted\n");
  });
});

describe("switchboard check names the file and line of an agent or tool file that throws (the CLI, through tsx)", () => {
  async function cli(dir: string): Promise<{ code: number; stderr: string }> {
    return run(process.execPath, ["--import", "tsx", "src/cli.ts", "check", dir], { cwd: root }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
  }

  it("a runtime error at a tool's top level: the TypeScript line (past erased types), not the compiled one", async () => {
    const dir = await agentDir('agent({ name: "t", mode: "text", llm: { kind: "scripted", options: {} } })', {
      "tools/lookup.ts": throwingToolSource(SWITCHBOARD),
    });
    expect(await cli(dir)).toEqual({ code: 1, stderr: "switchboard: Cannot load agent: 1 problem\n  - tools/lookup.ts:9:32: Cannot read properties of undefined (reading 'description')\n" });
  }, 30_000);

  it("a syntax error in a TypeScript tool and in a JavaScript one", async () => {
    const ts = await agentDir('agent({ name: "t", mode: "text", llm: { kind: "scripted", options: {} } })', {
      "tools/broken.ts": `import { tool } from ${SWITCHBOARD};\n\ntype T = string;\nexport default tool({\n  description: "x",\n  execute: () => { return "x" ,, },\n});\n`,
    });
    expect((await cli(ts)).stderr).toContain('  - tools/broken.ts:6:32: syntax error: Unexpected ","');
    const js = await agentDir('agent({ name: "t", mode: "text", llm: { kind: "scripted", options: {} } })', {
      "tools/broken.mjs": `import { tool } from ${SWITCHBOARD};\n\nexport default tool({\n  description: "x",\n  execute: () => { return "x" ,, },\n});\n`,
    });
    expect((await cli(js)).stderr).toContain("  - tools/broken.mjs:5:32: syntax error: Unexpected token ','");
  }, 30_000);
});

// ---- passes check ⇔ a session starts ----

/** Every network provider's key. */
const KEYS = { DEEPGRAM_API_KEY: "k", ASSEMBLYAI_API_KEY: "k", OPENAI_API_KEY: "k", CARTESIA_API_KEY: "k", ELEVENLABS_API_KEY: "k", GOOGLE_API_KEY: "k" };

/**
 * Start one session of the agent in `dir` on an in-process gateway, WITHOUT the loader (its
 * modules imported directly, offline.json parsed as it is), as `serve` runs it (the offline stack
 * for a missing key). Providers are built by the gateway's own resolvers — so their options and
 * keys are checked exactly as at a session start — and then stood in for by fakes, so nothing
 * dials a vendor. True when the session goes live (it answers a `reset`), false when it fails.
 */
async function sessionStarts(dir: string, env: Readonly<Record<string, string>>): Promise<boolean> {
  const agentModule = (await import(pathToFileURL(join(dir, "agent.ts")).href)) as { default: AgentDef };
  const toolModules: Record<string, unknown> = {};
  const toolsDir = join(dir, "tools");
  for (const name of existsSync(toolsDir) ? await readdir(toolsDir) : []) {
    toolModules[`tools/${name}`] = await import(pathToFileURL(join(toolsDir, name)).href);
  }
  const scriptFile = join(dir, "offline.json");
  const script: unknown = existsSync(scriptFile) ? JSON.parse(await readFile(scriptFile, "utf8")) : undefined;
  let gateway;
  try {
    gateway = createGateway({
      agent: withTools(agentModule.default, toolRegistry(toolModules)),
      ...(script === undefined ? {} : { script }),
      offline: "auto",
      env,
      logger: silentLogger,
      processMetrics: false,
      voice: {
        stt: (descriptor) => (resolveStt(descriptor, env), new FakeStt()),
        tts: (descriptor) => (resolveTts(descriptor, env), new FakeTts(systemClock)),
      },
      s2s: (descriptor) => (resolveS2s(descriptor, env), new FakeS2s()),
    });
  } catch {
    return false;
  }
  try {
    const { url } = await gateway.listen(0, "127.0.0.1");
    const client = new TestClient(`${url.replace(/^http/, "ws")}/websocket`);
    // A gateway may refuse the upgrade itself (a workflow-app agent serves no sessions): no session started.
    if (!(await client.opened.then(() => true, () => false))) return false;
    client.send({ type: "reset" });
    const live = await Promise.race([client.next("session.reset").then(() => true), client.closed.then(() => false)]);
    client.close();
    return live;
  } finally {
    await gateway.close();
  }
}

interface Case {
  readonly name: string;
  readonly agent: string;
  readonly files?: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string>>;
  /** What both should say: the set covers agents that start and agents that cannot. */
  readonly starts: boolean;
}

const TEXT = 'name: "t", mode: "text", llm: { kind: "scripted", options: {} }';
const VALID_SCRIPT = JSON.stringify({ rules: [{ when: "order (?<id>\\w+)", call: { tool: "lookup_order", args: { orderId: "{id}" } }, then: "{result}" }] });

const CASES: readonly Case[] = [
  { name: "text agent, valid offline.json", agent: `agent({ ${TEXT} })`, files: { "offline.json": VALID_SCRIPT, "tools/lookup_order.ts": toolFile("Look up") }, env: {}, starts: true },
  { name: "offline.json typo (sya)", agent: `agent({ ${TEXT} })`, files: { "offline.json": JSON.stringify({ rules: [{ when: "hi", sya: "Hello" }] }) }, env: {}, starts: false },
  { name: "offline.json bad regex", agent: `agent({ ${TEXT} })`, files: { "offline.json": JSON.stringify({ rules: [{ when: "(", say: "x" }] }) }, env: {}, starts: false },
  { name: "llm.options.script with an unknown placeholder", agent: 'agent({ name: "t", mode: "text", llm: { kind: "scripted", options: { script: { rules: [{ when: "x", say: "{who}" }] } } } })', env: {}, starts: false },
  { name: "elevenlabs without voiceId, keys set", agent: 'agent({ name: "v", tts: { kind: "elevenlabs", options: {} } })', env: KEYS, starts: false },
  { name: "elevenlabs with voiceId, keys set", agent: 'agent({ name: "v", tts: { kind: "elevenlabs", options: { voiceId: "v1" } } })', env: KEYS, starts: true },
  { name: "deepgram with an http url", agent: 'agent({ name: "v", stt: { kind: "deepgram", options: { url: "http://x" } } })', env: KEYS, starts: false },
  { name: "local stt with an empty keyword list", agent: 'agent({ name: "v", stt: { kind: "local", options: { keywords: [] } } })', env: KEYS, starts: false },
  { name: "openai-compatible without baseURL", agent: 'agent({ name: "t", mode: "text", llm: { kind: "openai-compatible", options: { model: "m" } } })', env: {}, starts: false },
  { name: "openai realtime with an unknown turnDetection", agent: 'agent({ name: "s", s2s: { kind: "openai-realtime", options: { turnDetection: "always" } } })', env: KEYS, starts: false },
  { name: "gemini live, valid", agent: 'agent({ name: "s", s2s: { kind: "gemini-live", options: { voice: "Puck" } } })', env: KEYS, starts: true },
  { name: "dtmf.tool the agent lacks", agent: 'agent({ name: "p", telephony: true, dtmf: { tool: "enter_pin" } })', env: KEYS, starts: false },
  { name: "dtmf.tool a builtin", agent: 'agent({ name: "p", telephony: true, builtinTools: ["end_call"], dtmf: { tool: "end_call" } })', env: KEYS, starts: true },
  { name: "unknown builtin", agent: 'agent({ name: "p", builtinTools: ["current_tim"] })', env: KEYS, starts: false },
  { name: "workflow-app agent", agent: 'agent({ name: "w", mode: "workflow-app" })', env: KEYS, starts: false },
  { name: "voice agent, no keys: the offline stack", agent: 'agent({ name: "v", tts: { kind: "cartesia", options: { voice: "x" } } })', env: {}, starts: true },
  { name: "sub-agent, valid", agent: `agent({ ${TEXT}, subagents: { ask: subagent(agent({ ${TEXT} }), { description: "Asks." }) } })`, env: {}, starts: true },
  { name: "sub-agent on a speech-to-speech service", agent: `agent({ ${TEXT}, subagents: { ask: subagent(agent({ name: "v", s2s: { kind: "openai-realtime", options: {} } }), { description: "Asks." }) } })`, env: KEYS, starts: false },
  { name: "sub-agent whose llm lacks its baseURL", agent: `agent({ ${TEXT}, subagents: { ask: subagent(agent({ name: "a", mode: "text", llm: { kind: "openai-compatible", options: { model: "m" } } }), { description: "Asks." }) } })`, env: {}, starts: false },
  { name: "roster, valid", agent: `agent({ ${TEXT}, roster: { other: agent({ ${TEXT.replace('"t"', '"other"')} }) } })`, env: {}, starts: true },
  { name: "roster member of another mode", agent: `agent({ ${TEXT}, roster: { voice: agent({ name: "v" }) } })`, env: KEYS, starts: false },
  { name: "MCP server whose token is unset", agent: `agent({ ${TEXT}, mcpServers: { docs: { url: "http://127.0.0.1:9/mcp", tokenEnv: "DOCS_TOKEN" } } })`, env: {}, starts: true },
];

describe("passes check ⇔ a session starts", () => {
  it.each(CASES)("$name", async ({ agent, files, env, starts }) => {
    const dir = await agentDir(agent, files);
    const passes = (await check(dir, env)).code === 0;
    const started = await sessionStarts(dir, env);
    expect({ passes, started }).toEqual({ passes: starts, started: starts });
  }, 20_000);
});
