// `.env` loading for the commands that take an agent: the real environment wins over
// `<agent dir>/.env`, which wins over `./.env`; only the files' names are reported.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadDotEnv, mergeDotEnv, type Environment } from "../../../src/cli/env.js";

/** A working directory with `./.env` and an agent directory `agent/` with its own `.env`. */
async function project(cwdEnv: string | undefined, agentEnv: string | undefined): Promise<{ cwd: string; agent: string }> {
  const cwd = await mkdtemp(join(tmpdir(), "sb-env-"));
  const agent = join(cwd, "agent");
  await mkdir(agent);
  await writeFile(join(agent, "agent.mjs"), 'export default { name: "a", mode: "text" };\n');
  if (cwdEnv !== undefined) await writeFile(join(cwd, ".env"), cwdEnv);
  if (agentEnv !== undefined) await writeFile(join(agent, ".env"), agentEnv);
  return { cwd, agent };
}

describe("mergeDotEnv", () => {
  it("sets each name once, from the first source that has it, and never a name the environment holds (even empty)", () => {
    const env: Environment = { REAL: "real", EMPTY: "" };
    const merged = mergeDotEnv(env, [
      { A: "agent", REAL: "agent", EMPTY: "agent" },
      { A: "cwd", B: "cwd", REAL: "cwd" },
    ]);
    expect(merged).toEqual({ A: "agent", B: "cwd" });
  });
});

describe("loadDotEnv", () => {
  it("loads the agent directory's .env over the working directory's, below the real environment", async () => {
    const { cwd } = await project("SHARED=cwd\nONLY_CWD=1\nREAL=cwd\n", 'SHARED=agent\nONLY_AGENT="quoted value"\nREAL=agent\n');
    const env: Environment = { REAL: "real" };
    const result = loadDotEnv("agent", { cwd, env });
    expect(env).toEqual({ REAL: "real", SHARED: "agent", ONLY_CWD: "1", ONLY_AGENT: "quoted value" });
    // Names of files only (relative to the working directory), in precedence order; never values.
    expect(result).toEqual({ files: [join("agent", ".env"), ".env"], variables: 3 });
  });

  it("takes the directory of an agent given as a file, and reads a shared directory's .env once", async () => {
    const { cwd, agent } = await project("FROM=cwd\n", "FROM=agent\n");
    const env: Environment = {};
    expect(loadDotEnv(join(agent, "agent.mjs"), { cwd, env }).files).toEqual([join("agent", ".env"), ".env"]);
    expect(env.FROM).toBe("agent");
    const inside: Environment = {};
    expect(loadDotEnv(".", { cwd: agent, env: inside })).toEqual({ files: [".env"], variables: 1 });
  });

  it("loads only ./.env for an agent path that does not exist (the loader reports it), and nothing without files", async () => {
    const { cwd } = await project("X=1\n", undefined);
    const env: Environment = {};
    expect(loadDotEnv("missing-agent", { cwd, env })).toEqual({ files: [".env"], variables: 1 });
    const bare = await project(undefined, undefined);
    expect(loadDotEnv("agent", { cwd: bare.cwd, env: {} })).toEqual({ files: [], variables: 0 });
  });

  it("fails naming a .env that exists but cannot be read", async () => {
    const { cwd, agent } = await project(undefined, undefined);
    await mkdir(join(agent, ".env"));
    expect(() => loadDotEnv("agent", { cwd, env: {} })).toThrow(/cannot read agent\/\.env: EISDIR/);
  });
});
