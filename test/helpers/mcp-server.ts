import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** The MCP server under test: a fresh McpServer per request (stateless Streamable HTTP). */
export function buildMcpServer(): McpServer {
  const server = new McpServer({ name: "demo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the text back", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
  );
  server.registerTool(
    "Get-Weather",
    {
      description: "Weather for a city",
      inputSchema: { city: z.string() },
      outputSchema: { city: z.string(), tempC: z.number() },
    },
    ({ city }) => ({
      content: [
        { type: "text", text: `Sunny in ${city}` },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ],
      structuredContent: { city, tempC: 21 },
    }),
  );
  server.registerTool("explode", { description: "Always fails" }, () => ({ content: [{ type: "text", text: "boom" }], isError: true }));
  return server;
}

export interface Loopback {
  readonly url: string;
  /** The Authorization header of every request the server saw. */
  readonly authorization: (string | undefined)[];
  close(): Promise<void>;
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/mcp`;
}

export async function closeHttp(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export async function startMcpServer(): Promise<Loopback> {
  const authorization: (string | undefined)[] = [];
  const http = createServer((req, res) => {
    authorization.push(req.headers.authorization);
    if (req.method !== "POST") {
      // Stateless: no standalone SSE stream, no session to delete.
      res.writeHead(405, { Allow: "POST" }).end();
      return;
    }
    const server = buildMcpServer();
    // No sessionIdGenerator: stateless mode (the SDK's `sessionIdGenerator: undefined`, spelled for exactOptionalPropertyTypes).
    const transport = new StreamableHTTPServerTransport({});
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  const url = await listen(http);
  return { url, authorization, close: () => closeHttp(http) };
}

/** A port nothing listens on: bound, then released. */
export async function closedPortUrl(): Promise<string> {
  const http = createServer();
  const url = await listen(http);
  await closeHttp(http);
  return url;
}
