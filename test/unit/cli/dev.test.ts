// The parts of `switchboard dev`: the debounced watcher over the agent directory, what a failed
// reload blames, and the reload loop (one at a time, failures keep the previous agent).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { blame, ignoredChange, reloader, watchTree, type Watch } from "../../../src/cli/dev.js";
import { createLogger } from "../../../src/log.js";
import { ConfigError, type AgentConfig } from "../../../src/manifest/index.js";
import type { LoadedAgent } from "../../../src/server/loader.js";

interface FakeWatcher {
  readonly path: string;
  readonly recursive: boolean;
  closed: boolean;
  fire(name: string | null): void;
  fail(error: Error): void;
}

/** A stand-in for fs.watch that records each watcher and lets the test fire its events. */
function fakeWatch(): { watch: Watch; watchers: FakeWatcher[]; open(): FakeWatcher[] } {
  const watchers: FakeWatcher[] = [];
  const watch: Watch = (path, { recursive }, listener) => {
    let onError: (error: Error) => void = () => {};
    const watcher: FakeWatcher = { path, recursive, closed: false, fire: (name) => listener("change", name), fail: (error) => onError(error) };
    watchers.push(watcher);
    return {
      close: () => void (watcher.closed = true),
      on: (_event: "error", listener: (error: Error) => void) => (onError = listener),
    };
  };
  return { watch, watchers, open: () => watchers.filter((w) => !w.closed) };
}

describe("watchTree", () => {
  it("reports the changed files once changes have stopped for 200 ms, ignoring node_modules and .git", async () => {
    const clock = virtualClock();
    const fake = fakeWatch();
    const calls: (readonly string[])[] = [];
    const tree = watchTree("/agent", (files) => calls.push(files), { clock, watch: fake.watch, recursive: true });
    expect(fake.watchers.map((w) => [w.path, w.recursive])).toEqual([["/agent", true]]);
    const root = fake.watchers[0]!;
    root.fire("tools/lookup.ts");
    await clock.advance(150);
    root.fire("offline.json");
    root.fire("node_modules/dep/index.js");
    await clock.advance(199);
    expect(calls).toEqual([]);
    await clock.advance(1);
    expect(calls).toEqual([["offline.json", "tools/lookup.ts"]]);
    root.fire(".git/index");
    root.fire("node_modules/x.js");
    await clock.advance(1000);
    expect(calls).toHaveLength(1);
    // Closed: a pending change is dropped and the watcher let go.
    root.fire("agent.ts");
    tree.close();
    await clock.advance(1000);
    expect(calls).toHaveLength(1);
    expect(root.closed).toBe(true);
  });

  it("without recursion, watches each directory but node_modules and .git, and follows directories added and removed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sb-dev-watch-"));
    await mkdir(join(dir, "tools"));
    await mkdir(join(dir, "node_modules", "dep"), { recursive: true });
    await mkdir(join(dir, ".git"));
    const clock = virtualClock();
    const fake = fakeWatch();
    const calls: (readonly string[])[] = [];
    const errors: Error[] = [];
    const tree = watchTree(dir, (files) => calls.push(files), { clock, watch: fake.watch, recursive: false, onError: (error) => errors.push(error) });
    expect(fake.open().map((w) => [w.path, w.recursive])).toEqual([
      [dir, false],
      [join(dir, "tools"), false],
    ]);
    fake.open()[1]!.fire("lookup.ts");
    await clock.advance(200);
    expect(calls).toEqual([["tools/lookup.ts"]]);

    await mkdir(join(dir, "workflows"));
    fake.open()[0]!.fire("workflows");
    expect(fake.open().map((w) => w.path)).toContain(join(dir, "workflows"));
    await rm(join(dir, "tools"), { recursive: true });
    fake.open()[0]!.fire("tools");
    expect(fake.open().map((w) => w.path)).toEqual([dir, join(dir, "workflows")]);
    await clock.advance(200);
    expect(calls).toEqual([["tools/lookup.ts"], ["tools", "workflows"]]);

    fake.open()[0]!.fail(new Error("watch failed"));
    expect(errors.map((e) => e.message)).toEqual(["watch failed"]);
    tree.close();
    expect(fake.open()).toEqual([]);
  });

  it("knows which paths are ignored", () => {
    expect(ignoredChange("node_modules/a/b.js")).toBe(true);
    expect(ignoredChange("tools/node_modules/x.js")).toBe(true);
    expect(ignoredChange(".git/HEAD")).toBe(true);
    expect(ignoredChange("tools/git.ts")).toBe(false);
    expect(ignoredChange(".gitignore")).toBe(false);
  });
});

