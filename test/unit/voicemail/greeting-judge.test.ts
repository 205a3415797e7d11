// The transcript heuristics (src/voicemail/greeting-judge.ts): phrases of recorded greetings, a
// monologue, a short answer followed by a pause; undecided in between.
import { describe, expect, it } from "vitest";
import { HUMAN_PAUSE_MS, judgeGreeting, MONOLOGUE_MS, normalizeTranscript, voicemailPhrase, wordCount, type GreetingHeard } from "../../../src/voicemail/greeting-judge.js";

const heard = (over: Partial<GreetingHeard>): GreetingHeard => ({ text: "", speechStartMs: undefined, firstUtteranceEndMs: undefined, firstUtteranceWords: 0, spokeAgain: false, nowMs: 0, ...over });

describe("voicemailPhrase", () => {
  it.each([
    // The first pattern that matches names the phrase.
    ["Hi, you've reached Dana. Please leave a message after the tone.", "leave a message"],
    ["Hi, you've reached Dana.", "you've reached"],
    ["Sorry, I'm not available right now", "i'm not available"],
    ["The person you are calling is not available.", "is not available"],
    ["Leave your name and number and I'll call you back.", "leave your name and number"],
    ["Please record your message", "record your message"],
    ["Welcome to the voicemail of Sam", "voicemail"],
    ["The mailbox is full", "mailbox"],
    ["I can't take your call", "can't take your call"],
    ["We'll get back to you as soon as possible", "get back to you"],
    ["After the tone, hang up or press pound", "after the tone"],
  ])("%s → %s", (text, phrase) => {
    expect(voicemailPhrase(text)).toBe(phrase);
  });

  it.each(["Hello?", "Hi, this is Dana speaking.", "Yes, who is this?", "Can I help you?", "Hang on, let me get a pen", "I left a message for you yesterday"])("%s is no machine's phrase", (text) => {
    expect(voicemailPhrase(text)).toBeUndefined();
  });

  it("reads curly apostrophes and punctuation as plain text", () => {
    expect(normalizeTranscript("You’ve  reached—Dana!")).toBe("you've reached dana");
    expect(voicemailPhrase("You’ve reached Dana")).toBe("you've reached");
    expect(wordCount("  Hi, this is Dana. ")).toBe(4);
    expect(wordCount("")).toBe(0);
  });
});

describe("judgeGreeting", () => {
  it("is undecided before the callee speaks", () => {
    expect(judgeGreeting(heard({ nowMs: 5000 }))).toBeUndefined();
  });

  it("calls a phrase of a recorded greeting a machine at once, from an interim", () => {
    expect(judgeGreeting(heard({ text: "hi you've reached", speechStartMs: 0, firstUtteranceWords: 3, nowMs: 900 }))).toEqual({ verdict: "machine", reason: "phrase", phrase: "you've reached" });
  });

  it("calls a long first utterance a machine: by its words, or by still going after MONOLOGUE_MS", () => {
    expect(judgeGreeting(heard({ text: "one two three four five six seven eight nine ten eleven twelve", speechStartMs: 0, firstUtteranceWords: 12, nowMs: 2000 }))?.verdict).toBe("machine");
    expect(judgeGreeting(heard({ text: "so the thing is", speechStartMs: 1000, firstUtteranceWords: 4, nowMs: 1000 + MONOLOGUE_MS - 1 }))).toBeUndefined();
    expect(judgeGreeting(heard({ text: "so the thing is", speechStartMs: 1000, firstUtteranceWords: 4, nowMs: 1000 + MONOLOGUE_MS }))).toEqual({ verdict: "machine", reason: "monologue" });
  });

  it("calls a short answer followed by a pause a person, and not before the pause has lasted", () => {
    const hello = { text: "Hello?", speechStartMs: 0, firstUtteranceEndMs: 600, firstUtteranceWords: 1 };
    expect(judgeGreeting(heard({ ...hello, nowMs: 600 + HUMAN_PAUSE_MS - 1 }))).toBeUndefined();
    expect(judgeGreeting(heard({ ...hello, nowMs: 600 + HUMAN_PAUSE_MS }))).toEqual({ verdict: "human", reason: "short answer" });
    // Speaking again in the pause leaves it undecided (the window, or more words, decide).
    expect(judgeGreeting(heard({ ...hello, spokeAgain: true, nowMs: 3000 }))).toBeUndefined();
  });

  it("leaves a middling answer undecided", () => {
    expect(judgeGreeting(heard({ text: "Hi this is Dana from the office", speechStartMs: 0, firstUtteranceEndMs: 1500, firstUtteranceWords: 7, nowMs: 4000 }))).toBeUndefined();
  });
});
