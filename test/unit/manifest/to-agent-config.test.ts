import { describe, expect, it, vi } from "vitest";
import { configIssues } from "../../helpers/config-issues.js";
import {
  ConfigError,
  DEFAULT_PROVIDERS,
  HOST_ONLY_AGENT_FIELDS,
  assertProviderTriple,
  toAgentConfig,
  type AgentConfigSource,
  type ConfigIssue,
} from "../../../src/manifest/index.js";
import { UNHONOURED_HOST_FIELDS } from "../../../src/manifest/agent-config.js";

const quiet = { warn: () => {} };

function problems(source: AgentConfigSource | Record<string, unknown>): ConfigIssue[] {
  return configIssues(() => toAgentConfig(source as AgentConfigSource, quiet));
}

describe("toAgentConfig: defaults and mode", () => {
  it("injects the default providers, greeting and system prompt into a bare pipeline agent", () => {
    const config = toAgentConfig({ name: "bare" });
    expect(config.mode).toBe("pipeline");
    expect(config.stt).toEqual(DEFAULT_PROVIDERS.stt);
    expect(config.llm).toEqual(DEFAULT_PROVIDERS.llm);
    expect(config.tts).toEqual(DEFAULT_PROVIDERS.tts);
    expect(config.greeting).toBe("Hi! How can I help?");
    expect(config.systemPrompt).toMatch(/voice assistant/);
  });

  it("keeps an empty greeting: the agent starts silent", () => {
    expect(toAgentConfig({ name: "a", greeting: "" }).greeting).toBe("");
  });

  it("derives s2s from an s2s descriptor and injects no pipeline providers", () => {
    const config = toAgentConfig({ name: "rt", s2s: { kind: "openai-realtime", options: { voice: "marin" } } });
    expect(config.mode).toBe("s2s");
    expect(config.stt).toBeUndefined();
    expect(config.llm).toBeUndefined();
    expect(config.tts).toBeUndefined();
    expect(config.s2s).toEqual({ kind: "openai-realtime", options: { voice: "marin" } });
  });

  it("derives text from mode: text or text: true, with only an llm", () => {
    expect(toAgentConfig({ name: "t", mode: "text" }).mode).toBe("text");
    const config = toAgentConfig({ name: "t", text: true, llm: "anthropic/claude-sonnet-4-5" });
    expect(config.mode).toBe("text");
    expect(config.llm).toEqual({ kind: "anthropic", options: { model: "claude-sonnet-4-5" } });
    expect(config.stt).toBeUndefined();
    expect(config).not.toHaveProperty("text");
  });

  it("fills only the missing pipeline providers", () => {
    const config = toAgentConfig({ name: "p", tts: { kind: "elevenlabs", options: { voiceId: "v" } } });
    expect(config.tts).toEqual({ kind: "elevenlabs", options: { voiceId: "v" } });
    expect(config.stt).toEqual(DEFAULT_PROVIDERS.stt);
  });

  it("defaults descriptor options to an empty object", () => {
    expect(toAgentConfig({ name: "p", stt: { kind: "local" } }).stt).toEqual({ kind: "local", options: {} });
  });

  it("refuses s2s together with any pipeline provider, naming them", () => {
    const issues = problems({ name: "x", s2s: { kind: "openai-realtime", options: {} }, stt: { kind: "deepgram", options: {} }, llm: "openai/gpt-4.1" });
    expect(issues).toContainEqual({
      path: "s2s",
      message: expect.stringContaining("s2s and the stt/llm/tts pipeline cannot be set together (also set: `stt`, `llm`)") as string,
    });
  });

  it("refuses an authored mode that disagrees with the providers, naming both", () => {
    const issues = problems({ name: "x", mode: "pipeline", s2s: { kind: "openai-realtime", options: {} } });
    expect(issues).toEqual([{ path: "mode", message: expect.stringMatching(/`mode` is "pipeline" but the providers make it "s2s"/) as string }]);
  });

  it('refuses mode: "s2s" without an s2s descriptor', () => {
    expect(problems({ name: "x", mode: "s2s" })).toEqual([{ path: "s2s", message: expect.stringContaining("needs an `s2s` provider") as string }]);
  });

  it("refuses stt or tts on a text agent with the one template", () => {
    expect(problems({ name: "x", mode: "text", tts: { kind: "cartesia", options: {} } })).toEqual([
      { path: "tts", message: "`tts` has no effect on a `text` agent (it has no audio). Remove it." },
    ]);
  });

  it("assertProviderTriple is the same rule, throwing", () => {
    expect(assertProviderTriple({ s2s: { kind: "gemini-live" } })).toBe("s2s");
    expect(assertProviderTriple({})).toBe("pipeline");
    expect(() => assertProviderTriple({ s2s: {}, tts: {} })).toThrow(ConfigError);
  });
});

