// A minimal L7 proxy for WebSocket upgrades on loopback, as a load balancer would be: each upgrade
// goes to the next backend (round-robin) whose `GET /ready` answers 200, and the bytes are piped
// both ways from there. Enough to test rolling restarts; no TLS, no HTTP routes.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import type { Duplex } from "node:stream";

export interface WsProxy {
  readonly url: string;
  /** Backends by port, in round-robin order. */
  backends: number[];
  close(): Promise<void>;
}

async function ready(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200;
  } catch {
    return false;
  }
}

export async function startWsProxy(backends: number[]): Promise<WsProxy> {
  const sockets = new Set<Socket | Duplex>();
  let next = 0;
  const proxy: WsProxy = { url: "", backends, close: async () => {} };
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    void (async () => {
      for (let tried = 0; tried < proxy.backends.length; tried++) {
        const port = proxy.backends[next++ % proxy.backends.length];
        if (port === undefined || !(await ready(port))) continue;
        const upstream = connect(port, "127.0.0.1");
        sockets.add(upstream);
        upstream.once("connect", () => {
          const lines = [`${req.method ?? "GET"} ${req.url ?? "/"} HTTP/1.1`];
          for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
          upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        const drop = (): void => {
          upstream.destroy();
          client.destroy();
        };
        upstream.on("error", drop);
        client.on("error", drop);
        upstream.on("close", () => client.destroy());
        client.on("close", () => upstream.destroy());
        return;
      }
      client.end("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `ws://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}
