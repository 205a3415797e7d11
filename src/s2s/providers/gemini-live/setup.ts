/** Gemini Live: the `setup` message, tool declarations in Gemini's Schema, and history as turns (docs/vendors.md (Gemini Live)). */
import type { JSONSchema7, JSONSchema7Definition, JSONSchema7TypeName } from "json-schema";
import { NO_LOG, type ProviderLog } from "../../../providers/provider-log.js";
import type { S2sHistoryItem, S2sSetup, S2sTool } from "../../s2s-port.js";
import type { GeminiLiveSettings } from "./settings.js";
import { spread } from "../../../spread.js";

// ---- setup (docs/vendors.md (Gemini Live), "Setup": the first message, once per socket) ----

/** The `setup` message for one socket; `handle` resumes a session (`sessionResumption.handle`). */
export function geminiSetupMessage(settings: GeminiLiveSettings, setup: S2sSetup, handle?: string, log: ProviderLog = NO_LOG): object {
  const speechConfig: Record<string, unknown> = {};
  if (settings.voice !== undefined) speechConfig.voiceConfig = { prebuiltVoiceConfig: { voiceName: settings.voice } };
  if (settings.language !== undefined) speechConfig.languageCode = settings.language;
  if (typeof setup.toolChoice !== "string" || setup.toolChoice === "required") {
    log.debug({ toolChoice: setup.toolChoice }, "gemini-live: setup has no tool choice; the model chooses (auto)");
  }
  if (setup.transcriptionPrompt !== undefined) log.debug({}, "gemini-live: input transcription takes no prompt; transcriptionPrompt ignored");
  const withTools = setup.tools.length > 0 && setup.toolChoice !== "none";
  return {
    setup: {
      model: settings.model,
      generationConfig: {
        responseModalities: ["AUDIO"],
        ...(Object.keys(speechConfig).length > 0 ? { speechConfig } : {}),
      },
      systemInstruction: { parts: [{ text: setup.instructions }] },
      ...(withTools ? { tools: [{ functionDeclarations: setup.tools.map(functionDeclaration) }] } : {}),
      realtimeInputConfig: {
        automaticActivityDetection: { disabled: false },
        activityHandling: setup.interruptResponse ? "START_OF_ACTIVITY_INTERRUPTS" : "NO_INTERRUPTION",
      },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      // `{}` asks for `sessionResumptionUpdate` handles; a handle resumes (docs/vendors.md (Gemini Live)).
      sessionResumption: handle === undefined ? {} : { handle },
    },
  };
}

function functionDeclaration(tool: S2sTool): object {
  const parameters = toGeminiSchema(tool.parameters);
  // Gemini refuses an OBJECT with no properties: a tool without parameters declares none.
  const empty = parameters.type === "OBJECT" && parameters.properties === undefined;
  return { name: tool.name, description: tool.description, ...(empty ? {} : { parameters }) };
}

/** A Gemini `Schema` (an OpenAPI 3.0 subset with upper-case type names, docs/vendors.md (Gemini Live)). */
export interface GeminiSchema {
  type?: string;
  [key: string]: unknown;
}

const COPIED_KEYWORDS = ["title", "description", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "default"] as const;
const FORMATS = new Set(["enum", "date-time", "float", "double", "int32", "int64"]);

/**
 * JSON Schema → Gemini `Schema`: type names upper case, a `null` type becomes `nullable`, `const`
 * and string `enum`s become `enum`, `oneOf` becomes `anyOf`, `allOf` is merged, and keywords
 * Gemini does not know (`$schema`, `additionalProperties`, `$ref`, …) are dropped. Non-string
 * enums (Gemini's `enum` is for strings) are written into the description.
 */
export function toGeminiSchema(definition: JSONSchema7Definition): GeminiSchema {
  if (typeof definition === "boolean") return { type: "STRING" };
  const schema = definition.allOf === undefined ? definition : mergeAllOf(definition);
  const out: GeminiSchema = {};
  for (const key of COPIED_KEYWORDS) if (schema[key] !== undefined) out[key] = schema[key];
  if (schema.format !== undefined && FORMATS.has(schema.format)) out.format = schema.format;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) out.example = schema.examples[0];

  const types: JSONSchema7TypeName[] = schema.type === undefined ? [] : Array.isArray(schema.type) ? [...schema.type] : [schema.type];
  const values = schema.const !== undefined ? [schema.const] : schema.enum;
  if (types.includes("null") || values?.includes(null) === true) out.nullable = true;
  const concrete = types.filter((t) => t !== "null");
  if (concrete.length > 1) {
    out.anyOf = concrete.map((t) => toGeminiSchema(spread(schema, { type: t, description: undefined })));
    return out;
  }
  const type = concrete[0] ?? (schema.properties !== undefined ? "object" : schema.items !== undefined ? "array" : undefined);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (type === undefined && alternatives !== undefined) {
    out.anyOf = alternatives.map(toGeminiSchema);
    return out;
  }
  out.type = (type ?? "string").toUpperCase();

  const listed = values?.filter((v) => v !== null);
  if (listed !== undefined && listed.length > 0) {
    if (listed.every((v) => typeof v === "string")) {
      out.type = "STRING";
      out.enum = listed;
    } else {
      const note = `One of: ${listed.map((v) => JSON.stringify(v)).join(", ")}.`;
      out.description = typeof out.description === "string" ? `${out.description} ${note}` : note;
    }
  }
  const properties = schema.properties ?? {};
  if (out.type === "OBJECT" && Object.keys(properties).length > 0) {
    out.properties = Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, toGeminiSchema(s)]));
    const required = (schema.required ?? []).filter((name) => name in properties);
    if (required.length > 0) out.required = required;
  }
  if (out.type === "ARRAY" && schema.items !== undefined) {
    out.items = Array.isArray(schema.items) ? { anyOf: schema.items.map(toGeminiSchema) } : toGeminiSchema(schema.items);
  }
  return out;
}

function mergeAllOf(schema: JSONSchema7): JSONSchema7 {
  const { allOf = [], ...rest } = schema;
  const merged: JSONSchema7 = { ...rest };
  for (const part of allOf) {
    if (typeof part === "boolean") continue;
    const flat = part.allOf === undefined ? part : mergeAllOf(part);
    for (const [key, value] of Object.entries(flat) as [keyof JSONSchema7, unknown][]) {
      if (key === "properties") merged.properties = spread(merged.properties ?? {}, flat.properties ?? {});
      else if (key === "required") merged.required = [...new Set([...(merged.required ?? []), ...(flat.required ?? [])])];
      else if (merged[key] === undefined) (merged as Record<string, unknown>)[key] = value;
    }
  }
  return merged;
}

/** History → `clientContent` turns (Gemini's roles are `user` and `model`). */
export function historyTurns(history: readonly S2sHistoryItem[]): object[] {
  return history.map((item) => ({ role: item.role === "assistant" ? "model" : "user", parts: [{ text: item.text }] }));
}
