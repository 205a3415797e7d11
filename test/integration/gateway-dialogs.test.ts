// Dialogs through a real text session (docs/config.md, "Dialogs"): a dialog tool out of state is
// refused with where the conversation is; in state it runs and moves the dialog; syncState shows
// the position; and the position survives a resume.
import { Type } from "@sinclair/typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, dialog, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";
import { connect } from "../helpers/ws-client.js";

const verify = dialog({
  id: "verify",
  initial: "ask_account",
  states: {
    ask_account: { instruction: "Ask for the account number and call find_account.", on: { FOUND: "ask_pin" } },
    ask_pin: { instruction: "Ask for the PIN and call check_pin.", on: { VERIFIED: "verified" } },
    verified: { instruction: "Help the caller with their account.", type: "final" },
  },
});

const findAccount = verify.tool({
  description: "Find the caller's account",
  parameters: Type.Object({ account: Type.String() }),
  allowedIn: ["ask_account"],
  sends: "FOUND",
  execute: ({ account }) => `Found account ${account}.`,
});

const checkPin = verify.tool({
  description: "Check the caller's PIN",
  parameters: Type.Object({ pin: Type.String() }),
  allowedIn: ["ask_pin"],
  sends: "VERIFIED",
  execute: ({ pin }) => (pin === "4567" ? "The PIN matches." : { text: "Wrong PIN.", isError: true }),
});

let fake: FakeOpenAiServer;
let gateway: Gateway;
let base: string;

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
  const def = withTools(
    agent({
      name: "bank",
      mode: "text",
      greeting: "Welcome to the bank.",
      llm: { kind: "openai-compatible", options: { baseURL: fake.url, model: "fake-model" } },
      maxRetries: 0,
      dialogs: { verify },
      syncState: (_session, { dialogs }) => ({ verify: dialogs.verify?.state ?? null, verified: dialogs.verify?.done ?? false }),
    }),
    { find_account: findAccount, check_pin: checkPin },
  );
  gateway = createGateway({ agent: def, logger: silentLogger, env: {}, processMetrics: false });
  base = (await gateway.listen(0)).url;
});

afterEach(async () => {
  await gateway.close();
  await fake.close();
});

const wsUrl = (query = ""): string => `${base.replace(/^http/, "ws")}/websocket${query}`;

describe("a dialog in a text session", () => {
  it("refuses a tool out of state, runs one in state and moves the dialog; syncState shows it; a resume keeps it", async () => {
    fake.enqueue(
      { toolCalls: [{ name: "check_pin", args: { pin: "4567" } }] },
      { text: "What is your account number?" },
      { toolCalls: [{ name: "find_account", args: { account: "12345" } }] },
      { text: "And your PIN?" },
    );
    const first = await connect(wsUrl());
    const configured = first.events[0]?.type === "session.configured" ? first.events[0] : undefined;
    await first.say("my PIN is 4567");
    expect(first.of("tool.completed")[0]).toMatchObject({
      isError: true,
      result: "check_pin cannot run now: the dialog verify is at ask_account. First: Ask for the account number and call find_account.",
    });
    // The model read the refusal; the advertised list did not change.
    expect(String(fake.requests[1]?.messages.find((m) => m.role === "tool")?.content)).toContain("the dialog verify is at ask_account");
    expect(fake.requests[1]?.tools?.map((t) => t.function.name)).toEqual(["find_account", "check_pin"]);
    expect(first.of("state.updated").map((e) => e.state)).toEqual([{ verify: "ask_account", verified: false }]);

    await first.say("account 12345");
    expect(first.of("tool.completed")[1]).toMatchObject({
      result: "Found account 12345.\n[guidance] Dialog verify is now at ask_pin. Next: Ask for the PIN and call check_pin.",
    });
    expect(first.of("tool.completed")[1]).not.toHaveProperty("isError");
    expect(first.of("state.updated").at(-1)?.state).toEqual({ verify: "ask_pin", verified: false });
    first.close();
    await first.closed;

    // Resumed on a new socket: the dialog is where it was, so check_pin now runs and finishes it.
    fake.enqueue({ toolCalls: [{ name: "check_pin", args: { pin: "4567" } }] }, { text: "You are verified." });
    const second = await connect(wsUrl(`?sessionId=${configured?.sessionId ?? ""}&resumeKey=${configured?.resumeKey ?? ""}`));
    await second.next("history.restored", 0);
    expect(second.of("state.updated").map((e) => e.state)).toEqual([{ verify: "ask_pin", verified: false }]);
    await second.say("4567");
    expect(second.of("tool.completed")[0]).toMatchObject({
      result: "The PIN matches.\n[guidance] Dialog verify is done (at verified). Next: Help the caller with their account.",
    });
    expect(second.of("state.updated").at(-1)?.state).toEqual({ verify: "verified", verified: true });
    expect(fake.violations).toEqual([]);
    second.close();
  });

  it("starts a reset conversation's dialogs over", async () => {
    fake.enqueue({ toolCalls: [{ name: "find_account", args: { account: "1" } }] }, { text: "PIN?" }, { toolCalls: [{ name: "check_pin", args: { pin: "4567" } }] }, { text: "Account first." });
    const client = await connect(wsUrl());
    await client.say("account 1");
    expect(client.of("state.updated").at(-1)?.state).toEqual({ verify: "ask_pin", verified: false });
    client.send({ type: "reset" });
    await client.next("session.reset", 0);
    await client.say("4567");
    expect(client.of("tool.completed").at(-1)).toMatchObject({ isError: true, result: expect.stringContaining("the dialog verify is at ask_account") as string });
    expect(client.of("state.updated").at(-1)?.state).toEqual({ verify: "ask_account", verified: false });
    client.close();
  });
});
