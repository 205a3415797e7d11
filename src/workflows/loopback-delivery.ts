/**
 * Where the PostgreSQL world's queue hands its jobs to this process. @workflow/world-postgres
 * 4.3.7 runs graphile-worker, which delivers every job as an HTTP POST to
 * `<base>/.well-known/workflow/v1/{flow,step}` (base: `WORKFLOW_LOCAL_BASE_URL`, read at each
 * delivery; a loopback host is required for its start-up probe). The handler runs whatever a
 * delivery names, so this listener:
 * - binds 127.0.0.1 on a port the OS picks, never the gateway's public port;
 * - answers only under an unguessable path prefix (32 random bytes, compared in constant time),
 *   so another local process cannot drive it without reading this one's environment;
 * - reads at most `MAX_DELIVERY_BYTES` of body (a job carries ids, and a run's input on a
 *   resilient start: bounded by the engine's input limit).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "../log.js";
import type { Entrypoints } from "./run-store.js";

/** A delivery's body, at most (bytes). */
export const MAX_DELIVERY_BYTES = 4 * 1024 * 1024;

const ROUTE = /^\/([A-Za-z0-9_-]{43})\/\.well-known\/workflow\/v1\/(flow|step)$/;

export interface LoopbackDelivery {
  /** `http://127.0.0.1:<port>/<secret>`: the value for `WORKFLOW_LOCAL_BASE_URL`. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_DELIVERY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function reply(res: ServerResponse, status: number): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end();
}

/** Listen on loopback for the queue's deliveries and hand them to `entrypoints`. */
export async function listenForDeliveries(entrypoints: Entrypoints, log: Logger): Promise<LoopbackDelivery> {
  const secret = randomBytes(32).toString("base64url");
  const expected = Buffer.from(secret);
  const server: Server = createServer((req, res) => {
    const match = ROUTE.exec((req.url ?? "").split("?")[0] ?? "");
    const given = Buffer.from(match?.[1] ?? "");
    if (match === null || req.method !== "POST" || given.length !== expected.length || !timingSafeEqual(given, expected)) return reply(res, 404);
    const handler = match[2] === "flow" ? entrypoints.workflow : entrypoints.step;
    void (async () => {
      const payload = await body(req);
      if (payload === undefined) return reply(res, 413);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
      const response = await handler(new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: "POST", headers, body: payload }));
      const answer = Buffer.from(await response.arrayBuffer());
      res.writeHead(response.status, Object.fromEntries(response.headers)).end(answer);
    })().catch((err: unknown) => {
      log.error({ err }, "workflow queue delivery failed");
      if (!res.headersSent) reply(res, 500);
      else res.destroy();
    });
  });
  // A delivery runs a step inline: no server-side deadline (the SDK's own retry and the queue's redelivery cover a crash).
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // exclusive: a cluster worker's listen(0) would otherwise share one port across the workers,
    // and the primary would hand a delivery to a worker that does not know this one's prefix.
    server.listen({ port: 0, host: "127.0.0.1", exclusive: true }, () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}/${secret}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
