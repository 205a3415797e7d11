import { Type } from "@sinclair/typebox";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  ConfigError,
  DialogStore,
  ToolDefinitionError,
  agent,
  dialog,
  dialogPositions,
  dialogToolOf,
  toAgentConfig,
  withTools,
  type AgentConfigSource,
  type DialogOptions,
  type DialogPosition,
} from "../../../src/manifest/index.js";
import { toAiTool } from "../../../src/manifest/ai-tool.js";
import { callTool, toolContext } from "../../../src/testing/index.js";
import { configIssues } from "../../helpers/config-issues.js";

const verify = dialog({
  id: "verify",
  initial: "ask_account",
  states: {
    ask_account: { instruction: "Ask for the account number and call find_account.", on: { FOUND: "ask_pin" } },
    ask_pin: { instruction: "Ask for the four-digit PIN and call check_pin.", on: { VERIFIED: "verified", LOCKED: "locked" } },
    verified: { instruction: "The caller is verified: help them with their account.", type: "final" },
    locked: { instruction: "Too many wrong PINs: offer a callback.", type: "final" },
  },
});

interface Caller {
  account?: string;
  tries: number;
}

const findAccount = verify.tool({
  description: "Find the caller's account",
  parameters: Type.Object({ account: Type.String() }),
  allowedIn: ["ask_account"],
  sends: "FOUND",
  execute: ({ account }, ctx) => {
    (ctx.session as Caller).account = account;
    return { text: `Found account ${account}.`, details: { account } };
  },
});

const checkPin = verify.tool({
  description: "Check the caller's PIN",
  parameters: Type.Object({ pin: Type.String() }),
  allowedIn: ["ask_pin"],
  sends: (result) => (result.isError === true ? undefined : "VERIFIED"),
  execute: ({ pin }) => (pin === "4567" ? "The PIN matches." : { text: "That PIN does not match.", isError: true }),
});

describe("dialog()", () => {
  it("refuses a broken definition with every problem named by its path", () => {
    const issues = configIssues(() =>
      dialog({
        id: "verify.me",
        initial: "strat" as "start",
        states: {
          start: { instruction: " ", on: { GO: "chek" as "start" } },
          stuck: { instruction: "Nothing to do." },
          done: { instruction: "Done.", type: "final", on: { AGAIN: "start" } },
        },
      }),
    );
    expect(issues).toEqual([
      { path: "id", message: 'the id must be a name of letters, digits and _ starting with a letter (got "verify.me").' },
      { path: "states.start.instruction", message: "must be a non-empty string: what the model must do while the dialog is here." },
      { path: "states.start.on.GO", message: 'unknown target state "chek". States: start, stuck, done.' },
      { path: "states.stuck", message: 'has no way out: add on: { EVENT: "<state>" }, or mark it type: "final".' },
      { path: "states.done.on", message: 'a final state handles no events: remove `on`, or drop type: "final".' },
      { path: "initial", message: 'must name one of the states (got "strat"). Did you mean `start`? States: start, stuck, done.' },
    ]);
  });

  it("names the dialog in the error, and refuses an unknown field, a missing state table and a bad event name", () => {
    const noStates: unknown = { id: "x", initial: "a", states: {} };
    expect(() => dialog(noStates as DialogOptions<"a">)).toThrow(/^Invalid dialog "x": 1 problem\n {2}- states: must be an object of states by name/);
    const issues = configIssues(() =>
      dialog({ id: "x", initial: "a", states: { a: { instruction: "Go.", on: { "*": "b" }, kind: "final" } as never, b: { instruction: "Done.", type: "final" } } } as never),
    );
    expect(issues).toEqual([
      { path: "states.a.kind", message: "`kind` is not a field of a dialog state." },
      { path: "states.a.on.*", message: 'an event name must be a name of letters, digits and _ starting with a letter (got "*").' },
    ]);
  });

  it("starts at `initial` and moves by its transitions; an unhandled event leaves it where it is", async () => {
    const dialogs = new DialogStore();
    expect(verify.position(dialogs)).toEqual({ state: "ask_account", done: false, instruction: "Ask for the account number and call find_account." });
    const session: Caller = { tries: 0 };
    await callTool(findAccount, { account: "12345" }, toolContext({ session, dialogs }), "find_account");
    expect(verify.position(dialogs).state).toBe("ask_pin");
    await callTool(checkPin, { pin: "0000" }, toolContext({ session, dialogs }), "check_pin");
    expect(verify.position(dialogs).state).toBe("ask_pin");
    await callTool(checkPin, { pin: "4567" }, toolContext({ session, dialogs }), "check_pin");
    expect(verify.position(dialogs)).toEqual({ state: "verified", done: true, instruction: "The caller is verified: help them with their account." });
    expect(dialogs.toJSON()).toEqual({ verify: "verified" });
  });

  it("reads a stored state the definition no longer has as its start", () => {
    expect(verify.position(DialogStore.from({ verify: "gone" })).state).toBe("ask_account");
    expect(DialogStore.from({ verify: 3, other: "x" }).toJSON()).toEqual({ other: "x" });
  });
});