describe("blame", () => {
  it("names the file a failed load is about: the loader's problem, a path in the stack, else the changed files", () => {
    const syntax = new ConfigError("Cannot load agent", [{ path: "tools/lookup.ts:4:1", message: "syntax error: Expected }" }]);
    expect(blame(syntax, "/agent", ["tools/lookup.ts"])).toBe("tools/lookup.ts:4:1");
    const json = new ConfigError("Cannot load agent", [{ path: "offline.json", message: "is not valid JSON" }]);
    expect(blame(json, "/agent", ["offline.json", "agent.ts"])).toBe("offline.json");
    const thrown = new Error("boom");
    thrown.stack = "Error: boom\n    at file:///elsewhere/lib.js:1:1\n    at file:///agent/tools/order.ts?switchboard-reload=3:7:9";
    expect(blame(thrown, "/agent", ["tools/order.ts"])).toBe("tools/order.ts:7:9");
    const field = new ConfigError('Invalid agent "a"', [{ path: "maxSteps", message: "must be ≥ 1" }]);
    expect(blame(field, "/agent", ["agent.ts"])).toBe("agent.ts");
  });
});

/** A stand-in for what loadAgent returns (the reloader only hands it to the gateway). */
const loaded = (name: string): LoadedAgent => ({ def: { name }, config: { name }, dir: "/agent", toolFiles: {} }) as unknown as LoadedAgent;

function harness(sessions = 0) {
  const lines: string[] = [];
  const printed: string[] = [];
  const swapped: string[] = [];
  const log = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
  const gateway = {
    sessions,
    reload: (agent: LoadedAgent): AgentConfig => {
      swapped.push(agent.config.name);
      return { name: agent.config.name, mode: "text" } as AgentConfig;
    },
  };
  return { lines, printed, swapped, gateway, log, print: (line: string) => printed.push(line) };
}

describe("reloader", () => {
  it("swaps a freshly loaded agent in and prints a line saying who gets it", async () => {
    const h = harness(2);
    const generations: number[] = [];
    const onChange = reloader({ dir: "/agent", gateway: h.gateway, log: h.log, print: h.print, load: (generation) => (generations.push(generation), Promise.resolve(loaded("v2"))) });
    await onChange(["offline.json"]);
    await onChange(["tools/a.ts"]);
    expect(generations).toEqual([1, 2]);
    expect(h.swapped).toEqual(["v2", "v2"]);
    expect(h.printed[0]).toBe('reloaded "v2" (text) after offline.json changed: new sessions use it; 2 live sessions finish on the previous version\n');
  });

  it("keeps the previous agent when the load fails, logging the error with its file", async () => {
    const h = harness();
    const failure = new ConfigError("Cannot load agent", [{ path: "tools/a.ts:3:5", message: "syntax error: Unexpected token" }]);
    const onChange = reloader({ dir: "/agent", gateway: h.gateway, log: h.log, print: h.print, load: () => Promise.reject(failure) });
    await onChange(["tools/a.ts"]);
    expect(h.swapped).toEqual([]);
    expect(h.printed).toEqual([]);
    const entry = JSON.parse(h.lines.find((line) => line.includes("reload failed")) ?? "{}") as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 50, file: "tools/a.ts:3:5", changed: ["tools/a.ts"], msg: "reload failed; the previous agent keeps serving" });
    expect(JSON.stringify(entry.err)).toMatch(/Unexpected token/);
  });

  it("runs one reload at a time: changes during one make a single reload after it, with all their files", async () => {
    const h = harness();
    const pending: ((agent: LoadedAgent) => void)[] = [];
    const onChange = reloader({ dir: "/agent", gateway: h.gateway, log: h.log, print: h.print, load: () => new Promise((resolve) => pending.push(resolve)) });
    const first = onChange(["agent.ts"]);
    void onChange(["offline.json"]);
    const last = onChange(["tools/a.ts"]);
    expect(pending).toHaveLength(1);
    pending[0]!(loaded("one"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(pending).toHaveLength(2);
    pending[1]!(loaded("two"));
    await first;
    await last;
    expect(h.swapped).toEqual(["one", "two"]);
    expect(h.printed.map((line) => line.replace(/:.*/s, ""))).toEqual(['reloaded "one" (text) after agent.ts changed', 'reloaded "two" (text) after offline.json, tools/a.ts changed']);
  });
});
