// `switchboard dev` on an agent directory, the way an author works: edit offline.json, a helper a
// tool imports, agent.ts — each new connection gets the new behaviour with no restart, while a
// session already open keeps the version it started with; a broken edit is reported with its file
// and the last good version keeps serving.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { serveWith, type Served } from "../helpers/serve.js";
import { connect, type TestClient } from "../helpers/ws-client.js";

const switchboard = pathToFileURL(new URL("../../src/index.ts", import.meta.url).pathname).href;

let served: Served | undefined;
const clients: TestClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  served?.kill();
});

const agentTs = (greeting: string): string => `export default { name: "dev-agent", mode: "text", greeting: ${JSON.stringify(greeting)}, llm: { kind: "scripted", options: {} } };\n`;
const script = (hello: string): string =>
  JSON.stringify({ rules: [{ when: "\\bhello\\b", say: hello }, { when: "\\bping\\b", call: { tool: "answer", args: {} }, then: "{result}" }] });
const words = (answer: string): string => `export const answer: string = ${JSON.stringify(answer)};\n`;
const TOOL = `import { tool } from ${JSON.stringify(switchboard)};\nimport { answer } from "../lib/words.js";\nexport default tool({ description: "Answer", execute: () => answer });\n`;

/** A text agent in TypeScript: agent.ts, tools/answer.ts importing lib/words.ts, offline.json. */
async function agentDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sb-dev-"));
  await mkdir(join(dir, "tools"));
  await mkdir(join(dir, "lib"));
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  await writeFile(join(dir, "agent.ts"), agentTs("Hello one."));
  await writeFile(join(dir, "tools", "answer.ts"), TOOL);
  await writeFile(join(dir, "lib", "words.ts"), words("tool one"));
  await writeFile(join(dir, "offline.json"), script("script one"));
  return dir;
}

/** Resolves once the process output matches `pattern` `count` times; a generous bound turns a reload that never comes into a failure showing the output. */
async function outputs(pattern: RegExp, count: number, boundMs = 20_000): Promise<void> {
  const global = new RegExp(pattern.source, `g${pattern.flags}`);
  for (let waited = 0; (served?.output().match(global) ?? []).length < count; waited += 50) {
    if (waited > boundMs) throw new Error(`no ${String(pattern)} in the output:\n${served?.output() ?? ""}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function session(url: string): Promise<TestClient> {
  const client = await connect(`${url.replace(/^http/, "ws")}/websocket`);
  clients.push(client);
  await client.next("reply.completed", 0);
  return client;
}

const greeting = (client: TestClient): string | undefined => client.of("agent-transcript.committed")[0]?.text;

async function reply(client: TestClient, text: string): Promise<string | undefined> {
  await client.say(text);
  return client.of("agent-transcript.committed").at(-1)?.text;
}

describe("switchboard dev", () => {
  it("reloads the agent on every edit: new sessions get it, open ones keep theirs, a broken edit keeps the last good one", async () => {
    const dir = await agentDir();
    served = await serveWith("dev", [dir]);
    expect(served.output()).toMatch(/watching .*sb-dev-.*a change reloads the agent/);
    const first = await session(served.url);
    expect(greeting(first)).toBe("Hello one.");
    expect(await reply(first, "hello")).toBe("script one");
    expect(await reply(first, "ping")).toBe("tool one");

    // offline.json
    await writeFile(join(dir, "offline.json"), script("script two"));
    await outputs(/^reloaded "dev-agent" \(text\) after offline\.json changed: new sessions use it; 1 live session finishes on the previous version$/m, 1);
    const second = await session(served.url);
    expect(await reply(second, "hello")).toBe("script two");
    expect(await reply(first, "hello")).toBe("script one");

    // A helper the tool imports: the tool module and the helper are imported afresh.
    await writeFile(join(dir, "lib", "words.ts"), words("tool two"));
    await outputs(/^reloaded "dev-agent" .* after lib\/words\.ts changed/m, 1);
    const third = await session(served.url);
    expect(await reply(third, "ping")).toBe("tool two");
    expect(await reply(first, "ping")).toBe("tool one");

    // agent.ts
    await writeFile(join(dir, "agent.ts"), agentTs("Hello two."));
    await outputs(/^reloaded "dev-agent" .* after agent\.ts changed/m, 1);
    expect(greeting(await session(served.url))).toBe("Hello two.");

    // A syntax error: logged with its file; the last good version keeps serving.
    await writeFile(join(dir, "tools", "answer.ts"), `${TOOL}export const broken = {;\n`);
    await outputs(/reload failed/, 1);
    const failure = served
      .output()
      .split("\n")
      .filter((line) => line.includes("reload failed"))
      .map((line) => JSON.parse(line) as { level: number; file: string; changed: string[] })[0];
    expect(failure).toMatchObject({ level: 50, file: expect.stringMatching(/^tools\/answer\.ts:\d+:\d+$/) as string, changed: ["tools/answer.ts"] });
    const fifth = await session(served.url);
    expect(greeting(fifth)).toBe("Hello two.");
    expect(await reply(fifth, "ping")).toBe("tool two");

    // Fixed again: the next reload takes.
    await writeFile(join(dir, "tools", "answer.ts"), TOOL.replace("execute: () => answer", 'execute: () => `${answer}, fixed`'));
    await outputs(/^reloaded "dev-agent" .* after tools\/answer\.ts changed/m, 1);
    expect(await reply(await session(served.url), "ping")).toBe("tool two, fixed");
    expect(served.child.exitCode).toBe(null);
  }, 90_000);
});