describe("toAgentConfig: per-mode refusals", () => {
  const s2s = { kind: "openai-realtime", options: {} };

  it.each([
    ["turnTaking", { turnTaking: { minSilenceMs: 500 } }, "the speech-to-speech service detects turns itself"],
    ["interruption.minWords", { interruption: { minWords: 2 } }, "the service decides barge-in"],
    ["interruption.minDurationMs", { interruption: { minDurationMs: 300 } }, "the service decides barge-in"],
    ["interruption.acknowledgementPhrases", { interruption: { acknowledgementPhrases: ["okay"] } }, "the service decides barge-in and commits every caller turn itself"],
    ["interruption.interruptPhrases", { interruption: { interruptPhrases: ["stop"] } }, "the service decides barge-in"],
    ["silence.deadAirCoverMs", { silence: { deadAirCoverMs: 1000 } }, "the service speaks while it works"],
    ["errorPhrase", { errorPhrase: "Oops." }, "the service speaks for itself when a turn fails"],
    ["startFailurePhrase", { startFailurePhrase: "Sorry." }, "there is no separate TTS to speak it"],
    ["temperature", { temperature: 0.3 }, "the speech-to-speech service runs it"],
    ["maxOutputTokens", { maxOutputTokens: 200 }, "the speech-to-speech service runs it"],
    ["maxRetries", { maxRetries: 0 }, "the speech-to-speech service runs it"],
    ["resetToolChoice", { resetToolChoice: false }, "the speech-to-speech service runs it"],
    ["usageLimits", { usageLimits: { totalTokens: 1000 } }, "the speech-to-speech service runs it"],
  ])("s2s refuses %s", (path, extra, reason) => {
    expect(problems({ name: "x", s2s, ...extra })).toEqual([{ path, message: `\`${path}\` has no effect on a \`s2s\` agent (${reason}). Remove it.` }]);
  });

  it("s2s keeps what the gateway does itself: interruption off, backoff, silence nudges", () => {
    const config = toAgentConfig({ name: "x", s2s, interruption: { backoffMs: 200 }, silence: { nudge: { afterMs: 8000 } } });
    expect(config.interruption).toEqual({ backoffMs: 200 });
    expect(toAgentConfig({ name: "x", s2s, interruption: "off" }).interruption).toBe("off");
  });

  it.each([
    ["turnTaking", { turnTaking: { detection: "manual" } }],
    ["interruption", { interruption: "off" }],
    ["silence", { silence: { nudge: { afterMs: 5000 } } }],
    ["sttPrompt", { sttPrompt: "Switchboard" }],
    ["telephony", { telephony: true }],
    ["dtmf", { dtmf: "text" }],
    ["maxCallDurationMs", { maxCallDurationMs: 60_000 }],
    ["errorPhrase", { errorPhrase: "Oops." }],
    ["startFailurePhrase", { startFailurePhrase: "Sorry." }],
    ["clientInbox", { clientInbox: { sampleRate: 16000 } }],
  ])("text refuses %s", (path, extra) => {
    expect(problems({ name: "x", mode: "text", ...extra })).toEqual([
      { path, message: `\`${path}\` has no effect on a \`text\` agent (it has no audio). Remove it.` },
    ]);
  });
});

