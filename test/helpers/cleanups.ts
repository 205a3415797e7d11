import { afterEach } from "vitest";

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
