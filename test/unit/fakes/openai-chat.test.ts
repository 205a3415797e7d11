import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, generateText, isStepCount, jsonSchema, streamText, tool } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../../fakes/openai-chat.js";

let server: FakeOpenAiServer;

beforeEach(async () => {
  server = await startFakeOpenAiServer();
});

afterEach(async () => {
  await server.close();
});

function model(options: { includeUsage?: boolean } = {}) {
  return createOpenAICompatible({ name: "fake", baseURL: server.url, apiKey: "test", ...options }).chatModel("fake-model");
}

const weatherTool = tool({
  description: "Current weather for a city",
  inputSchema: jsonSchema<{ city: string }>({
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  }),
  execute: ({ city }) => ({ city, forecast: "sunny", celsius: 21 }),
});

function postChat(body: unknown): Promise<Response> {
  return fetch(`${server.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer test" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      tool_calls?: { index: number; id?: string; type?: string; function: { name?: string; arguments?: string } }[];
    };
    finish_reason: string | null;
  }[];
  usage?: Usage | null;
}

interface ErrorJson {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** The `data:` payloads of an SSE body. */
function sseData(text: string): string[] {
  return text
    .split("\n\n")
    .filter((event) => event.length > 0)
    .map((event) => {
      expect(event.startsWith("data: ")).toBe(true);
      return event.slice("data: ".length);
    });
}

describe("fake OpenAI server: wire format", () => {
  it("streams chat.completion.chunk events ending in a usage chunk and [DONE]", async () => {
    server.enqueue({ text: "Hello there, caller.", toolCalls: [{ name: "lookup", args: { q: "abc" }, id: "call_x" }] });
    const res = await postChat({
      model: "fake-model",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Chunk);
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^chatcmpl-/);
    for (const c of chunks) {
      expect(c.object).toBe("chat.completion.chunk");
      expect(c.model).toBe("fake-model");
      expect(typeof c.created).toBe("number");
    }
    expect(chunks[0]!.choices[0]).toMatchObject({ index: 0, delta: { role: "assistant" }, finish_reason: null });
    const content = chunks.flatMap((c) => c.choices).map((choice) => choice.delta.content ?? "").join("");
    expect(content).toBe("Hello there, caller.");

    const toolDeltas = chunks.flatMap((c) => c.choices).flatMap((choice) => choice.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toEqual({ index: 0, id: "call_x", type: "function", function: { name: "lookup", arguments: "" } });
    expect(toolDeltas.length).toBeGreaterThanOrEqual(3); // header + 2+ argument fragments
    expect(toolDeltas.map((d) => d.function.arguments ?? "").join("")).toBe('{"q":"abc"}');

    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    const usage = usageChunk.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    const finishChunk = chunks.at(-2)!;
    expect(finishChunk.choices[0]).toMatchObject({ delta: {}, finish_reason: "tool_calls" });
    expect(finishChunk.usage).toBeNull(); // every other chunk carries usage: null
  });

  it("omits the usage chunk unless stream_options.include_usage is set", async () => {
    const res = await postChat({ model: "fake-model", messages: [{ role: "user", content: "hi" }], stream: true });
    const data = sseData(await res.text());
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Chunk);
    expect(chunks.every((c) => c.choices.length === 1 && !("usage" in c))).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
  });

  it("answers a non-streaming request with a chat.completion object", async () => {
    server.enqueue({ toolCalls: [{ name: "lookup", args: { q: 1 }, id: "call_1" }] });
    const res = await postChat({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as { usage: Usage };
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "m",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":1}' } }],
          },
          finish_reason: "tool_calls",
        },
      ],
    });
    expect(body.usage.total_tokens).toBeGreaterThan(0);
  });

  it("lists models, 404s unknown routes with an OpenAI error body", async () => {
    const models = (await (await fetch(`${server.url}/models`)).json()) as { object: string; data: unknown[] };
    expect(models.object).toBe("list");
    expect(models.data[0]).toMatchObject({ id: "fake-model", object: "model" });

    const missing = await fetch(`${server.url}/embeddings`, { method: "POST", body: "{}" });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorJson).error).toMatchObject({ type: "invalid_request_error" });
    const wrongMethod = await fetch(`${server.url}/chat/completions`);
    expect(wrongMethod.status).toBe(404);
  });
});

describe("fake OpenAI server through the AI SDK provider", () => {
  it("streams text in deltas that concatenate to the scripted text, with usage", async () => {
    const text = "Thanks for calling Switchboard, how can I help?";
    server.enqueue({ text, usage: { promptTokens: 12, completionTokens: 9 } });
    const result = streamText({ model: model({ includeUsage: true }), prompt: "Hello", maxRetries: 0 });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(text);
    expect(await result.text).toBe(text);
    expect(await result.finishReason).toBe("stop");
    const usage = await result.usage;
    expect(usage.inputTokens).toBe(12);
    expect(usage.outputTokens).toBe(9);
    expect(usage.totalTokens).toBe(21);
    expect(server.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.violations).toEqual([]);
  });

  it("estimates usage when the turn does not script it", async () => {
    const result = await generateText({ model: model(), prompt: "Hello", maxRetries: 0 });
    expect(result.text).toBe("OK.");
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });

  it("round-trips a streamed tool call over two requests without violations", async () => {
    server.enqueue(
      { toolCalls: [{ name: "get_weather", args: { city: "Paris" }, id: "call_weather_1" }] },
      { text: "It is sunny in Paris, 21 degrees." },
    );
    const result = streamText({
      model: model(),
      prompt: "Weather in Paris?",
      tools: { get_weather: weatherTool },
      stopWhen: isStepCount(3),
      maxRetries: 0,
    });
    expect(await result.text).toBe("It is sunny in Paris, 21 degrees.");
    const steps = await result.steps;
    expect(steps).toHaveLength(2);
    expect(steps[0]!.toolCalls).toMatchObject([{ toolCallId: "call_weather_1", toolName: "get_weather", input: { city: "Paris" } }]);

    expect(server.requests).toHaveLength(2);
    const second = server.requests[1]!;
    const assistant = second.messages.find((m) => m.role === "assistant");
    expect(assistant?.tool_calls).toEqual([
      { id: "call_weather_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
    ]);
    const toolMessage = second.messages.find((m) => m.role === "tool");
    expect(toolMessage?.tool_call_id).toBe("call_weather_1");
    expect(JSON.parse(toolMessage?.content as string)).toEqual({ city: "Paris", forecast: "sunny", celsius: 21 });
    expect(server.violations).toEqual([]);
  });

  it("streams parallel tool calls by index and accepts both results", async () => {
    server.enqueue(
      {
        toolCalls: [
          { name: "get_weather", args: { city: "Paris" } },
          { name: "get_weather", args: { city: "Rome" } },
        ],
      },
      { text: "Both sunny." },
    );
    const result = streamText({
      model: model(),
      prompt: "Paris and Rome?",
      tools: { get_weather: weatherTool },
      stopWhen: isStepCount(3),
      maxRetries: 0,
    });
    expect(await result.text).toBe("Both sunny.");
    const [first] = await result.steps;
    expect(first!.toolCalls.map((c) => c.input)).toEqual([{ city: "Paris" }, { city: "Rome" }]);
    expect(server.requests[1]!.messages.filter((m) => m.role === "tool")).toHaveLength(2);
    expect(server.violations).toEqual([]);
  });

  it("round-trips a tool call with generateText (non-streaming), generating ids", async () => {
    server.enqueue({ toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }, { text: "Sunny." });
    const result = await generateText({
      model: model(),
      prompt: "Weather in Oslo?",
      tools: { get_weather: weatherTool },
      stopWhen: isStepCount(3),
      maxRetries: 0,
    });
    expect(result.text).toBe("Sunny.");
    const callId = result.steps[0]!.toolCalls[0]!.toolCallId;
    expect(callId).toMatch(/^call_/);
    expect(server.requests.map((r) => r.stream)).toEqual([undefined, undefined]);
    expect(server.requests[1]!.messages.find((m) => m.role === "tool")?.tool_call_id).toBe(callId);
    expect(server.violations).toEqual([]);
  });

  it("surfaces a scripted 500 as an APICallError", async () => {
    server.enqueue({ status: 500 });
    const error: unknown = await generateText({ model: model(), prompt: "Hi", maxRetries: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(500);
    expect((error as APICallError).isRetryable).toBe(true);
    expect((error as APICallError).message).toMatch(/server had an error/);

    server.enqueue({ status: 500 });
    const errors: unknown[] = [];
    const streamed = streamText({ model: model(), prompt: "Hi", maxRetries: 0, onError: ({ error: e }) => void errors.push(e) });
    await streamed.consumeStream();
    expect(errors).toHaveLength(1);
    expect(APICallError.isInstance(errors[0])).toBe(true);
  });

  it("records request bodies: model, messages and tools", async () => {
    await generateText({
      model: model(),
      system: "You are a phone agent.",
      prompt: "Hi",
      tools: { get_weather: weatherTool },
      maxRetries: 0,
    });
    const [request] = server.requests;
    expect(request?.model).toBe("fake-model");
    expect(request?.messages).toEqual([
      { role: "system", content: "You are a phone agent." },
      { role: "user", content: "Hi" },
    ]);
    expect(request?.tools).toEqual([
      {
        type: "function",
        function: expect.objectContaining({
          name: "get_weather",
          description: "Current weather for a city",
          parameters: expect.objectContaining({ required: ["city"] }),
        }),
      },
    ]);
  });

  it("hangs after N chunks; an abort ends streamText and the server answers the next request", async () => {
    server.enqueue({ text: "This reply will never finish streaming.", hangAfterChunks: 2 });
    const controller = new AbortController();
    let aborted = false;
    const result = streamText({
      model: model(),
      prompt: "Hi",
      maxRetries: 0,
      abortSignal: controller.signal,
      onAbort: () => {
        aborted = true;
      },
    });
    const parts: string[] = [];
    let received = "";
    for await (const part of result.stream) {
      parts.push(part.type);
      if (part.type === "text-delta") {
        received += part.text;
        controller.abort();
      }
    }
    expect(received).toBe("This ");
    expect(parts).toContain("abort");
    expect(aborted).toBe(true);

    const next = await generateText({ model: model(), prompt: "Still there?", maxRetries: 0 });
    expect(next.text).toBe("OK.");
    expect(server.requests).toHaveLength(2);
  });

  it("close() ends promptly with a hanging stream still open", async () => {
    server.enqueue({ text: "Never ends.", hangAfterChunks: 1 });
    const res = await postChat({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
    const reader = res.body!.getReader();
    await reader.read();
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(reader.read()).rejects.toThrow();
  });
});

describe("fake OpenAI server: scripting", () => {
  it("consumes turns FIFO, then falls back to the default turn", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ defaultTurn: { text: "Default." } });
    server.enqueue({ text: "First." }, { text: "Second." });
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) texts.push((await generateText({ model: model(), prompt: "Hi", maxRetries: 0 })).text);
    expect(texts).toEqual(["First.", "Second.", "Default."]);
  });

  it("delays the first byte and spaces chunks", async () => {
    server.enqueue({ text: "one two three", delayMs: 60, chunkDelayMs: 20 });
    const started = Date.now();
    const result = streamText({ model: model(), prompt: "Hi", maxRetries: 0 });
    expect(await result.text).toBe("one two three");
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });
});

describe("fake OpenAI server: request validation", () => {
  async function expect400(body: unknown, pattern: RegExp): Promise<void> {
    const res = await postChat(body);
    expect(res.status).toBe(400);
    const json = (await res.json()) as ErrorJson;
    expect(json.error).toMatchObject({ type: "invalid_request_error" });
    expect(json.error.message).toMatch(pattern);
    expect(server.violations.some((v) => pattern.test(v))).toBe(true);
  }

  it("rejects an orphan tool message", async () => {
    await expect400(
      {
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "tool", tool_call_id: "call_nope", content: "{}" },
        ],
      },
      /orphan tool result/,
    );
    expect(server.violations).toHaveLength(1);
    expect(server.requests).toHaveLength(1); // recorded even though rejected
  });

  it("rejects a tool message answering a call that is not the preceding assistant's", async () => {
    await expect400(
      {
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "f", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "call_a", content: "1" },
          { role: "user", content: "again" },
          { role: "tool", tool_call_id: "call_a", content: "2" },
        ],
      },
      /orphan/,
    );
  });

  it("rejects a dangling tool call", async () => {
    await expect400(
      {
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "f", arguments: "{}" } },
              { id: "call_b", type: "function", function: { name: "f", arguments: "{}" } },
            ],
          },
          { role: "tool", tool_call_id: "call_a", content: "1" },
          { role: "user", content: "and?" },
        ],
      },
      /call_b \(dangling tool call\)/,
    );
    expect(server.violations).toHaveLength(1);
  });

  it("rejects a dangling tool call at the end of the conversation", async () => {
    await expect400(
      {
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", tool_calls: [{ id: "call_z", type: "function", function: { name: "f", arguments: "{}" } }] },
        ],
      },
      /dangling/,
    );
  });

  it("rejects missing or empty messages, empty content, unknown roles and invalid JSON", async () => {
    await expect400({ model: "m" }, /'messages' is a required property/);
    await expect400({ model: "m", messages: [] }, /at least one message/);
    await expect400({ model: "m", messages: [{ role: "user", content: "" }] }, /user message must have non-empty content/);
    await expect400({ model: "m", messages: [{ role: "system" }, { role: "user", content: "x" }] }, /system message must have non-empty content/);
    await expect400({ model: "m", messages: [{ role: "robot", content: "x" }] }, /unknown role "robot"/);
    await expect400("{not json", /invalid JSON body|could not parse/);
    expect(server.violations).toHaveLength(6);
  });

  it("does not consume a scripted turn for a rejected request", async () => {
    server.enqueue({ text: "Kept." });
    await postChat({ model: "m", messages: [] });
    const result = await generateText({ model: model(), prompt: "Hi", maxRetries: 0 });
    expect(result.text).toBe("Kept.");
  });

  it("survives a client that disconnects mid-stream", async () => {
    server.enqueue({ text: "a b c d e f g", chunkDelayMs: 30 });
    const controller = new AbortController();
    const res = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const next = await generateText({ model: model(), prompt: "Hi", maxRetries: 0 });
    expect(next.text).toBe("OK.");
  });
});