describe("toAgentConfig: field rules", () => {
  it("reports a misspelled top-level key as itself, with a suggestion, before cross-field rules", () => {
    const issues = problems({ name: "x", s2s: { kind: "openai-realtime", options: {} }, temprature: 0.2 });
    expect(issues).toEqual([{ path: "temprature", message: "`temprature` is not an agent field. Did you mean `temperature`?" }]);
  });

  it("refuses a typo one level down in a strict group, by name", () => {
    expect(problems({ name: "x", turnTaking: { minSilenceMS: 800 } })).toEqual([
      { path: "turnTaking.minSilenceMS", message: "`minSilenceMS` is not a field of `turnTaking`. Did you mean `minSilenceMs`?" },
    ]);
    expect(problems({ name: "x", silence: { nudge: { afterMs: 10, promt: "hi" } } })[0]?.path).toBe("silence.nudge.promt");
  });

  it("requires minSilenceMs <= maxSilenceMs, counting the default", () => {
    expect(problems({ name: "x", turnTaking: { minSilenceMs: 2000, maxSilenceMs: 1000 } })).toEqual([
      { path: "turnTaking.minSilenceMs", message: expect.stringContaining("must be ≤ turnTaking.maxSilenceMs (2000 > 1000)") as string },
    ]);
    expect(problems({ name: "x", turnTaking: { minSilenceMs: 4000 } })[0]?.message).toContain("4000 > 3500, the default");
    expect(toAgentConfig({ name: "x", turnTaking: { minSilenceMs: 800, maxSilenceMs: 800 } }).turnTaking).toEqual({ minSilenceMs: 800, maxSilenceMs: 800 });
  });

  it("takes dtmf as \"text\" or { tool }, and refuses anything else naming both forms", () => {
    expect(toAgentConfig({ name: "x", dtmf: { tool: "enter_pin" }, maxCallDurationMs: 0 }).dtmf).toEqual({ tool: "enter_pin" });
    expect(problems({ name: "x", dtmf: "digits" })).toEqual([{ path: "dtmf", message: 'must be "text" or { tool: "<tool name>" } (got "digits")' }]);
    expect(problems({ name: "x", maxCallDurationMs: -1 })).toEqual([{ path: "maxCallDurationMs", message: "must be ≥ 0 ms (got -1)" }]);
  });

  it("requires a limit inside userTurnLimit", () => {
    expect(problems({ name: "x", turnTaking: { userTurnLimit: {} } })).toEqual([
      { path: "turnTaking.userTurnLimit", message: "set maxWords, maxDurationMs or both — or remove the limit." },
    ]);
  });

  it("lists every problem at once, each with its field path", () => {
    const paths = problems({
      name: " ",
      maxSteps: 0,
      temperature: 3,
      idleTimeoutMs: -1,
      interruption: { minWords: 0 },
      clientInbox: { sampleRate: 4000 },
      stt: { kind: "deepgran", options: {} },
    }).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["name", "maxSteps", "temperature", "idleTimeoutMs", "interruption.minWords", "clientInbox.sampleRate", "stt.kind"]));
  });

  it("names an unknown provider kind with the known ones", () => {
    expect(problems({ name: "x", stt: { kind: "deepgran", options: {} } })).toEqual([
      { path: "stt.kind", message: 'unknown stt provider "deepgran". Did you mean `deepgram`? Known: deepgram, assemblyai, local.' },
    ]);
    const config = toAgentConfig({ name: "x", stt: { kind: "whisper-box", options: {} } }, { ...quiet, providerKinds: { stt: ["whisper-box"] } });
    expect(config.stt?.kind).toBe("whisper-box");
  });

  it("names the bad key of a record and the value found inside a list", () => {
    expect(problems({ name: "x", mcpServers: { "Bad-Key": {} }, requiredEnv: ["lower"] })).toEqual([
      { path: "mcpServers.Bad-Key", message: 'key "Bad-Key": server keys are lowercase letters and digits (tools are named mcp_<key>_<tool>)' },
      { path: "requiredEnv[0]", message: 'must be an environment variable name such as OPENAI_API_KEY (got "lower")' },
    ]);
  });

  it("refuses an llm shorthand without a model", () => {
    expect(problems({ name: "x", llm: "openai" }).map((i) => i.path)).toContain("llm");
  });

  it("refuses a builtin that a tool file also declares", () => {
    const issues = problems({ name: "x", builtinTools: ["calculate"], tools: { calculate: {} } });
    expect(issues).toEqual([{ path: "builtinTools", message: expect.stringContaining("`calculate` is both a builtin and a tool") as string }]);
  });

  it("error message lists each problem on its own line", () => {
    expect(() => toAgentConfig({ name: "support", maxSteps: 0 }, quiet)).toThrow(/Invalid agent "support": 1 problem\n {2}- maxSteps: must be ≥ 1 \(got 0\)/);
  });
});

