/** Join reply segments the way they read aloud: one space between, none doubled. */
export function joinSpoken(parts: readonly string[]): string {
  return parts
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .join(" ");
}
