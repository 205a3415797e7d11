/**
 * MCP tool servers as a Toolset: connect to each configured server over Streamable HTTP, list
 * its tools once, and advertise them as `mcp_<key>_<tool>`. A server that is down costs only
 * its own tools; a pinned tool whose schema changed is refused, the rest of its server kept.
 */
import { createHash } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JSONSchema7 } from "json-schema";
import {
  compileJsonSchema,
  tool,
  toolset,
  type AnyToolDef,
  type McpServerConfig,
  type McpServers,
  type ToolContext,
  type ToolResult,
  type Toolset,
} from "../manifest/index.js";

/** pino-compatible: `log.warn({ ... }, "message")`. */
export interface McpLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface McpConnectOptions {
  /** Where `tokenEnv` is read (→ `Authorization: Bearer <token>`). Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Default: a no-op. Header values and tokens are never logged. */
  log?: McpLog;
  /** Connect + list deadline per server, in ms. Default 5000. */
  timeoutMs?: number;
}

export type McpServerStatus = "connected" | "failed";

export interface McpTools {
  /** Source "mcp"; tools named `mcp_<key>_<tool>`. */
  toolset: Toolset;
  /** Closes every client and transport. Idempotent. */
  close(): Promise<void>;
  status: Readonly<Record<string, McpServerStatus>>;
}

const DEFAULT_TIMEOUT_MS = 5000;
const CLIENT_INFO = { name: "switchboard", version: "0.1.0" } as const;
const NO_LOG: McpLog = { warn: () => undefined, info: () => undefined };

/** `Get-Weather` → `get_weather`: lowercase, anything outside [a-z0-9_] becomes `_`. */
export function sanitizeToolName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

/** The advertised name of tool `toolName` on server `key`. */
export function mcpToolName(key: string, toolName: string): string {
  return `mcp_${sanitizeToolName(key)}_${sanitizeToolName(toolName)}`;
}

/** JSON with object keys sorted at every depth; what JSON drops (undefined, functions) is dropped. */
function canonicalJson(value: unknown): string {
  const normalized: unknown = JSON.parse(JSON.stringify(value) ?? "null");
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (typeof v === "object" && v !== null) {
      const source = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(source)
          .sort()
          .map((k) => [k, sort(source[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sort(normalized));
}

/** sha256 hex (first 16 chars) of the canonical JSON (sorted keys) of a tool's inputSchema. */
export function schemaFingerprint(inputSchema: unknown): string {
  return createHash("sha256").update(canonicalJson(inputSchema)).digest("hex").slice(0, 16);
}

/** Run `work` under a deadline: on expiry its signal aborts and the returned promise rejects. */
async function withDeadline<T>(ms: number, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`${what} timed out after ${ms} ms`);
      controller.abort(error);
      reject(error);
    }, ms);
  });
  const running = work(controller.signal);
  // If the deadline wins, the work's own rejection (abort) must not go unhandled.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

class McpConfigError extends Error {
  override readonly name = "McpConfigError";
  /** The missing token variable, when that is the problem (its name is logged, never its value). */
  readonly tokenEnv: string | undefined;

  constructor(message: string, tokenEnv?: string) {
    super(message);
    this.tokenEnv = tokenEnv;
  }
}

function parseUrl(key: string, raw: unknown): URL {
  if (typeof raw !== "string" || raw.trim() === "") throw new McpConfigError(`mcpServers.${key}: no \`url\` to connect to.`);
  try {
    return new URL(raw);
  } catch {
    // The url itself is not echoed: it may carry a credential.
    throw new McpConfigError(`mcpServers.${key}: \`url\` is not a valid URL.`);
  }
}

async function resolveUrl(key: string, config: McpServerConfig): Promise<URL> {
  return parseUrl(key, typeof config.url === "function" ? await config.url() : config.url);
}

/** The bearer token `tokenEnv` names, trimmed; undefined when the server sets no `tokenEnv`. */
function tokenOf(key: string, config: McpServerConfig, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (config.tokenEnv === undefined) return undefined;
  const token = env[config.tokenEnv];
  if (token === undefined || token.trim() === "") {
    throw new McpConfigError(`mcpServers.${key}: environment variable ${config.tokenEnv} (tokenEnv) is not set.`, config.tokenEnv);
  }
  return token.trim();
}