describe("toAgentConfig: what crosses the wire", () => {
  it("strips every host-only field", () => {
    const source: Record<string, unknown> = { name: "x" };
    // Each with a value of its shape where the field is checked (tools, events, dialogs, routes, guardrails).
    const guardrails = new Set(["inputGuardrails", "outputGuardrails"]);
    for (const field of HOST_ONLY_AGENT_FIELDS) source[field] = field === "tools" || field === "events" || field === "dialogs" ? {} : field === "routes" ? { "GET /x": () => new Response() } : guardrails.has(field) ? [() => undefined] : () => {};
    const config = toAgentConfig(source as AgentConfigSource);
    for (const field of HOST_ONLY_AGENT_FIELDS) expect(config).not.toHaveProperty(field);
  });

  it("drops a function-valued systemPrompt (default injected) and promptContext", () => {
    const config = toAgentConfig({ name: "x", systemPrompt: () => "dynamic", promptContext: () => "ctx" });
    expect(config.systemPrompt).toMatch(/voice assistant/);
    expect(config).not.toHaveProperty("promptContext");
    expect(toAgentConfig({ name: "x", promptContext: "Today is Monday." }).promptContext).toBe("Today is Monday.");
  });

  it("drops MCP url resolvers and headers, keeps the rest", () => {
    const config = toAgentConfig({
      name: "x",
      mcpServers: {
        docs: { url: "https://mcp.example.com/sse", headers: { authorization: "secret" }, allowedTools: ["search"] },
        crm: { url: () => "https://crm.example.com", tokenEnv: "CRM_TOKEN" },
      },
    });
    expect(config.mcpServers).toEqual({
      docs: { url: "https://mcp.example.com/sse", allowedTools: ["search"] },
      crm: { tokenEnv: "CRM_TOKEN" },
    });
    expect(JSON.stringify(config)).not.toContain("secret");
  });

  it("is JSON-round-trippable", () => {
    const config = toAgentConfig({ name: "x", voicePresets: ["phoneEtiquette"], telephony: ["twilio"], toolChoice: { type: "tool", toolName: "lookup" } });
    expect(JSON.parse(JSON.stringify(config))).toEqual(config);
  });

  it("warns about unknown voice presets and carriers and drops them", () => {
    const warn = vi.fn();
    const config = toAgentConfig({ name: "x", voicePresets: ["phoneEtiquete", "natoAlphabet"], telephony: ["twilio", "skype"] }, { warn });
    expect(config.voicePresets).toEqual(["natoAlphabet"]);
    expect(config.telephony).toEqual(["twilio"]);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('unknown voice preset "phoneEtiquete" ignored. Did you mean `phoneEtiquette`?'));
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('unknown carrier "skype"'));
  });

  it("does not mutate its source", () => {
    const source = Object.freeze({ name: "x", turnTaking: Object.freeze({ minSilenceMs: 900 }) });
    const config = toAgentConfig(source);
    expect(config.turnTaking).toEqual({ minSilenceMs: 900 });
    expect(source).toEqual({ name: "x", turnTaking: { minSilenceMs: 900 } });
  });
});

