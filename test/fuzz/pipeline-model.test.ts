import fc from "fast-check";
import { Type } from "@sinclair/typebox";
import type { LanguageModelV4CallOptions, LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { LanguageModel, ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { virtualClock, type VirtualClock } from "../../src/clock.js";
import { agent, tool, withTools, type ResolvedAgentDef } from "../../src/manifest/index.js";
import { timedStream, type TimedPart } from "../../src/pipeline/providers/llm/scripted.js";
import { MemorySessionStore, type TranscriptLine } from "../../src/session/store.js";
import { streamingModel } from "../../src/testing/streaming-model.js";
import { voiceSession } from "../../src/testing/voice-session.js";
import { isClientStep, playClientStep, type ClientStep } from "./client-steps.js";
import { report, runs, SEED } from "./figures.js";

// A pipeline session over the fake STT/TTS under virtual time, with a model that answers each
// request the way the caller's words ask (text, a tool call, a failure, a stream cut mid-reply),
// driven by random caller and client events. Every word the model generates is a unique token
// `k<request>w<index>`, so what was spoken, committed and sent back to the model can be traced
// to the request that generated it.

/** What the caller asks for; the model obeys. */
const INTENTS = ["plain", "lookup", "slow", "broken", "error", "cut"] as const;
type Intent = (typeof INTENTS)[number];

type Step =
  | { readonly kind: "say"; readonly intent: Intent; readonly confident: boolean }
  | { readonly kind: "typed"; readonly intent: Intent }
  | { readonly kind: "interrupt"; readonly thenSay: boolean }
  | { readonly kind: "mumble"; readonly quiet: boolean }
  | ClientStep
  | { readonly kind: "drop" }
  | { readonly kind: "fatal" };

const intent = fc.constantFrom(...INTENTS);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 24, arbitrary: fc.record({ kind: fc.constant("say" as const), intent, confident: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("typed" as const), intent }) },
  { weight: 20, arbitrary: fc.record({ kind: fc.constant("interrupt" as const), thenSay: fc.boolean() }) },
  { weight: 12, arbitrary: fc.record({ kind: fc.constant("mumble" as const), quiet: fc.boolean() }) },
  { weight: 24, arbitrary: fc.integer({ min: 50, max: 4000 }).map((ms) => ({ kind: "wait" as const, ms })) },
  { weight: 4, arbitrary: fc.constant({ kind: "cancel" as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: "reset" as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: "drop" as const }) },
  // Rare: a run that meets it ends there.
  { weight: 1, arbitrary: fc.constant({ kind: "fatal" as const }) },
);

const orderId = Type.Object({ orderId: Type.String() });
function agentDef(clock: VirtualClock): ResolvedAgentDef {
  const tools = {
    lookup: tool({ description: "Look up an order", parameters: orderId, messages: { start: "One moment." }, execute: ({ orderId: id }) => `Order ${id} shipped.` }),
    slow: tool({
      description: "Look up an order slowly",
      parameters: orderId,
      messages: { start: "Let me check on that for you." },
      execute: async ({ orderId: id }, { signal }) => {
        await clock.sleep(3000, signal);
        return `Order ${id} is late.`;
      },
    }),
    broken: tool({
      description: "Always fails",
      parameters: orderId,
      messages: { failed: "That did not work." },
      execute: () => {
        throw new Error("database down");
      },
    }),
  };
  const base = agent({ name: "fuzz", greeting: "", errorPhrase: "Sorry, say that again?", interruption: { minWords: 1, minDurationMs: 200 } });
  return withTools(base, tools);
}

const TOKEN = /^k(\d+)w(\d+)$/;
/** The model tokens in a text, in order: `[request, index]`. */
function tokens(text: string): [number, number][] {
  return text
    .split(/[\s.,!?"…]+/)
    .map((w) => TOKEN.exec(w))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[1]), Number(m[2])]);
}

