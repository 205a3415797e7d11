import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_WAITING_SOUND_BYTES } from "../../../src/audio/waiting-sound.js";
import { ConfigError, DEFAULTS, toAgentConfig, type AgentConfigSource, type ConfigIssue } from "../../../src/manifest/index.js";
import { agent } from "../../../src/manifest/index.js";
import { createGateway } from "../../../src/server/index.js";
import { loadAgent } from "../../../src/server/loader.js";
import { silentLogger } from "../../../src/log.js";
import { loadWaitingSounds } from "../../../src/server/waiting-sounds.js";
import { configIssues } from "../../helpers/config-issues.js";
import { toneWav } from "../../helpers/tone.js";

const MANIFEST = JSON.stringify(new URL("../../../src/manifest/index.ts", import.meta.url).href);
const quiet = { warn: () => {} };
const PIPELINE = { name: "x", stt: { kind: "local" }, llm: { kind: "scripted" }, tts: { kind: "local" } } as const;

function problems(source: Record<string, unknown>): ConfigIssue[] {
  return configIssues(() => toAgentConfig(source as AgentConfigSource, quiet));
}

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function agentDir(waitingAudio: unknown, files: Readonly<Record<string, Uint8Array>>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "switchboard-waiting-"));
  dirs.push(dir);
  const source = `import { agent } from ${MANIFEST};\nexport default agent(${JSON.stringify({ ...PIPELINE, waitingAudio })});\n`;
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  await writeFile(join(dir, "agent.ts"), source);
  for (const [path, bytes] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), bytes);
  }
  return dir;
}

describe("waitingAudio: the config", () => {
  it("is taken by pipeline and s2s agents", () => {
    const pipeline = toAgentConfig({ ...PIPELINE, waitingAudio: { thinking: { file: "sounds/typing.wav", volume: 0.4, afterMs: 600 }, ambience: { file: "office.wav" } } }, quiet);
    expect(pipeline.waitingAudio).toEqual({ thinking: { file: "sounds/typing.wav", volume: 0.4, afterMs: 600 }, ambience: { file: "office.wav" } });
    const s2s = toAgentConfig({ name: "x", s2s: { kind: "openai-realtime" }, waitingAudio: { ambience: { file: "office.wav", volume: 0.05 } } }, quiet);
    expect(s2s.waitingAudio).toEqual({ ambience: { file: "office.wav", volume: 0.05 } });
  });

  it("is refused by a text agent, which has no audio", () => {
    expect(problems({ name: "x", mode: "text", llm: { kind: "scripted" }, waitingAudio: { ambience: { file: "a.wav" } } })).toEqual([
      { path: "waitingAudio", message: expect.stringContaining("it has no audio") as string },
    ]);
  });

  it("refuses an empty group, an absolute path, a volume past 1 and an unknown key, by path", () => {
    expect(problems({ ...PIPELINE, waitingAudio: {} })).toEqual([{ path: "waitingAudio", message: "set thinking, ambience or both — or remove waitingAudio." }]);
    const issues = problems({ ...PIPELINE, waitingAudio: { thinking: { file: "/etc/x.wav", volume: 2 }, ambience: { file: "a.wav", loop: true } } });
    expect(issues.map((i) => i.path).sort()).toEqual(["waitingAudio.ambience.loop", "waitingAudio.thinking.file", "waitingAudio.thinking.volume"]);
    expect(issues.find((i) => i.path === "waitingAudio.thinking.file")?.message).toMatch(/relative to the agent directory/);
  });
});

describe("waitingAudio: loading the files", () => {
  it("loadAgent decodes them, relative to the agent directory, with the defaults written in", async () => {
    const dir = await agentDir({ thinking: { file: "sounds/typing.wav" }, ambience: { file: "office.wav", volume: 0.2 } }, {
      "sounds/typing.wav": toneWav({ ms: 300, rate: 16000 }),
      "office.wav": toneWav({ ms: 1000, rate: 48000, channels: 2 }),
    });
    const agent = await loadAgent(dir, quiet);
    expect(agent.waitingAudio?.thinking).toMatchObject({ gain: DEFAULTS.waitingAudio.thinkingVolume, afterMs: DEFAULTS.waitingAudio.thinkingAfterMs });
    expect(agent.waitingAudio?.thinking?.sound.ms).toBe(300);
    expect(agent.waitingAudio?.ambience).toMatchObject({ gain: 0.2 });
    expect(agent.waitingAudio?.ambience?.sound.sampleRate).toBe(48000);
  });

  it("refuses a missing, unsupported or oversized file, naming the field and the fix, all at once", async () => {
    const dir = await agentDir({ thinking: { file: "missing.wav" }, ambience: { file: "odd.wav" } }, { "odd.wav": toneWav({ ms: 300, rate: 11025 }) });
    const error = await loadAgent(dir, quiet).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      { path: "waitingAudio.thinking.file", message: "missing.wav: no such file in the agent directory; put a PCM16 WAV there, or remove the field." },
      { path: "waitingAudio.ambience.file", message: expect.stringMatching(/^odd\.wav: is at 11025 Hz; convert it to one of 8000, 16000, 24000, 44100, 48000 Hz/) as string },
    ]);
    const big = await agentDir({ ambience: { file: "big.wav" } }, { "big.wav": new Uint8Array(MAX_WAITING_SOUND_BYTES + 1) });
    const config = toAgentConfig({ ...PIPELINE, waitingAudio: { ambience: { file: "big.wav" } } }, quiet);
    await expect(loadWaitingSounds(big, config)).rejects.toThrow(/big\.wav: is 8388609 bytes; a waiting sound may be at most 8388608 bytes/);
  });

  it("an agent without waitingAudio loads none", async () => {
    const config = toAgentConfig(PIPELINE, quiet);
    expect(await loadWaitingSounds("/nonexistent", config)).toBeUndefined();
  });
});

describe("waitingAudio: a gateway", () => {
  it("refuses an agent whose waitingAudio files were not loaded, saying how to load them", () => {
    const def = agent({ ...PIPELINE, waitingAudio: { ambience: { file: "office.wav" } } });
    expect(() => createGateway({ agent: def, logger: silentLogger, processMetrics: false, offline: true })).toThrow(/its sound files were not loaded: load the agent with loadAgent\(dir\)/);
  });
});