describe("dialog types", () => {
  it("infer the state names: initial, targets and allowedIn must be among them", () => {
    expectTypeOf(verify.position(new DialogStore())).toEqualTypeOf<DialogPosition<"ask_account" | "ask_pin" | "verified" | "locked">>();
    const typed = (): void => {
      // @ts-expect-error: "nowhere" is not a state of this dialog
      dialog({ id: "t", initial: "a", states: { a: { instruction: "A.", on: { GO: "nowhere" } }, b: { instruction: "B.", type: "final" } } });
      // @ts-expect-error: "c" is not a state
      dialog({ id: "t", initial: "c", states: { a: { instruction: "A.", type: "final" } } });
      // @ts-expect-error: "ask_pn" is not a state of verify
      verify.tool({ description: "x", allowedIn: ["ask_pn"], execute: () => "" });
    };
    expect(typeof typed).toBe("function");
    expectTypeOf<Parameters<NonNullable<typeof checkPin.execute>>[0]>().toEqualTypeOf<{ pin: string }>();
  });
});

describe("a dialog's tools", () => {
  it("refuse out of state without running, saying where the dialog is and what must happen first", async () => {
    let ran = false;
    const early = verify.tool({ description: "Early", allowedIn: ["ask_pin"], execute: () => void (ran = true) });
    const outcome = await callTool(early, {}, toolContext({ session: { tries: 0 } }), "check_pin");
    expect(outcome).toEqual({
      status: "refused",
      result: { text: "check_pin cannot run now: the dialog verify is at ask_account. First: Ask for the account number and call find_account.", isError: true },
    });
    expect(ran).toBe(false);
  });

  it("refuse in their own execute too, for a host that skips the gate (a direct call)", async () => {
    const named = withTools(agent({ name: "x", dialogs: { verify } }), { check_pin: checkPin }).tools.check_pin;
    expect(named).toBe(checkPin);
    const result = await checkPin.execute?.({ pin: "4567" }, toolContext({ session: { tries: 0 } }));
    expect(result).toEqual({ text: "check_pin cannot run now: the dialog verify is at ask_account. First: Ask for the account number and call find_account.", isError: true });
  });

  it("carry the position in the details and in the text the model reads, after the event", async () => {
    const outcome = await callTool(findAccount, { account: "12345" }, toolContext({ session: { tries: 0 } }), "find_account");
    expect(outcome).toEqual({
      status: "ok",
      result: {
        text: "Found account 12345.\n[guidance] Dialog verify is now at ask_pin. Next: Ask for the four-digit PIN and call check_pin.",
        details: { account: "12345", dialog: { state: "ask_pin", done: false, instruction: "Ask for the four-digit PIN and call check_pin." } },
      },
    });
  });

  it("send a named event only on success, and report a done dialog as done", async () => {
    const dialogs = DialogStore.from({ verify: "ask_pin" });
    const wrong = await callTool(checkPin, { pin: "1111" }, toolContext({ session: { tries: 0 }, dialogs }), "check_pin");
    expect(wrong.result).toMatchObject({ isError: true, text: "That PIN does not match.\n[guidance] Dialog verify is now at ask_pin. Next: Ask for the four-digit PIN and call check_pin." });
    const right = await callTool(checkPin, { pin: "4567" }, toolContext({ session: { tries: 0 }, dialogs }), "check_pin");
    expect(right.result.text).toBe("The PIN matches.\n[guidance] Dialog verify is done (at verified). Next: The caller is verified: help them with their account.");
    expect(right.result.details).toEqual({ dialog: { state: "verified", done: true, instruction: "The caller is verified: help them with their account." } });
    const after = await callTool(checkPin, { pin: "4567" }, toolContext({ session: { tries: 0 }, dialogs }), "check_pin");
    expect(after.result.text).toBe("check_pin cannot run now: the dialog verify is at verified (done). First: The caller is verified: help them with their account.");
  });

  it("check their own gate after the dialog's", async () => {
    const gated = verify.tool({
      description: "Gated",
      allowedIn: ["ask_account"],
      gate: () => ({ reason: "the line is busy", recover: "Try again." }),
      execute: () => "ran",
    });
    expect((await callTool(gated, {}, toolContext({ session: {} }), "gated")).result.text).toBe("gated cannot run now: the line is busy. Try again.");
    const elsewhere = DialogStore.from({ verify: "ask_pin" });
    expect((await callTool(gated, {}, toolContext({ session: {}, dialogs: elsewhere }), "gated")).result.text).toMatch(/the dialog verify is at ask_pin/);
  });

  it("are refused at definition when they name an unknown state or an event none of their states handles", () => {
    expect(() => verify.tool({ description: "x", allowedIn: ["ask_pn" as "ask_pin"], execute: () => "" })).toThrow(
      new ToolDefinitionError('dialog verify: tool(): allowedIn[0]: unknown state "ask_pn". Did you mean `ask_pin`? States: ask_account, ask_pin, verified, locked.'),
    );
    expect(() => verify.tool({ description: "x", allowedIn: [], execute: () => "" })).toThrow(/`allowedIn` must list the states/);
    expect(() => verify.tool({ description: "x", allowedIn: ["ask_account"], sends: "VERIFIED", execute: () => "" })).toThrow(
      /sends: no state the tool runs in \(ask_account\) handles `VERIFIED`/,
    );
  });

  it("fail a call whose sends function names an event the dialog does not have", async () => {
    const typo = verify.tool({ description: "x", allowedIn: ["ask_account"], sends: () => "FUOND", execute: () => "ok" });
    const outcome = await callTool(typo, {}, toolContext({ session: {} }), "typo");
    expect(outcome).toMatchObject({ status: "failed", result: { isError: true, text: expect.stringContaining('sends returned "FUOND", which no state of dialog verify handles') as string } });
  });

  it("refuse details with their own `dialog` field rather than overwrite it", async () => {
    const clash = verify.tool({ description: "x", allowedIn: ["ask_account"], execute: () => ({ text: "t", details: { dialog: 1 } }) });
    expect((await callTool(clash, {}, toolContext({ session: {} }), "clash")).result.text).toMatch(/have their own `dialog` field/);
  });

  it("is listed as a tool of its dialog", () => {
    expect(dialogToolOf(checkPin)).toEqual({ dialog: verify, allowedIn: ["ask_pin"] });
  });
});

