/** Vocabulary biasing: the agent's `sttPrompt` as the keyterm list STT vendors take. */

/**
 * Split an `sttPrompt` into keyterms: on commas, semicolons, pipes and newlines (a phrase with
 * spaces stays one term, e.g. "order id"); trimmed, de-duplicated (ignoring case), at most `max`.
 */
export function keytermsOf(prompt: string | undefined, max: number): string[] {
  if (prompt === undefined) return [];
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const raw of prompt.split(/[,;|\n\r]+/)) {
    const term = raw.trim().replace(/\s+/g, " ");
    if (term === "" || seen.has(term.toLowerCase()) || terms.length >= max) continue;
    seen.add(term.toLowerCase());
    terms.push(term);
  }
  return terms;
}
