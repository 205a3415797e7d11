// `switchboard call` on a machine without pocketsphinx (simulated: SWITCHBOARD_POCKETSPHINX points
// at a path that does not exist) fails fast — exit 1, the one install command and the key of the
// agent's own STT — instead of waiting out its 60 s timeout and blaming the recording.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = pathToFileURL(join(root, "node_modules", "tsx", "dist", "loader.mjs")).href;

describe("switchboard call without pocketsphinx", () => {
  it("exits 1 within seconds with the install command and the key that would use the agent's hosted STT", async () => {
    const env = { ...process.env, OPENAI_API_KEY: "", DEEPGRAM_API_KEY: "", CARTESIA_API_KEY: "", SWITCHBOARD_POCKETSPHINX: "/nonexistent/pocketsphinx_continuous" };
    const started = Date.now();
    const failure = await run(process.execPath, ["--import", tsx, "src/cli.ts", "call", "examples/support", "fixtures/audio/order-status.wav"], { cwd: root, env, timeout: 20_000 }).then(
      () => ({ code: 0, killed: false, stdout: "", stderr: "" }),
      (error: { code: number; killed: boolean; stdout: string; stderr: string }) => error,
    );
    expect(failure.killed).toBe(false);
    expect(failure.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(failure.stderr).toContain(
      "switchboard: the session failed: stt: the local STT needs pocketsphinx (/nonexistent/pocketsphinx_continuous was not found); install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us (or set DEEPGRAM_API_KEY to use deepgram)\n",
    );
    expect(failure.stdout).not.toContain("no speech was recognized");
  }, 30_000);
});