function resolveHeaders(
  key: string,
  config: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const authored = typeof config.headers === "function" ? config.headers() : config.headers;
  const headers: Record<string, string> = { ...(authored ?? {}) };
  const token = tokenOf(key, config, env);
  if (token !== undefined) {
    for (const name of Object.keys(headers)) if (name.toLowerCase() === "authorization") delete headers[name];
    headers.Authorization = `Bearer ${token}`;
  }
  return headers;
}

/**
 * What costs a server its tools before any connection is tried — no `url`, a `url` that does
 * not parse, an unset `tokenEnv` — with the message a session logs for it. Pure: a resolver
 * `url` or `headers` function is not called, and nothing is opened (`switchboard check`). A
 * session still starts without such a server: only its own tools are lost.
 */
export function mcpConfigProblems(servers: McpServers | undefined, env: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const [key, config] of Object.entries(servers ?? {})) {
    try {
      if (typeof config.url !== "function") parseUrl(key, config.url);
      tokenOf(key, config, env);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  return problems;
}

async function listAllTools(client: Client, signal: AbortSignal, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { signal, timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

type ContentPart = CallToolResult["content"][number];

function partText(part: ContentPart): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "image":
      return "[image]";
    case "audio":
      return "[audio]";
    case "resource":
      return `[resource ${part.resource.uri}]`;
    case "resource_link":
      return `[resource link ${part.uri}]`;
    default:
      return `[${String((part as { type?: unknown }).type)}]`;
  }
}

/** An MCP tool result as a ToolResult: text parts joined by "\n", structuredContent → details. */
export function mcpResultToToolResult(result: unknown): ToolResult {
  const r = (typeof result === "object" && result !== null ? result : {}) as Partial<CallToolResult> & { toolResult?: unknown };
  const isError = r.isError === true ? { isError: true } : {};
  if (!Array.isArray(r.content)) {
    // A pre-2024-11 server answers `{ toolResult }`.
    if ("toolResult" in r) return { text: canonicalText(r.toolResult), details: r.toolResult, ...isError };
    return { text: "Done.", ...isError };
  }
  const text = r.content.map(partText).join("\n");
  const structured = r.structuredContent;
  const details = structured === undefined ? {} : { details: structured };
  // The text is always a string, so the runtime reads this as a ToolResult and not as details.
  const fallback = structured === undefined ? (r.isError === true ? "The tool failed." : "Done.") : canonicalText(structured);
  return { text: text === "" ? fallback : text, ...details, ...isError };
}

function canonicalText(value: unknown): string {
  return JSON.stringify(value ?? null);
}

interface Connected {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly tools: Tool[];
}

/** The MCP SDK, loaded on first use: an agent without MCP servers never pays its ~10 MB. */
let sdk: Promise<{ Client: typeof Client; StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport }> | undefined;
function loadSdk(): NonNullable<typeof sdk> {
  sdk ??= Promise.all([import("@modelcontextprotocol/sdk/client/index.js"), import("@modelcontextprotocol/sdk/client/streamableHttp.js")]).then(([client, http]) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
  }));
  return sdk;
}

async function connectOne(
  key: string,
  config: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>,
  log: McpLog,
  timeoutMs: number,
): Promise<Connected> {
  const { Client, StreamableHTTPClientTransport } = await loadSdk();
  const client = new Client(CLIENT_INFO);
  // Until connected, a failure surfaces as the rejection below; one log line is enough.
  client.onerror = () => undefined;
  let transport: StreamableHTTPClientTransport | undefined;
  try {
    const tools = await withDeadline(timeoutMs, `mcp server ${key}`, async (signal) => {
      const url = await resolveUrl(key, config);
      const headers = resolveHeaders(key, config, env);
      // Tokens and authored headers go to this server only: a redirect to another origin is refused, not followed.
      transport = new StreamableHTTPClientTransport(url, { requestInit: { headers }, redirectPolicy: "same-origin" });
      await client.connect(transport, { signal, timeout: timeoutMs });
      return listAllTools(client, signal, timeoutMs);
    });
    if (transport === undefined) throw new Error(`mcp server ${key}: no transport`);
    client.onerror = (err) => log.warn({ server: key, err }, "mcp client error");
    return { client, transport, tools };
  } catch (error) {
    await client.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
    throw error;
  }
}

function matches(list: Readonly<Record<string, string>> | undefined, mcpName: string): string | undefined {
  if (list === undefined) return undefined;
  if (Object.hasOwn(list, mcpName)) return list[mcpName];
  const sanitized = sanitizeToolName(mcpName);
  return Object.hasOwn(list, sanitized) ? list[sanitized] : undefined;
}

