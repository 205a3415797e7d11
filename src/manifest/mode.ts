import { ConfigError, type ConfigIssue } from "./errors.js";

/** Session mode derived from which provider fields are set. */
export type SessionMode = "s2s" | "pipeline" | "text";

/** What an author may write in `mode`: a session mode, or an agent that serves workflows only. */
export type AgentMode = SessionMode | "workflow-app";

/** The fields mode derivation reads. */
export interface ProviderFields {
  readonly stt?: unknown;
  readonly llm?: unknown;
  readonly tts?: unknown;
  readonly s2s?: unknown;
  readonly mode?: unknown;
  /** Authoring alias for `mode: "text"`. */
  readonly text?: unknown;
}

/** The one message template for a field that does nothing in a mode. */
export function noEffect(field: string, mode: AgentMode, reason: string): string {
  return `\`${field}\` has no effect on a \`${mode}\` agent (${reason}). Remove it.`;
}

const set = (value: unknown): boolean => value !== undefined && value !== null;

/**
 * Derive the mode and list every conflict among the provider fields. The single source of
 * truth for mode rules: `toAgentConfig`, the session runtime and the server all come here.
 */
export function deriveMode(fields: ProviderFields): { mode: AgentMode; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const authored = fields.mode;
  const pipelineSet = (["stt", "llm", "tts"] as const).filter((k) => set(fields[k]));
  const wantsText = authored === "text" || fields.text === true;
  if (fields.text === true && authored !== undefined && authored !== "text") {
    issues.push({
      path: "mode",
      message: `\`mode\` is ${JSON.stringify(authored)} but \`text: true\` asks for a text agent. Keep one of them.`,
    });
  }

  if (set(fields.s2s)) {
    if (pipelineSet.length > 0) {
      issues.push({
        path: "s2s",
        message: `s2s and the stt/llm/tts pipeline cannot be set together (also set: ${pipelineSet.map((k) => `\`${k}\``).join(", ")}). Keep \`s2s\` for a speech-to-speech agent, or remove it for a pipeline.`,
      });
    }
    if (authored !== undefined && authored !== "s2s") {
      issues.push({
        path: "mode",
        message: `\`mode\` is ${JSON.stringify(authored)} but the providers make it "s2s" (\`s2s\` is set). Remove \`mode\` (it is derived) or make them agree.`,
      });
    }
    return { mode: "s2s", issues };
  }
  if (authored === "s2s") {
    issues.push({
      path: "s2s",
      message: '`mode: "s2s"` needs an `s2s` provider, e.g. s2s: { kind: "openai-realtime", options: {} }.',
    });
    return { mode: "s2s", issues };
  }
  if (wantsText || authored === "workflow-app") {
    const mode: AgentMode = wantsText ? "text" : "workflow-app";
    for (const field of ["stt", "tts"] as const) {
      if (set(fields[field])) issues.push({ path: field, message: noEffect(field, mode, "it has no audio") });
    }
    return { mode, issues };
  }
  if (authored !== undefined && authored !== "pipeline") {
    issues.push({
      path: "mode",
      message: `\`mode\` must be "s2s", "pipeline", "text" or "workflow-app" (got ${JSON.stringify(authored)}); it is derived from the providers, so it can usually be left out.`,
    });
  }
  return { mode: "pipeline", issues };
}

/**
 * The mode these provider fields make, or a `ConfigError` naming every conflict. The one
 * assertion shared by everything that needs a mode.
 */
export function assertProviderTriple(fields: ProviderFields, subject = "agent"): AgentMode {
  const { mode, issues } = deriveMode(fields);
  if (issues.length > 0) throw new ConfigError(`Invalid ${subject}`, issues);
  return mode;
}
