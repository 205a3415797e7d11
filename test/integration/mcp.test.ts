import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/manifest/index.js";
import { closeHttp, closedPortUrl, listen, startMcpServer, type Loopback } from "../helpers/mcp-server.js";
import { connectMcpServers, mcpResultToToolResult, schemaFingerprint, type McpLog, type McpTools } from "../../src/session/mcp.js";


interface Line {
  readonly level: "warn" | "info";
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

function recordingLog(): McpLog & { lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    warn: (obj, msg) => lines.push({ level: "warn", obj: obj as Record<string, unknown>, msg }),
    info: (obj, msg) => lines.push({ level: "info", obj: obj as Record<string, unknown>, msg }),
  };
}

function ctx(): ToolContext {
  return { toolCallId: "c1", signal: new AbortController().signal, session: undefined };
}

/** The fingerprints of the live server's tools, read with a plain SDK client. */
async function liveFingerprints(url: string): Promise<Record<string, string>> {
  const client = new Client({ name: "probe", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const { tools } = await client.listTools();
    return Object.fromEntries(tools.map((t) => [t.name, schemaFingerprint(t.inputSchema)]));
  } finally {
    await client.close();
  }
}

describe("connectMcpServers against a real MCP server on loopback", () => {
  let mcp: Loopback;
  const opened: McpTools[] = [];
  const connect = async (...args: Parameters<typeof connectMcpServers>): Promise<McpTools> => {
    const tools = await connectMcpServers(...args);
    opened.push(tools);
    return tools;
  };

  beforeAll(async () => {
    mcp = await startMcpServer();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
  });
  afterAll(async () => {
    await mcp.close();
  });

  it("lists the server's tools as mcp_<key>_<tool>, sanitized, with effects from readOnlyHint", async () => {
    const log = recordingLog();
    const { toolset, status } = await connect({ demo: { url: mcp.url } }, { log, env: {} });
    expect(status).toEqual({ demo: "connected" });
    expect(toolset.source).toBe("mcp");
    const list = toolset.list();
    expect(Object.keys(list).sort()).toEqual(["mcp_demo_echo", "mcp_demo_explode", "mcp_demo_get_weather"]);
    expect(list.mcp_demo_echo?.executor).toBe("host");
    expect(list.mcp_demo_echo?.def.effect).toBe("read");
    expect(list.mcp_demo_get_weather?.def.effect).toBe("write");
    expect(list.mcp_demo_echo?.def.description).toBe("Echo the text back");
    expect(list.mcp_demo_echo?.def.parameters.json).toMatchObject({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });
    expect(list.mcp_demo_echo?.def.parameters.validate({ text: "hi" }).ok).toBe(true);
    expect(list.mcp_demo_echo?.def.parameters.validate({ text: 3 }).ok).toBe(false);
    expect(log.lines).toContainEqual({ level: "info", obj: { server: "demo", tools: 3, listed: 3 }, msg: "mcp server connected" });
  });

  it("calls a tool through the toolset and returns its text", async () => {
    const { toolset } = await connect({ demo: { url: mcp.url } }, { env: {} });
    await expect(toolset.execute("mcp_demo_echo", { text: "hello" }, ctx())).resolves.toEqual({ text: "echo: hello" });
  });

  it("maps structuredContent to details and summarizes non-text parts", async () => {
    const { toolset } = await connect({ demo: { url: mcp.url } }, { env: {} });
    await expect(toolset.execute("mcp_demo_get_weather", { city: "Oslo" }, ctx())).resolves.toEqual({
      text: "Sunny in Oslo\n[image]",
      details: { city: "Oslo", tempC: 21 },
    });
  });

  it("maps an isError result to isError", async () => {
    const { toolset } = await connect({ demo: { url: mcp.url } }, { env: {} });
    await expect(toolset.execute("mcp_demo_explode", {}, ctx())).resolves.toEqual({ text: "boom", isError: true });
  });

  it("keeps only allowedTools", async () => {
    const { toolset } = await connect({ demo: { url: mcp.url, allowedTools: ["echo", "get_weather"] } }, { env: {} });
    expect(Object.keys(toolset.list()).sort()).toEqual(["mcp_demo_echo", "mcp_demo_get_weather"]);
  });

  it("keeps a pinned tool whose fingerprint matches and refuses one whose schema changed", async () => {
    const live = await liveFingerprints(mcp.url);
    expect(live.echo).toMatch(/^[0-9a-f]{16}$/);
    const log = recordingLog();
    const { toolset, status } = await connect(
      { demo: { url: mcp.url, pinnedTools: { echo: live.echo!, explode: "0000000000000000" } } },
      { log, env: {} },
    );
    expect(status.demo).toBe("connected");
    expect(Object.keys(toolset.list()).sort()).toEqual(["mcp_demo_echo", "mcp_demo_get_weather"]);
    expect(log.lines).toContainEqual({
      level: "warn",
      obj: { server: "demo", tool: "explode", expected: "0000000000000000", actual: live.explode },
      msg: "mcp tool schema changed",
    });
  });

  it("sends the tokenEnv token as a Bearer header, resolves url and headers functions, and never logs them", async () => {
    const before = mcp.authorization.length;
    const log = recordingLog();
    const { toolset, status } = await connect(
      {
        demo: {
          url: () => Promise.resolve(mcp.url),
          headers: () => ({ "X-Trace": "trace-value" }),
          tokenEnv: "DEMO_MCP_TOKEN",
        },
      },
      { log, env: { DEMO_MCP_TOKEN: "s3cret-token" } },
    );
    expect(status.demo).toBe("connected");
    await toolset.execute("mcp_demo_echo", { text: "x" }, ctx());
    const seen = mcp.authorization.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((h) => h === "Bearer s3cret-token")).toBe(true);
    expect(JSON.stringify(log.lines)).not.toMatch(/s3cret|trace-value/);
  });

  it("never sends the token or authored headers to another origin: a cross-origin redirect fails that server", async () => {
    const elsewhere: { authorization: string | undefined; key: string | undefined }[] = [];
    const thief = createServer((req, res) => {
      elsewhere.push({ authorization: req.headers.authorization, key: req.headers["x-api-key"] as string | undefined });
      res.writeHead(404).end();
    });
    const thiefUrl = await listen(thief);
    const redirector = createServer((req, res) => res.writeHead(307, { Location: thiefUrl }).end());
    const redirectorUrl = await listen(redirector);
    try {
      const log = recordingLog();
      const { status } = await connect(
        { moved: { url: redirectorUrl, headers: { "X-Api-Key": "authored-secret" }, tokenEnv: "DEMO_MCP_TOKEN" }, demo: { url: mcp.url, allowedTools: ["echo"] } },
        { log, env: { DEMO_MCP_TOKEN: "s3cret-token" } },
      );
      expect(status).toEqual({ moved: "failed", demo: "connected" });
      expect(elsewhere).toEqual([]);
      expect(log.lines.find((l) => l.msg === "mcp server unavailable")?.obj.server).toBe("moved");
      expect(JSON.stringify(log.lines)).not.toMatch(/s3cret|authored-secret/);
    } finally {
      await Promise.all([closeHttp(thief), closeHttp(redirector)]);
    }
  });

  it("fails only that server when its tokenEnv variable is missing, naming the variable", async () => {
    const log = recordingLog();
    const { toolset, status } = await connect(
      { locked: { url: mcp.url, tokenEnv: "MISSING_MCP_TOKEN" }, demo: { url: mcp.url, allowedTools: ["echo"] } },
      { log, env: {} },
    );
    expect(status).toEqual({ locked: "failed", demo: "connected" });
    expect(Object.keys(toolset.list())).toEqual(["mcp_demo_echo"]);
    const warn = log.lines.find((l) => l.msg === "mcp server unavailable");
    expect(warn?.obj.server).toBe("locked");
    expect(warn?.obj.tokenEnv).toBe("MISSING_MCP_TOKEN");
    expect(String(warn?.obj.err)).toContain("MISSING_MCP_TOKEN");
  });

  it("costs an unreachable server only its own tools", async () => {
    const log = recordingLog();
    const { toolset, status } = await connect({ demo: { url: mcp.url }, gone: { url: await closedPortUrl() } }, { log, env: {} });
    expect(status).toEqual({ demo: "connected", gone: "failed" });
    expect(Object.keys(toolset.list()).sort()).toEqual(["mcp_demo_echo", "mcp_demo_explode", "mcp_demo_get_weather"]);
    const warns = log.lines.filter((l) => l.msg === "mcp server unavailable");
    expect(warns).toHaveLength(1);
    expect(warns[0]?.obj.server).toBe("gone");
    expect(warns[0]?.obj.err).toBeInstanceOf(Error);
  });

  it("fails a server that accepts connections but never answers, within timeoutMs", async () => {
    const silent = createServer(() => undefined);
    const url = await listen(silent);
    try {
      const log = recordingLog();
      const started = Date.now();
      const { status } = await connect({ silent: { url } }, { log, env: {}, timeoutMs: 300 });
      expect(status).toEqual({ silent: "failed" });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(log.lines.some((l) => l.msg === "mcp server unavailable" && l.obj.server === "silent")).toBe(true);
    } finally {
      await closeHttp(silent);
    }
  });

  it("fails a server with no url", async () => {
    const { status, toolset } = await connect({ nourl: {} }, { env: {} });
    expect(status).toEqual({ nourl: "failed" });
    expect(toolset.list()).toEqual({});
  });

  it("returns an empty toolset for no servers", async () => {
    for (const servers of [undefined, {}]) {
      const tools = await connect(servers);
      expect(tools.toolset.source).toBe("mcp");
      expect(tools.toolset.list()).toEqual({});
      expect(tools.status).toEqual({});
    }
  });

  it("close() closes the clients: a call afterwards rejects, and close is idempotent", async () => {
    const tools = await connectMcpServers({ demo: { url: mcp.url } }, { env: {} });
    await tools.close();
    await tools.close();
    await expect(tools.toolset.execute("mcp_demo_echo", { text: "late" }, ctx())).rejects.toThrow();
  });
});