describe("fields this build accepts but does not honour yet", () => {
  it("none left: honoured fields (guardrails, routes, events, workflows, sessionContext) draw no warning", () => {
    const warnings: string[] = [];
    toAgentConfig(
      {
        name: "guarded",
        mode: "text",
        inputGuardrails: [() => undefined],
        outputGuardrails: [],
        routes: { "GET /hi": () => new Response("hi") },
        events: {},
        workflows: { nightly: {} },
        sessionContext: () => ({}),
      } as unknown as AgentConfigSource,
      { warn: (message) => warnings.push(message) },
    );
    expect(UNHONOURED_HOST_FIELDS).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("refuses guardrails that are not a list of functions, naming the entry and the shape", () => {
    const issues = (source: Record<string, unknown>): string[] => problems({ name: "g", mode: "text", ...source }).map((i) => `${i.path}: ${i.message}`);
    expect(issues({ inputGuardrails: () => undefined, outputGuardrails: [() => undefined, "no card numbers"] })).toEqual([
      "inputGuardrails: must be a list of guardrails, each (text, { sessionId, session }) => ({ replacement, reason? }) | undefined, or a Promise of one (got function). Wrap a single one: inputGuardrails: [check].",
      "outputGuardrails[1]: must be a guardrail function (text, { sessionId, session }) => ({ replacement, reason? }) | undefined, or a Promise of one (got string).",
    ]);
  });

  it("refuses input guardrails on an s2s service told not to transcribe the caller", () => {
    expect(problems({ name: "rt", s2s: { kind: "openai-realtime", options: { transcription: false } }, inputGuardrails: [() => undefined] })).toEqual([
      {
        path: "s2s.options.transcription",
        message: "`false` leaves the input guardrails nothing to read: in s2s they check the service's transcript of the caller. Remove it, or drop inputGuardrails.",
      },
    ]);
  });

  it("guardrails are honoured in every mode: no warning", () => {
    const warnings: string[] = [];
    const guardrails = { inputGuardrails: [() => undefined], outputGuardrails: [() => undefined] };
    toAgentConfig({ name: "voice", ...guardrails }, { warn: (message) => warnings.push(message) });
    toAgentConfig({ name: "rt", s2s: { kind: "openai-realtime" }, ...guardrails }, { warn: (message) => warnings.push(message) });
    toAgentConfig({ name: "chat", mode: "text", ...guardrails }, { warn: (message) => warnings.push(message) });
    expect(warnings).toEqual([]);
  });

  it("transfer_call needs an allow-list: refused without one, naming the field and the fix", () => {
    expect(problems({ name: "phone", builtinTools: ["end_call", "transfer_call"] })).toEqual([
      {
        path: "transfer",
        message: 'builtinTools lists transfer_call but no destination is allowed: add transfer: { destinations: [{ name: "sales", number: "+14155550123" }] } (the model may only transfer to these), or drop transfer_call.',
      },
    ]);
  });

  it("transfer without transfer_call does nothing: refused", () => {
    expect(problems({ name: "phone", transfer: { destinations: [{ name: "sales", number: "+14155550123" }] } })).toEqual([
      { path: "transfer", message: 'does nothing without the transfer_call builtin: add "transfer_call" to builtinTools, or remove transfer.' },
    ]);
  });

  it("transfer destinations: E.164 numbers or SIP URIs, one of them, named once", () => {
    const issues = problems({
      name: "phone",
      builtinTools: ["transfer_call"],
      transfer: {
        destinations: [
          { name: "sales", number: "4155550123" },
          { name: "Desk", sip: "desk@pbx" },
          { name: "both", number: "+14155550123", sip: "sip:a@b.example" },
          { name: "ok", number: "+14155550123", mode: "blind" },
        ],
        ringTimeoutS: 2,
      },
    });
    expect(issues.map((i) => i.path)).toEqual([
      "transfer.destinations[0].number",
      "transfer.destinations[1].name",
      "transfer.destinations[1].sip",
      "transfer.destinations[2]",
      "transfer.destinations[3].mode",
      "transfer.ringTimeoutS",
    ]);
    expect(issues[0]?.message).toContain('"+14155550123"');
    expect(issues[3]?.message).toContain("set exactly one of number (E.164) or sip (a SIP URI)");
    expect(problems({ name: "p", builtinTools: ["transfer_call"], transfer: { destinations: [] } })).toMatchObject([{ path: "transfer.destinations" }]);
    expect(
      problems({ name: "p", builtinTools: ["transfer_call"], transfer: { destinations: [{ name: "a", number: "+14155550123" }, { name: "a", sip: "sip:x@y.example" }] } }),
    ).toEqual([{ path: "transfer.destinations[1].name", message: '"a" is listed twice: each destination needs its own name.' }]);
  });

  it("an allow-listed transfer_call is accepted with no warning, and its destinations cross the wire", () => {
    const warnings: string[] = [];
    const transfer = { destinations: [{ name: "sales", number: "+14155550123" }, { name: "desk", sip: "sips:desk@pbx.example.com:5061;transport=tls", mode: "warm" as const }], ringTimeoutS: 25 };
    const config = toAgentConfig({ name: "phone", builtinTools: ["transfer_call"], transfer }, { warn: (message) => warnings.push(message) });
    expect(config.transfer).toEqual(transfer);
    expect(warnings).toEqual([]);
  });
});
