// `switchboard serve` (or `dev`) as its own process, the way users start it: for tests of what
// the whole process does (it survives, its flags, its workers, its reloads).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

export interface Served {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** What the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGKILL, if it still runs. */
  kill(): void;
}

/** Run `switchboard serve <args…> --port 0`; resolves once its banner names the URL. */
export function serve(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Served> {
  return serveWith("serve", args, env, timeoutMs);
}

/** Run `switchboard <command> <args…> --port 0` for a command that prints the serving banner (`serve`, `start`, `dev`). */
export function serveWith(command: string, args: readonly string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Served> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", command, ...args, "--port", "0"], { cwd: root, env: { ...process.env, LOG_LEVEL: "warn", ...env } });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`no banner within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (): void => {
      const url = /(http:\/\/127\.0\.0\.1:(\d+))\//.exec(out);
      if (url === null) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      resolve({ child, url: url[1] ?? "", port: Number(url[2]), output: () => out, kill });
    };
    child.stdout.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited ${String(code)}:\n${out}`));
    });
  });
}
