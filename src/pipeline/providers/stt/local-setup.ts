/**
 * The local STT's setup (pocketsphinx, docs/vendors.md "Local STT"): whether the recognizer and
 * its model are installed (looked for at every `open()`, nothing cached beyond one probe per
 * binary path), the agent's options read into settings, the search files written for a session,
 * and a dry run that names a bad grammar, keyphrase or model path before any audio flows.
 */
import { spawn } from "node:child_process";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GatewayError, messageOf } from "../../../errors.js";
import type { ProviderDescriptor } from "../../../manifest/index.js";
import { isSttUnavailable as portSttUnavailable } from "../../stt-port.js";
import { optionsOf } from "../provider-options.js";

/** The en-us acoustic model's rate (Hz); the only rate a session may be opened at. */
export const LOCAL_STT_SAMPLE_RATE = 16000;
/** Silence that ends an utterance, for pocketsphinx (10 ms frames) and fvad alike. */
export const END_SILENCE_MS = 500;
/** The recognizer's name on PATH. */
export const LOCAL_STT_BINARY = "pocketsphinx_continuous";
/** Where Debian's `pocketsphinx-en-us` puts the model. */
export const LOCAL_STT_MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";
export const LOCAL_STT_INSTALL_HINT = "install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us";

const DEFAULT_HMM: string = `${LOCAL_STT_MODEL_DIR}/en-us`;
const DEFAULT_LM: string = `${LOCAL_STT_MODEL_DIR}/en-us.lm.bin`;
const DEFAULT_DICT: string = `${LOCAL_STT_MODEL_DIR}/cmudict-en-us.dict`;
/** Keyphrase detection threshold, the same for every phrase (lower: more detections, and more false alarms). */
const KEYWORD_THRESHOLD = "1e-20";

/** What to recognize: the general language model, a JSGF grammar, or keyphrases. */
export type Search = { readonly mode: "lm"; readonly lm: string } | { readonly mode: "grammar"; readonly jsgf: string } | { readonly mode: "keywords"; readonly phrases: readonly string[] };

export interface LocalSttSettings {
  readonly binary: string;
  readonly hmm: string;
  readonly dict: string;
  readonly search: Search;
}

// ---- availability ----

/** The open error when pocketsphinx (or its default model) is not installed: the session falls back to typed input. */
export class SttUnavailableError extends GatewayError {
  readonly unavailable = true;

  constructor(message: string) {
    super("stt", message, { fatal: true });
  }
}

/** True for an open error meaning "no recognizer on this machine" (the port's check, as a type guard). */
export function isSttUnavailable(error: unknown): error is SttUnavailableError {
  return error instanceof GatewayError && portSttUnavailable(error);
}

/** Probes in flight, by binary: calls while one runs share it; nothing is remembered once it settles. */
const probes = new Map<string, Promise<boolean>>();

/**
 * True when `binary` runs here (it prints its usage and exits, ≈ 10 ms). Probed afresh at every
 * session open — never cached — so installing pocketsphinx under a running gateway needs no
 * restart; concurrent calls share the probe in flight.
 */
export function localSttAvailable(binary: string = LOCAL_STT_BINARY): Promise<boolean> {
  let probe = probes.get(binary);
  if (probe === undefined) {
    const started = runs(binary);
    probe = started;
    probes.set(binary, started);
    void started.then(() => {
      if (probes.get(binary) === started) probes.delete(binary);
    });
  }
  return probe;
}

function runs(binary: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(binary, [], { stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    timer.unref();
    child.once("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.once("exit", (_code, signal) => {
      clearTimeout(timer);
      resolve(signal === null);
    });
  });
}

// ---- configuration ----

export function readSettings(descriptor: ProviderDescriptor, binary: string): LocalSttSettings {
  const read = optionsOf(descriptor, "stt");
  const fail = (message: string): never => {
    throw new GatewayError("internal", `stt.options.${message}`, { fatal: true });
  };
  const grammar = read.string("grammar");
  const raw = descriptor.options.keywords;
  let phrases: string[] | undefined;
  if (raw !== undefined) {
    const ok = Array.isArray(raw) && raw.length > 0 && raw.every((k) => typeof k === "string" && k.trim() !== "" && !/[/\r\n]/.test(k));
    if (!ok) fail("keywords must be a non-empty list of phrases (no '/' or line breaks).");
    phrases = (raw as string[]).map((k) => k.trim().toLowerCase().replace(/\s+/g, " "));
  }
  if (grammar !== undefined && phrases !== undefined) fail("grammar and keywords cannot both be set.");
  const search: Search =
    grammar !== undefined ? { mode: "grammar", jsgf: grammar } : phrases !== undefined ? { mode: "keywords", phrases } : { mode: "lm", lm: read.string("lm") ?? DEFAULT_LM };
  return {
    binary: read.string("binary") ?? binary,
    hmm: read.string("hmm") ?? DEFAULT_HMM,
    dict: read.string("dict") ?? DEFAULT_DICT,
    search,
  };
}

