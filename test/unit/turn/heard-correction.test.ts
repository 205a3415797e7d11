import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { recordHeard } from "../../../src/pipeline/record-heard.js";
import { Conversation } from "../../../src/session/conversation.js";
import { ReplyHeard } from "../../../src/turn/heard-correction.js";

const REPLY: ModelMessage[] = [{ role: "assistant", content: "one two three four five six" }];
/** 100 ms of audio a word. */
const wordsAt = (audioMs: number): number => Math.min(6, Math.floor(audioMs / 100));

/** A conversation holding a user turn and the reply as recorded with `words` heard. */
function recorded(words: number) {
  const conversation = new Conversation();
  const prompt: ModelMessage[] = [{ role: "user", content: "count" }];
  const rebuild = (cut: number): ModelMessage[] => [...prompt, ...recordHeard(REPLY, undefined, cut)];
  const messages = words >= 6 ? [...prompt, ...REPLY] : rebuild(words);
  conversation.append(conversation.epoch, messages);
  return { conversation, record: { epoch: conversation.epoch, messages, words, rebuild } };
}

const correctIn = (conversation: Conversation) => (epoch: number, old: readonly ModelMessage[], next: readonly ModelMessage[]) => conversation.replace(epoch, old, next);

describe("ReplyHeard: a listener's truncate only ever shortens a reply's record", () => {
  it("corrects a record already written to the words heard by then, with [interrupted]", () => {
    const { conversation, record } = recorded(4);
    const heard = new ReplyHeard(wordsAt);
    heard.recorded(record);
    expect(heard.truncate(250, correctIn(conversation))).toBe("corrected");
    expect(conversation.history).toEqual([{ role: "user", content: "count" }, { role: "assistant", content: [{ type: "text", text: "one two [interrupted]" }] }]);
    // A second truncate corrects the corrected record; a later one leaves it.
    expect(heard.truncate(500, correctIn(conversation))).toBe("unchanged");
    expect(heard.truncate(120, correctIn(conversation))).toBe("corrected");
    expect(conversation.history.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "one [interrupted]" }] });
  });

  it("never claims more than the gateway's estimate recorded", () => {
    const { conversation, record } = recorded(2);
    const heard = new ReplyHeard(wordsAt);
    heard.recorded(record);
    expect(heard.truncate(600, correctIn(conversation))).toBe("unchanged");
    expect(conversation.history.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "one two [interrupted]" }] });
  });

  it("cuts a completed reply too (the listener stopped before its end)", () => {
    const { conversation, record } = recorded(6);
    const heard = new ReplyHeard(wordsAt);
    heard.recorded(record);
    expect(heard.truncate(300, correctIn(conversation))).toBe("corrected");
    expect(conversation.history.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "one two three [interrupted]" }] });
  });

  it("caps a record still to be written; the frozen map answers after", () => {
    const heard = new ReplyHeard(wordsAt);
    expect(heard.limit(5)).toBe(5);
    expect(heard.truncate(300, () => true)).toBe("capped");
    expect(heard.truncate(900, () => true)).toBe("capped");
    expect(heard.limit(5)).toBe(3);
    expect(heard.limit(2)).toBe(2);
  });

  it("does nothing after a reset, or once trimming dropped the record", () => {
    const { conversation, record } = recorded(4);
    const heard = new ReplyHeard(wordsAt);
    heard.recorded(record);
    conversation.reset();
    expect(heard.truncate(100, correctIn(conversation))).toBe("unchanged");
    expect(conversation.history).toEqual([]);
  });
});