describe("schemaFingerprint", () => {
  it("is 16 hex chars and ignores key order", () => {
    const a = schemaFingerprint({ type: "object", properties: { b: { type: "string" }, a: { type: "number" } }, required: ["a"] });
    const b = schemaFingerprint({ required: ["a"], properties: { a: { type: "number" }, b: { type: "string" } }, type: "object" });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(a).toBe(b);
    expect(schemaFingerprint({ type: "object", required: ["b"] })).not.toBe(schemaFingerprint({ type: "object", required: ["a"] }));
  });
});

describe("mcpResultToToolResult", () => {
  it("always carries text, so the runtime reads it as a ToolResult", () => {
    expect(mcpResultToToolResult({ content: [], structuredContent: { n: 1 } })).toEqual({ text: '{"n":1}', details: { n: 1 } });
    expect(mcpResultToToolResult({ content: [] })).toEqual({ text: "Done." });
    expect(mcpResultToToolResult({ toolResult: { ok: true } })).toEqual({ text: '{"ok":true}', details: { ok: true } });
    expect(
      mcpResultToToolResult({
        content: [
          { type: "audio", data: "", mimeType: "audio/wav" },
          { type: "resource_link", uri: "file:///a.txt", name: "a" },
        ],
      }),
    ).toEqual({ text: "[audio]\n[resource link file:///a.txt]" });
  });
});
