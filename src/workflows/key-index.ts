/**
 * Which runs each correlation key started: the engine lists runs only by workflow and status,
 * so the gateway keeps this index itself, as JSON lines in one file beside the engine's data.
 *
 * Crash safety: entries are appended and fsync'd one write at a time; a line torn by a crash
 * (or any line that does not parse) is skipped on reading, so at worst the last entry is lost.
 * Pruning rewrites the file whole into a temporary file, fsyncs it and renames it over the old
 * one (rename is atomic on POSIX file systems), so a crash leaves the old or the new file.
 */
import { open, readFile, rename } from "node:fs/promises";
import type { KeyEntry, RunKeys } from "./run-store.js";

function parseLine(line: string): KeyEntry | undefined {
  try {
    const value = JSON.parse(line) as Partial<KeyEntry> | null;
    if (value === null || typeof value !== "object") return undefined;
    const { key, runId, workflow, at } = value;
    if (typeof key !== "string" || typeof runId !== "string" || typeof workflow !== "string" || typeof at !== "number") return undefined;
    return { key, runId, workflow, at };
  } catch {
    return undefined;
  }
}

async function writeSynced(path: string, flags: "a" | "w", text: string): Promise<void> {
  const file = await open(path, flags);
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
}

export class KeyIndex implements RunKeys {
  readonly #path: string;
  readonly #byKey = new Map<string, KeyEntry[]>();
  readonly #byRun = new Map<string, KeyEntry>();
  /** Writes one at a time, in call order. */
  #queue: Promise<void> = Promise.resolve();

  private constructor(path: string) {
    this.#path = path;
  }

  /** The index at `path`: read whole when it exists (torn or foreign lines skipped). */
  static async open(path: string): Promise<KeyIndex> {
    const index = new KeyIndex(path);
    let text = "";
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    for (const line of text.split("\n")) {
      const entry = line.trim() === "" ? undefined : parseLine(line);
      if (entry !== undefined) index.#remember(entry);
    }
    return index;
  }

  #remember(entry: KeyEntry): void {
    if (this.#byRun.has(entry.runId)) return;
    this.#byRun.set(entry.runId, entry);
    const list = this.#byKey.get(entry.key);
    if (list === undefined) this.#byKey.set(entry.key, [entry]);
    else list.push(entry);
  }

  #serial(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Record `entry` durably (resolves once it is on disk). */
  add(entry: KeyEntry): Promise<void> {
    this.#remember(entry);
    // A leading newline ends a line a crash may have left torn, so this entry parses on its own.
    return this.#serial(() => writeSynced(this.#path, "a", `\n${JSON.stringify(entry)}\n`));
  }

  /** The runs of `key`, in the order they were started. */
  runsOf(key: string): Promise<readonly KeyEntry[]> {
    return Promise.resolve(this.#byKey.get(key) ?? []);
  }

  entryOf(runId: string): Promise<KeyEntry | undefined> {
    return Promise.resolve(this.#byRun.get(runId));
  }

  /** Forget `runIds` (pruned runs): the file is rewritten without them. */
  drop(runIds: readonly string[]): Promise<void> {
    const gone = new Set(runIds.filter((id) => this.#byRun.has(id)));
    if (gone.size === 0) return Promise.resolve();
    for (const id of gone) this.#byRun.delete(id);
    for (const [key, list] of this.#byKey) {
      const kept = list.filter((entry) => !gone.has(entry.runId));
      if (kept.length === 0) this.#byKey.delete(key);
      else this.#byKey.set(key, kept);
    }
    const text = [...this.#byRun.values()].map((entry) => JSON.stringify(entry)).join("\n") + "\n";
    const temporary = `${this.#path}.tmp`;
    return this.#serial(async () => {
      await writeSynced(temporary, "w", text);
      await rename(temporary, this.#path);
    });
  }
}
