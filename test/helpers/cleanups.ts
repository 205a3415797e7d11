import { afterEach } from "vitest";

/** What a test opens and must close: a fake, a session, a gateway. */
export interface Closable {
  close(): unknown;
}

/**
 * Registers an `afterEach` that closes what the returned function was handed during the test, last
 * opened first (a session before the fake it talks to), each close awaited before the next. The
 * function hands its argument back, so a test opens and registers in one expression:
 * `const server = closing(await startFake())`.
 */
export function closeAfterEach(): <T extends Closable>(opened: T) => T {
  const opened: Closable[] = [];
  afterEach(async () => {
    for (const item of opened.splice(0).reverse()) await item.close();
  });
  return (item) => {
    opened.push(item);
    return item;
  };
}
