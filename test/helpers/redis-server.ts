// A real redis-server on loopback for the multi-instance tests (Debian `redis-server`; .ci/run
// installs it). A free port is found by binding port 0 first; no persistence, no config file.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { accepting, freePort } from "../../fakes/free-port.js";

export const REDIS_SERVER = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((path) => existsSync(path));

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  if (REDIS_SERVER === undefined) throw new Error("redis-server is not installed (apt-get install redis-server)");
  const port = await freePort();
  const child: ChildProcess = spawn(REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const deadline = Date.now() + 10_000;
  while (!(await accepting(port))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
