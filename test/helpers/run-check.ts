import { runCheck } from "../../src/cli/check.js";

/** `switchboard check <dir>` with `env`, its exit code and what it wrote to stdout and stderr. */
export async function checked(dir: string, env: Readonly<Record<string, string>> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCheck(dir, { env, out: (text) => void (out += text), err: (text) => void (err += text) });
  return { code, out, err };
}