/** A session's (or the check's) grammar/keyword file, in a temp dir removed with it. */
export interface SearchFiles {
  readonly args: readonly string[];
  readonly dir: string | undefined;
}

export async function writeSearchFiles(search: Search): Promise<SearchFiles> {
  if (search.mode === "lm") return { args: ["-lm", search.lm], dir: undefined };
  const dir = await mkdtemp(join(tmpdir(), "switchboard-stt-"));
  try {
    if (search.mode === "grammar") {
      const file = join(dir, "grammar.gram");
      await writeFile(file, search.jsgf.endsWith("\n") ? search.jsgf : `${search.jsgf}\n`);
      return { args: ["-jsgf", file], dir };
    }
    const file = join(dir, "keywords.kws");
    await writeFile(file, search.phrases.map((p) => `${p} /${KEYWORD_THRESHOLD}/\n`).join(""));
    return { args: ["-kws", file], dir };
  } catch (error) {
    await removeDir(dir);
    throw new GatewayError("stt", `local STT could not write its ${search.mode} file: ${messageOf(error)}`, { fatal: true, cause: error });
  }
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

export function recognizerArgs(settings: LocalSttSettings, files: SearchFiles, infile: string): string[] {
  const postSpeechFrames = String(END_SILENCE_MS / 10);
  return ["-hmm", settings.hmm, "-dict", settings.dict, ...files.args, "-samprate", String(LOCAL_STT_SAMPLE_RATE), "-inmic", "no", "-vad_postspeech", postSpeechFrames, "-infile", infile];
}

/** The default model files in use that are missing (the `pocketsphinx-en-us` package is not installed). */
export async function missingDefaultModel(settings: LocalSttSettings): Promise<string[]> {
  const paths = [settings.hmm, settings.dict, ...(settings.search.mode === "lm" ? [settings.search.lm] : [])];
  const defaults = paths.filter((p) => p === DEFAULT_HMM || p === DEFAULT_DICT || p === DEFAULT_LM);
  const missing = await Promise.all(defaults.map((p) => access(p).then(() => "", () => p)));
  return missing.filter((p) => p !== "");
}

/** pocketsphinx's ERROR/FATAL lines, without their source location. */
function errorLines(log: string): string[] {
  return log
    .split("\n")
    .filter((line) => /^(ERROR|FATAL)/.test(line))
    .map((line) => line.replace(/^(ERROR|FATAL[_A-Z]*): "[^"]*", line \d+: /, "").trim())
    .slice(0, 3);
}

/** Loads the configuration once with `-infile /dev/null`; rejects with pocketsphinx's errors. */
export async function checkConfiguration(settings: LocalSttSettings): Promise<void> {
  const files = await writeSearchFiles(settings.search);
  try {
    const { code, log } = await new Promise<{ code: number | null; log: string }>((resolve, reject) => {
      const child = spawn(settings.binary, recognizerArgs(settings, files, "/dev/null"), { stdio: ["ignore", "ignore", "pipe"] });
      let log = "";
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => {
        if (log.length < 200_000) log += chunk;
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      timer.unref();
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once("close", (exitCode) => {
        clearTimeout(timer);
        resolve({ code: exitCode, log });
      });
    });
    const errors = errorLines(log);
    // A keyphrase missing from the dictionary is an ERROR line but exit code 0: it would never be heard.
    if (code !== 0 || errors.length > 0) {
      const why = errors.length > 0 ? errors.join("; ") : `exit code ${String(code)}`;
      throw new GatewayError("stt", `pocketsphinx could not load the local STT configuration (${settings.search.mode} mode): ${why}`, { fatal: true });
    }
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw new GatewayError("stt", `pocketsphinx could not be run: ${messageOf(error)}`, { fatal: true, cause: error });
  } finally {
    await removeDir(files.dir);
  }
}
