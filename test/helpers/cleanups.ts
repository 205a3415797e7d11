import { afterEach, beforeEach } from "vitest";

/** What a test opens and must close: a fake, a session, a gateway. */
export interface Closable {
  close(): unknown;
}

/** Registers what a test must undo after it: an opened thing (handed back) or a cleanup function. */
export interface Closing {
  <T extends Closable>(opened: T): T;
  (cleanup: () => unknown): void;
}

/**
 * Registers an `afterEach` that undoes what the returned function was handed during the test, last
 * first (a session before the fake it talks to), each awaited before the next: a thing's `close()`,
 * or a cleanup function. A thing is handed back, so a test opens and registers it in one
 * expression: `const server = closing(await startFake())`.
 */
export function closeAfterEach(): Closing {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (item: Closable | (() => unknown)) => {
    cleanups.push(typeof item === "function" ? item : () => item.close());
    return typeof item === "function" ? undefined : item;
  };
}

/**
 * A fresh loopback fake for each test: started (`start()`) before it, handed to `use` (the test
 * module's variable), closed after it with what the test opened, last first. The function returned
 * replaces it within a test with one started with `options` (the old one closed first).
 */
export function fakePerTest<F extends Closable, O>(closing: Closing, start: (options?: O) => Promise<F>, use: (fake: F) => void): (options: O) => Promise<void> {
  let current: F | undefined;
  const started = async (options?: O): Promise<void> => {
    current = closing(await start(options));
    use(current);
  };
  beforeEach(() => started());
  return async (options) => {
    await current?.close();
    await started(options);
  };
}
