// `switchboard call` (and `console --voice`) cannot type: without pocketsphinx the session fails at
// start, naming the install command and the key that would use the agent's own (hosted) STT —
// rather than falling back to typed turns and waiting out the timeout. Pocketsphinx is simulated
// missing with SWITCHBOARD_POCKETSPHINX, looked up afresh per session.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { toAgentConfig } from "../../../src/manifest/index.js";
import { callAgent, hostedSttHint } from "../../../src/server/call.js";
import { loadAgent } from "../../../src/server/loader.js";
import { chooseProviders } from "../../../src/server/offline.js";

const support = fileURLToPath(new URL("../../../examples/support", import.meta.url));
const NO_KEYS = { OPENAI_API_KEY: "", DEEPGRAM_API_KEY: "", CARTESIA_API_KEY: "" };
const HINT = "install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us";
const recording = { sampleRate: 16000, samples: new Int16Array(16000) };

describe("a call on the offline stack without pocketsphinx", () => {
  it("fails at the session's start with a fatal stt error: the install command, and the key of the STT the offline stack replaced", async () => {
    const agent = await loadAgent(support, { warn: () => {} });
    const started = Date.now();
    const result = await callAgent(agent, recording, { env: { ...process.env, ...NO_KEYS, SWITCHBOARD_POCKETSPHINX: "/nonexistent/pocketsphinx_continuous" }, timeoutMs: 20_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.fatal).toMatchObject({ code: "stt", fatal: true });
    expect(result.fatal?.message).toBe(`the local STT needs pocketsphinx (/nonexistent/pocketsphinx_continuous was not found); ${HINT} (or set DEEPGRAM_API_KEY to use deepgram)`);
    expect(result.answered).toBe(false);
    // No typed-turns fallback: the session never greeted.
    expect(result.events.some((e) => e.type === "agent-transcript.updated")).toBe(false);
  }, 30_000);

  it("forced offline with the key set, the hint is to run without --offline", async () => {
    const agent = await loadAgent(support, { warn: () => {} });
    const result = await callAgent(agent, recording, { offline: true, env: { ...process.env, DEEPGRAM_API_KEY: "dg", SWITCHBOARD_POCKETSPHINX: "/nonexistent/ps" }, timeoutMs: 20_000 });
    expect(result.fatal?.message).toMatch(/install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us \(or run without --offline to use deepgram\)$/);
  }, 30_000);
});

describe("hostedSttHint", () => {
  const config = (def: Parameters<typeof toAgentConfig>[0]) => toAgentConfig(def, { warn: () => {} });
  const pipeline = config({ name: "p", stt: { kind: "assemblyai", options: {} }, llm: { kind: "scripted", options: {} }, tts: { kind: "local", options: {} } });
  const offline = (own: typeof pipeline, env: Record<string, string>, forced: boolean) => chooseProviders(own, env, forced ? true : "auto").config;

  it("names the replaced STT's key, or says to drop --offline when the key is already set", () => {
    expect(hostedSttHint(pipeline, offline(pipeline, {}, false), {}, false)).toBe(" (or set ASSEMBLYAI_API_KEY to use assemblyai)");
    expect(hostedSttHint(pipeline, offline(pipeline, { ASSEMBLYAI_API_KEY: "k" }, true), { ASSEMBLYAI_API_KEY: "k" }, true)).toBe(" (or run without --offline to use assemblyai)");
    expect(hostedSttHint(pipeline, offline(pipeline, {}, true), {}, true)).toBe(" (or set ASSEMBLYAI_API_KEY and run without --offline to use assemblyai)");
  });

  it("an s2s agent the offline stack turned into a pipeline: its service's key", () => {
    const s2s = config({ name: "s", s2s: { kind: "openai-realtime", options: {} } });
    expect(hostedSttHint(s2s, offline(s2s, {}, false), {}, false)).toBe(" (or set OPENAI_API_KEY to use openai-realtime)");
  });

  it("nothing to add when the agent's own STT is the local one", () => {
    const local = config({ name: "l", stt: { kind: "local", options: {} }, llm: { kind: "scripted", options: {} }, tts: { kind: "local", options: {} } });
    expect(hostedSttHint(local, offline(local, {}, false), {}, false)).toBe("");
  });
});
