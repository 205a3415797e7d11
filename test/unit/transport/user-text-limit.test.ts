import { describe, expect, it } from "vitest";
import { MAX_USER_TEXT_CHARS } from "../../../src/session/conversation.js";
import { parseCommand } from "../../../src/transport/protocol.js";

describe("user_text length", () => {
  it("is at most MAX_USER_TEXT_CHARS (20 000) characters after trimming", () => {
    expect(MAX_USER_TEXT_CHARS).toBe(20_000);
    expect(parseCommand(JSON.stringify({ type: "user_text", text: `  ${"a".repeat(20_000)}  ` }))).toMatchObject({ kind: "command" });
  });

  it("refuses a longer text as malformed, with a message naming the limit", () => {
    const frame = parseCommand(JSON.stringify({ type: "user_text", text: "a".repeat(20_001) }));
    expect(frame).toEqual({ kind: "malformed", type: "user_text", message: "user_text: text: too long: at most 20000 characters" });
  });
});