/** What a real provider refuses (OpenAI, Anthropic, Gemini): empty content, a call with no result, a result with no call. */
function promptProblems(prompt: LanguageModelV4Prompt): string[] {
  const problems: string[] = [];
  const chat = prompt.filter((m) => m.role !== "system");
  if (chat[0]?.role !== "user") problems.push(`the conversation opens with ${chat[0]?.role ?? "nothing"}, not the user`);
  const last = chat.at(-1)?.role;
  if (last !== "user" && last !== "tool") problems.push(`the request ends with ${last ?? "nothing"}`);
  const seen = new Set<string>();
  chat.forEach((message, i) => {
    if (message.role === "user" || message.role === "assistant") {
      if (message.content.length === 0) problems.push(`message ${i} (${message.role}) has no content`);
      for (const part of message.content) if (part.type === "text" && part.text.trim() === "") problems.push(`message ${i} (${message.role}) has an empty text part`);
    }
    if (message.role === "assistant") {
      const calls = message.content.filter((p) => p.type === "tool-call").map((p) => p.toolCallId);
      const answered = new Set<string>();
      for (let j = i + 1; chat[j]?.role === "tool"; j++) for (const part of chat[j]?.content ?? []) if (part.type === "tool-result") answered.add(part.toolCallId);
      for (const id of calls) {
        if (seen.has(id)) problems.push(`tool call ${id} appears twice`);
        seen.add(id);
        if (!answered.has(id)) problems.push(`tool call ${id} has no result`);
      }
    }
    if (message.role === "tool") {
      let j = i - 1;
      while (chat[j]?.role === "tool") j--;
      const owner = chat[j];
      const calls = new Set(owner?.role === "assistant" ? owner.content.filter((p) => p.type === "tool-call").map((p) => p.toolCallId) : []);
      for (const part of message.content) if (part.type === "tool-result" && !calls.has(part.toolCallId)) problems.push(`tool result ${part.toolCallId} answers no call`);
    }
  });
  return problems;
}

const textOf = (message: LanguageModelV4Prompt[number]): string =>
  typeof message.content === "string" ? message.content : message.content.map((p) => (p.type === "text" ? p.text : "")).join(" ");

/** The model under test: obeys the intent named in the caller's last words, records everything. */
class ObedientModel {
  readonly prompts: LanguageModelV4Prompt[] = [];
  /** Words each request generated (streamed out), by request number. */
  readonly generated = new Map<number, string[]>();
  readonly problems: string[] = [];
  #alive = new Set<number>();
  #next = 0;
  readonly #clock: VirtualClock;

  constructor(clock: VirtualClock) {
    this.#clock = clock;
  }

  get model(): LanguageModel {
    return streamingModel("obedient", (call) => this.#stream(call));
  }

  #stream(call: LanguageModelV4CallOptions): Promise<{ stream: ReadableStream<LanguageModelV4StreamPart> }> {
    const k = ++this.#next;
    this.prompts.push(call.prompt);
    for (const problem of promptProblems(call.prompt)) this.problems.push(`request ${k}: ${problem}`);
    if (this.#alive.size > 0) this.problems.push(`request ${k} started while request ${[...this.#alive].join(",")} was still streaming`);
    const lastMessage = call.prompt.at(-1);
    const wanted = lastMessage?.role === "tool" ? "plain" : (INTENTS.find((i) => lastMessage !== undefined && textOf(lastMessage).includes(`please ${i}`)) ?? "plain");
    if (wanted === "error") return Promise.reject(new Error("upstream 500"));
    const words: string[] = [];
    const parts: TimedPart[] = [{ part: { type: "stream-start", warnings: [] }, delayMs: 0 }, { part: { type: "text-start", id: "t" }, delayMs: 0 }];
    const sentences = wanted === "plain" ? 1 + (k % 3) : 1;
    for (let s = 0; s < sentences; s++) {
      const length = 2 + ((k + s) % 4);
      for (let w = 0; w < length; w++) {
        const word = `k${k}w${words.length}`;
        const end = w === length - 1 ? "." : "";
        parts.push({ part: { type: "text-delta", id: "t", delta: `${words.length === 0 ? "" : " "}${word}${end}` }, delayMs: 40 + ((k * 7 + w * 13) % 200) });
        words.push(word);
      }
    }
    parts.push({ part: { type: "text-end", id: "t" }, delayMs: 0 });
    if (wanted === "cut") {
      parts.push({ part: { type: "error", error: new Error("stream cut") }, delayMs: 10 });
    } else {
      const tool = wanted === "lookup" || wanted === "slow" || wanted === "broken" ? wanted : undefined;
      if (tool !== undefined) parts.push({ part: { type: "tool-call", toolCallId: `call_${k}`, toolName: tool, input: JSON.stringify({ orderId: `A${k}` }) }, delayMs: 0 });
      const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: words.length, text: words.length, reasoning: 0 } };
      const finishReason = tool === undefined ? { unified: "stop" as const, raw: "stop" } : { unified: "tool-calls" as const, raw: "tool-calls" };
      parts.push({ part: { type: "finish", usage, finishReason }, delayMs: 0 });
    }
    this.#alive.add(k);
    const done = (): void => void this.#alive.delete(k);
    call.abortSignal?.addEventListener("abort", done, { once: true });
    const generated: string[] = [];
    this.generated.set(k, generated);
    const stream = timedStream(parts, call.abortSignal, (ms, signal) => this.#clock.sleep(ms, signal)).pipeThrough(
      new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
        transform(part, controller) {
          if (part.type === "text-delta") generated.push(...part.delta.trim().replace(/\.$/, "").split(" "));
          if (part.type === "finish" || part.type === "error") done();
          controller.enqueue(part);
        },
        flush: done,
      }),
    );
    return Promise.resolve({ stream });
  }
}