describe("where a conversation's positions are kept", () => {
  it("without ctx.dialogs, by the session object: one conversation per object, under the AI SDK too", async () => {
    const find = toAiTool(findAccount);
    const pin = toAiTool(checkPin);
    const conversation: Caller = { tries: 0 };
    const other: Caller = { tries: 0 };
    const options = (context: Caller, id: string) => ({ toolCallId: id, messages: [], context });
    await expect(pin.execute?.({ pin: "4567" }, options(conversation, "c0"))).rejects.toThrow("cannot run now: the dialog verify is at ask_account");
    const found = (await find.execute?.({ account: "9" }, options(conversation, "c1"))) as { dialog: { state: string }; text: string };
    expect(found.dialog.state).toBe("ask_pin");
    expect(((await pin.execute?.({ pin: "4567" }, options(conversation, "c2"))) as { dialog: { state: string } }).dialog.state).toBe("verified");
    // Another conversation starts at the beginning.
    await expect(pin.execute?.({ pin: "4567" }, options(other, "c3"))).rejects.toThrow("the dialog verify is at ask_account");
  });

  it("with neither a store nor a session object, refuses rather than start a fresh dialog each call", async () => {
    const outcome = await callTool(findAccount, { account: "1" }, toolContext({ dialogs: undefined }), "find_account");
    expect(outcome).toMatchObject({ status: "failed", result: { text: expect.stringContaining("dialog verify: nowhere to keep this conversation's position") as string } });
  });

  it("are listed by dialog for syncState", () => {
    expect(dialogPositions({ verify }, DialogStore.from({ verify: "locked" }))).toEqual({
      verify: { state: "locked", done: true, instruction: "Too many wrong PINs: offer a callback." },
    });
  });
});

describe("agent({ dialogs })", () => {
  it("registers dialogs by id; a tool of an unregistered dialog, a wrong key or a non-dialog is refused", () => {
    expect(() => toAgentConfig(withTools(agent({ name: "ok", mode: "text", dialogs: { verify } }), { find_account: findAccount }))).not.toThrow();
    const issues = configIssues(() =>
      toAgentConfig(
        withTools(agent({ name: "bad", mode: "text", dialogs: { verification: verify, other: {} as never } }), { find_account: findAccount }),
      ),
    );
    expect(issues).toEqual([
      { path: "dialogs.verification", message: 'this dialog\'s id is "verify": register it under its id, as dialogs: { verify }.' },
      { path: "dialogs.other", message: "is an object, not a dialog; pass what dialog({ id, initial, states }) returns." },
      { path: "tools.find_account", message: 'is a tool of dialog "verify", which this agent does not register: add dialogs: { verify } to agent({...}).' },
    ]);
    const twin = dialog({ id: "verify", initial: "a", states: { a: { instruction: "A.", type: "final" } } });
    expect(configIssues(() => toAgentConfig(withTools(agent({ name: "twin", mode: "text", dialogs: { verify: twin } }), { find_account: findAccount })))).toEqual([
      {
        path: "tools.find_account",
        message: 'is a tool of dialog "verify", which this agent does not register (the dialog registered as verify is another definition with the same id): add dialogs: { verify } to agent({...}).',
      },
    ]);
    expect(configIssues(() => toAgentConfig({ name: "arr", mode: "text", dialogs: [verify] } as unknown as AgentConfigSource))).toEqual([
      { path: "dialogs", message: "must be an object of dialogs keyed by their id, such as dialogs: { verify } (got an array)." },
    ]);
  });

  it("is honoured: no 'not honoured yet' warning", () => {
    const warnings: string[] = [];
    toAgentConfig(agent({ name: "w", mode: "text", dialogs: { verify } }), { warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
  });

  it("gives ConfigError for dialog() itself", () => {
    expect(() => dialog(null as never)).toThrow(ConfigError);
  });
});