function toolDef(client: Client, mcpTool: Tool, key: string): AnyToolDef {
  const description =
    [mcpTool.description, mcpTool.title, mcpTool.annotations?.title].find((d) => typeof d === "string" && d.trim() !== "") ??
    `${mcpTool.name} (MCP server ${key})`;
  return tool({
    description,
    parameters: compileJsonSchema(mcpTool.inputSchema as JSONSchema7, `mcp_${key} tool ${mcpTool.name}`),
    effect: mcpTool.annotations?.readOnlyHint === true ? "read" : "write",
    execute: async (args: Record<string, unknown>, ctx: ToolContext) => {
      const progress = ctx.progress;
      const result = await client.callTool({ name: mcpTool.name, arguments: args }, undefined, {
        signal: ctx.signal,
        ...(progress === undefined
          ? {}
          : {
              resetTimeoutOnProgress: true,
              onprogress: (p: { message?: string | undefined }) => {
                if (typeof p.message === "string" && p.message !== "") progress(p.message);
              },
            }),
      });
      return mcpResultToToolResult(result);
    },
  });
}

/** The ToolDefs one connected server contributes, after allowedTools, pins and name checks. */
function serverTools(key: string, config: McpServerConfig, connected: Connected, log: McpLog, into: Record<string, AnyToolDef>): number {
  const allowed = config.allowedTools === undefined ? undefined : new Set(config.allowedTools);
  let kept = 0;
  for (const mcpTool of connected.tools) {
    if (allowed !== undefined && !allowed.has(mcpTool.name) && !allowed.has(sanitizeToolName(mcpTool.name))) continue;
    const expected = matches(config.pinnedTools, mcpTool.name);
    if (expected !== undefined) {
      const actual = schemaFingerprint(mcpTool.inputSchema);
      if (expected !== actual) {
        log.warn({ server: key, tool: mcpTool.name, expected, actual }, "mcp tool schema changed");
        continue;
      }
    }
    const name = mcpToolName(key, mcpTool.name);
    if (Object.hasOwn(into, name)) {
      log.warn({ server: key, tool: mcpTool.name, name }, "mcp tool name taken; tool dropped");
      continue;
    }
    try {
      into[name] = toolDef(connected.client, mcpTool, key);
      kept++;
    } catch (err) {
      log.warn({ server: key, tool: mcpTool.name, err }, "mcp tool unusable");
    }
  }
  return kept;
}

/**
 * Connect to every configured MCP server concurrently and expose their tools as one Toolset.
 * Never rejects: a server that cannot be reached, times out or fails to list is logged, marked
 * "failed" in `status`, and contributes no tools.
 */
export async function connectMcpServers(servers: McpServers | undefined, options: McpConnectOptions = {}): Promise<McpTools> {
  const env = options.env ?? process.env;
  const log = options.log ?? NO_LOG;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const entries = Object.entries(servers ?? {});

  const outcomes = await Promise.all(
    entries.map(async ([key, config]) => {
      try {
        return { key, config, connected: await connectOne(key, config, env, log, timeoutMs) };
      } catch (err) {
        const tokenEnv = err instanceof McpConfigError && err.tokenEnv !== undefined ? { tokenEnv: err.tokenEnv } : {};
        log.warn({ server: key, err, ...tokenEnv }, "mcp server unavailable");
        return { key, config, connected: undefined };
      }
    }),
  );

  const status: Record<string, McpServerStatus> = {};
  const tools: Record<string, AnyToolDef> = {};
  const open: Connected[] = [];
  for (const { key, config, connected } of outcomes) {
    if (connected === undefined) {
      status[key] = "failed";
      continue;
    }
    status[key] = "connected";
    open.push(connected);
    const kept = serverTools(key, config, connected, log, tools);
    log.info({ server: key, tools: kept, listed: connected.tools.length }, "mcp server connected");
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= Promise.allSettled(
      open.map(async ({ client, transport }) => {
        client.onerror = () => undefined;
        // Ask a stateful server to drop the session, best effort and bounded.
        await withDeadline(timeoutMs, "mcp session termination", () => transport.terminateSession()).catch(() => undefined);
        await client.close();
      }),
    ).then(() => undefined);
    return closing;
  };

  return { toolset: toolset("mcp", tools), close, status: Object.freeze(status) };
}
