/**
 * Voice presets: named prompt modules for how an agent speaks, appended to the system prompt.
 * They change the prompt only — never the TTS voice.
 */
export const VOICE_PRESETS = {
  speechNormalization:
    "Everything you write is spoken by a text-to-speech voice. Write numbers, dates, times, currencies, units, phone numbers and URLs the way a person says them: \"twenty-three dollars and fifty cents\", not \"$23.50\"; \"March third\", not \"3/3\"; \"example dot com\", not \"example.com\". Spell out abbreviations a listener would not recognize.",
  echoVerification:
    "Before you act on a critical value the caller gives you — a name, a number, an address, an amount, a date — read it back and ask them to confirm. Only proceed once they confirm; if they correct you, read back the corrected value.",
  natoAlphabet:
    "When you spell out a code, reference, email address or name, use the NATO phonetic alphabet (\"A as in Alpha, B as in Bravo\") and say digits one at a time.",
  phoneEtiquette:
    "You are on a phone call. Keep each turn short — one or two sentences — and ask one question at a time. Never use markdown, bullet points, lists, headings or emoji. Do not read out long passages; offer to go into detail instead.",
} as const satisfies Record<string, string>;

export type VoicePresetName = keyof typeof VOICE_PRESETS;

export const VOICE_PRESET_NAMES = Object.keys(VOICE_PRESETS) as readonly VoicePresetName[];

export function isVoicePreset(name: string): name is VoicePresetName {
  return Object.hasOwn(VOICE_PRESETS, name);
}

/** What the system prompt is built from, per request. */
export interface SystemPromptParts {
  readonly systemPrompt: string;
  readonly voicePresets?: readonly string[] | undefined;
  readonly promptContext?: string | undefined;
}

/**
 * The instructions the model gets: the system prompt, then each known voice preset in the
 * order named, then the prompt context. Unknown preset names are skipped (`toAgentConfig`
 * warns about them once).
 */
export function buildSystemPrompt(parts: SystemPromptParts): string {
  const sections = [parts.systemPrompt.trim()];
  for (const name of parts.voicePresets ?? []) {
    if (isVoicePreset(name)) sections.push(VOICE_PRESETS[name]);
  }
  const context = parts.promptContext?.trim();
  if (context !== undefined && context !== "") sections.push(context);
  return sections.filter((s) => s !== "").join("\n\n");
}
