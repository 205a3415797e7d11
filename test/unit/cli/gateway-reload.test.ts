// `gateway.reload(agent)`, what `switchboard dev` swaps a changed agent in with: new sessions get
// the new definition, config and offline script; a session already open keeps the ones it
// started with; an invalid agent or a telephony change leaves what was set up in place.
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger, silentLogger } from "../../../src/log.js";
import { agent, ConfigError, tool, withTools } from "../../../src/manifest/index.js";
import { createGateway } from "../../../src/server/index.js";
import type { Gateway } from "../../../src/server/gateway-types.js";
import { connect, type TestClient } from "../../helpers/ws-client.js";

/** A text agent on the scripted brain whose greeting, tool result and script all say `version`. */
function version(label: string, extra: Record<string, unknown> = {}) {
  const def = withTools(agent({ name: "shop", mode: "text", greeting: `Greeting ${label}.`, llm: { kind: "scripted", options: {} }, ...extra }), {
    answer: tool({ description: "Answer", execute: () => `tool ${label}` }),
  });
  const script = {
    rules: [
      { when: "\\bhello\\b", say: `script ${label}` },
      { when: "\\bping\\b", call: { tool: "answer", args: {} }, then: "{result}" },
    ],
  };
  return { def, script };
}

const lastReply = (client: TestClient): string | undefined => client.of("agent-transcript.committed").at(-1)?.text;

let gateway: Gateway | undefined;
const clients: TestClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await gateway?.close();
  gateway = undefined;
});

async function open(url: string): Promise<TestClient> {
  const client = await connect(url);
  clients.push(client);
  await client.next("reply.completed", 0);
  return client;
}

describe("gateway.reload", () => {
  it("gives new sessions the new agent while an open session keeps the one it started with", async () => {
    const one = version("one");
    gateway = createGateway({ agent: one.def, script: one.script, logger: silentLogger, env: {}, processMetrics: false });
    const { url } = await gateway.listen(0);
    const ws = `${url.replace(/^http/, "ws")}/websocket`;

    const before = await open(ws);
    expect(before.of("agent-transcript.committed")[0]?.text).toBe("Greeting one.");
    await before.say("hello");
    expect(lastReply(before)).toBe("script one");

    const two = version("two");
    expect(gateway.reload(two).greeting).toBe("Greeting two.");
    expect(gateway.config.greeting).toBe("Greeting two.");
    expect(((await (await fetch(`${url}/client-config`)).json()) as { greeting: string }).greeting).toBe("Greeting two.");

    const after = await open(ws);
    expect(after.of("agent-transcript.committed")[0]?.text).toBe("Greeting two.");
    await after.say("hello");
    expect(lastReply(after)).toBe("script two");
    await after.say("ping");
    expect(lastReply(after)).toBe("tool two");

    // The session opened before the reload: its script and its tools, to the end.
    await before.say("hello");
    expect(lastReply(before)).toBe("script one");
    await before.say("ping");
    expect(lastReply(before)).toBe("tool one");
  });

  it("refuses an invalid agent with a ConfigError and keeps serving the current one", async () => {
    const one = version("one");
    gateway = createGateway({ agent: one.def, script: one.script, logger: silentLogger, env: {}, processMetrics: false });
    const { url } = await gateway.listen(0);
    const broken = version("broken", { maxSteps: -1 });
    expect(() => gateway?.reload(broken)).toThrow(ConfigError);
    expect(gateway.config.greeting).toBe("Greeting one.");
    const client = await open(`${url.replace(/^http/, "ws")}/websocket`);
    expect(client.of("agent-transcript.committed")[0]?.text).toBe("Greeting one.");
  });

  it("says that a telephony change needs a restart, and keeps the carriers mounted at start", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
    // A pipeline agent (a text agent has no audio to take calls with); no session starts here.
    const plain = agent({ name: "phone", greeting: "Hello." });
    gateway = createGateway({ agent: plain, logger, env: {}, processMetrics: false });
    const { url } = await gateway.listen(0);
    gateway.reload({ def: agent({ name: "phone", greeting: "Hello.", telephony: ["twilio"] }) });
    const warning = lines.map((line) => JSON.parse(line) as { msg: string; mounted?: unknown; wanted?: unknown }).find((entry) => /telephony changed/.test(entry.msg));
    expect(warning).toMatchObject({ msg: expect.stringMatching(/need a restart/) as string, mounted: [], wanted: ["twilio"] });
    expect((await fetch(`${url}/telephony/twilio/voice`, { method: "POST" })).status).toBe(404);
    // Reloading the same agent again says nothing new about telephony.
    lines.length = 0;
    gateway.reload({ def: plain });
    expect(lines.some((line) => /telephony changed/.test(line))).toBe(false);
  });
});