/** A stored conversation of `messages` messages to resume, so runs reach the history trim. */
async function seedStore(clock: VirtualClock, messages: number): Promise<MemorySessionStore> {
  const store = new MemorySessionStore(clock);
  const transcript: TranscriptLine[] = [];
  for (let i = 0; transcript.length < messages; i++) {
    transcript.push({ role: "user", text: `old question ${i}` });
    if (transcript.length < messages) transcript.push({ role: "assistant", text: `old answer ${i}.` });
  }
  const history: ModelMessage[] = transcript.map((line) => ({ role: line.role, content: line.text }));
  await store.save({ sessionId: "sess_seeded", agent: "fuzz", transcript, toolCalls: [], history, updatedAt: clock.now() }, 600_000);
  return store;
}

describe("the pipeline session, driven by random caller, client, STT and model events", () => {
  it("sends only valid requests, speaks and records exactly what was generated, keeps audio inside replies and one turn alive", async () => {
    const n = runs(60);
    let steps = 0;
    const reached = { bargeInsideTool: 0, resume: 0, trim: 0, fatal: 0, committed: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 30, size: "max" }), fc.option(fc.integer({ min: 104, max: 119 }), { nil: undefined }), async (sequence, seeded) => {
        const clock = virtualClock();
        const model = new ObedientModel(clock);
        const store = seeded === undefined ? undefined : await seedStore(clock, seeded);
        const { session, link, stt, tts, started } = voiceSession(agentDef(clock), {
          clock,
          model: model.model,
          ...(store === undefined ? {} : { store, resumeId: "sess_seeded" }),
        });
        await started;
        let said = 0;
        let fatal = false;
        let requestsAtFatal = 0;
        let bargedInsideTool = false;
        const toolInFlight = (): boolean => {
          const settled = new Set(link.of("tool.completed").map((e) => e.toolCallId));
          return link.of("tool.called").some((e) => !settled.has(e.toolCallId));
        };
        const speak = async (text: string, confident: boolean): Promise<void> => {
          stt.current.speechStarted();
          stt.current.partial(text, confident ? 0.95 : 0.2);
          await clock.advance(300);
          stt.current.final(text, true);
        };
        /** Speech over the agent: `first`, then 300 ms on, `then` as the interim (no final yet). */
        const speakOver = async (first: string, then: string): Promise<void> => {
          stt.current.speechStarted();
          stt.current.partial(first);
          await clock.advance(300);
          stt.current.partial(then);
        };
        for (const s of sequence) {
          steps += 1;
          if (fatal) break;
          const cancelledBefore = link.of("reply.cancelled").length;
          const inTool = toolInFlight();
          if (isClientStep(s)) await playClientStep(s, link, clock);
          else {
            switch (s.kind) {
              case "say":
                await speak(`please ${s.intent} u${++said}`, s.confident);
                break;
              case "typed":
                link.send({ type: "user_text", text: `please ${s.intent} u${++said}` });
                break;
              case "interrupt":
                await speakOver("wait", "wait stop");
                if (s.thenSay) stt.current.final(`wait stop u${++said}`, true);
                break;
              case "mumble":
                await speakOver("hmm", "hmm");
                // No final follows: the watchdog may resume the reply it interrupted.
                await clock.advance(s.quiet ? 8000 : 0);
                break;
              case "drop":
                stt.current.drop();
                break;
              case "fatal":
                fatal = true;
                stt.failOpens = 1000;
                stt.current.drop();
                await clock.advance(120_000);
                requestsAtFatal = model.prompts.length;
                break;
            }
          }
          await clock.advance(0);
          if (inTool && link.of("reply.cancelled").length > cancelledBefore) bargedInsideTool = true;
          expect(model.problems).toEqual([]);
        }
        await clock.advance(60_000);
        await session.end();

        // Valid requests, one turn at a time (checked on every request).
        expect(model.problems).toEqual([]);
        // Fatal errors: at most one, the last thing the client saw, and the link closed after it.
        const fatals = link.events.filter((e) => e.type === "error.reported" && e.fatal);
        expect(fatals.length).toBe(fatal ? 1 : 0);
        if (fatal) expect(model.prompts.length, "model requests after the fatal error").toBe(requestsAtFatal);
        if (fatals[0] !== undefined) {
          expect(link.events.slice(link.events.indexOf(fatals[0]) + 1).map((e) => e.type)).toEqual([]);
          expect(link.closed).toBeDefined();
        }
        // Spoken: each request's words reach the TTS once, in order, as generated (a prefix when cut short).
        const spoken = tokens(tts.spoken.join(" "));
        const pushedOf = (k: number): number[] => spoken.filter(([r]) => r === k).map(([, w]) => w);
        for (const [k, words] of model.generated) {
          const pushed = pushedOf(k);
          expect(pushed, `request ${k} spoken`).toEqual(words.slice(0, pushed.length).map((_, i) => i));
        }
        // Committed: a recorded reply holds each of its requests' words whole, all of them spoken, and no reply shares a word with another.
        const committedWords = new Set<string>();
        for (const e of link.of("agent-transcript.committed")) {
          const found = tokens(e.text);
          for (const k of new Set(found.map(([r]) => r))) {
            const whole = (model.generated.get(k) ?? []).map((_, i) => i);
            expect(found.filter(([r]) => r === k).map(([, w]) => w), `request ${k} committed`).toEqual(whole);
            expect(pushedOf(k), `request ${k} committed but not all spoken`).toEqual(whole);
          }
          for (const [r, w] of found) {
            expect(committedWords.has(`${r}:${w}`), `k${r}w${w} committed twice`).toBe(false);
            committedWords.add(`${r}:${w}`);
          }
        }
        // History: what the model reads back of its own replies is a prefix of what it generated (what was heard).
        for (const prompt of model.prompts) {
          const assistantWords = tokens(prompt.filter((m) => m.role === "assistant").map(textOf).join(" "));
          for (const k of new Set(assistantWords.map(([r]) => r))) {
            const read = assistantWords.filter(([r]) => r === k).map(([, w]) => w);
            expect(read, `request ${k} in history`).toEqual(read.map((_, i) => i));
            expect(read.length).toBeLessThanOrEqual(model.generated.get(k)?.length ?? 0);
          }
        }
        // Audio only inside a reply: after it starts showing, before audio.completed / reply.cancelled / session.reset.
        let open = false;
        const openAt: boolean[] = [];
        for (const e of link.events) {
          if (e.type === "agent-transcript.updated") open = true;
          if (e.type === "audio.completed" || e.type === "reply.cancelled" || e.type === "session.reset") open = false;
          openAt.push(open);
        }
        for (const chunk of link.audioOut) expect(chunk.afterEvents > 0 && openAt[chunk.afterEvents - 1], `audio after event ${chunk.afterEvents}`).toBe(true);

        if (bargedInsideTool) reached.bargeInsideTool += 1;
        if (fatals.length > 0) reached.fatal += 1;
        reached.committed += committedWords.size;
        if (model.prompts.some((p) => p.some((m) => m.role === "user" && textOf(m).startsWith("[The caller interrupted you")))) reached.resume += 1;
        if (seeded !== undefined && model.prompts.some((p) => {
          const old = p.filter((m) => m.role === "user" && textOf(m).startsWith("old question "));
          return old.length > 0 && textOf(old[0] ?? p[0]!) !== "old question 0";
        })) reached.trim += 1;
      }),
      { seed: SEED, numRuns: n },
    );
    // The generator must keep reaching the hard cases, or the property proves little.
    expect(reached.bargeInsideTool / n).toBeGreaterThan(0.03);
    expect(reached.resume / n).toBeGreaterThan(0.03);
    expect(reached.trim / n).toBeGreaterThan(0.03);
    // And the runs must get somewhere: replies spoken and recorded whole.
    expect(reached.committed).toBeGreaterThan(n);
    report({
      property: "pipeline interleavings: caller, client, STT and model events",
      runs: n,
      inputs: steps,
      unit: `steps (${reached.bargeInsideTool} runs with a barge-in during a tool call, ${reached.resume} with a false-interruption resume, ${reached.trim} with a history trim, ${reached.fatal} ended by a fatal STT loss)`,
    });
  }, 180_000);
});
