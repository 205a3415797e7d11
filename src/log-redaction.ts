import type { pino } from "pino";

/**
 * Secrets censored in log objects, by path, done once a line on the object pino is given (its
 * `formatters.log`) and once a child on its bindings, rather than by pino's `redact` option. pino's
 * redaction (@pinojs/redact, pino 10) runs, for every value of every line, a redactor that parses
 * each of its paths again and clones along them: with the gateway's paths a line took 5.8 times
 * the CPU and 10 times the bytes of a line without (docs/benchmarks.md, `bench:log-lines`). This
 * walks only the properties the paths name and copies an object only when it censors in it: a
 * line with no secret costs a few property checks and allocates nothing.
 *
 * What is censored is what pino's redaction censors, for JSON-like values (a test logs random
 * objects through both and compares the lines): a path is dot-separated names, `*` for any
 * property, `["name"]` for a name with dots or dashes; a property on a path is censored when it
 * is the object's own, whatever its value (at the top level, unless undefined or a function,
 * which pino leaves out of the line anyway); a path goes on through a property only when that
 * is an object. An object is copied, never changed, before a property of it is censored.
 */

/** A path step: what is censored here, and where the paths go on. */
interface PathNode {
  /** This property is censored. */
  censor: boolean;
  /** Steps by property name. */
  readonly names: Map<string, PathNode>;
  /** `names` as a list, walked without an iterator. */
  list: readonly { readonly name: string; readonly step: PathNode }[];
  /** The step for any property (`*`); its steps are already merged into `names`. */
  any: PathNode | undefined;
}

function node(): PathNode {
  return { censor: false, names: new Map(), list: [], any: undefined };
}

/** `headers["sec-websocket-protocol"]` → ["headers", "sec-websocket-protocol"]; refuses what is not a path. */
export function pathSteps(path: string): string[] {
  const steps: string[] = [];
  const step = /([^.[\]"]+)|\["([^"]+)"\]/y;
  let at = 0;
  while (at < path.length) {
    step.lastIndex = at;
    const found = step.exec(path);
    if (found === null) throw new Error(`log redaction path ${JSON.stringify(path)}: expected a name, * or ["name"] at ${at}`);
    steps.push(found[1] ?? found[2] ?? "");
    at = step.lastIndex;
    if (at < path.length && path[at] === ".") at += 1;
    else if (at < path.length && path[at] !== "[") throw new Error(`log redaction path ${JSON.stringify(path)}: expected . or [ at ${at}`);
  }
  if (steps.length === 0) throw new Error("log redaction path: empty");
  return steps;
}

/** `into` now also holds what `from` holds. */
function merge(into: PathNode, from: PathNode): void {
  into.censor ||= from.censor;
  for (const [name, child] of from.names) {
    const mine = into.names.get(name) ?? node();
    into.names.set(name, mine);
    merge(mine, child);
  }
  if (from.any !== undefined) {
    into.any ??= node();
    merge(into.any, from.any);
  }
}

/** A tree of the paths in which each named step also holds the `*` step beside it, so a property is looked up once. */
function compile(paths: readonly string[]): PathNode {
  const root = node();
  for (const path of paths) {
    let at = root;
    for (const name of pathSteps(path)) {
      if (name === "*") at = at.any ??= node();
      else {
        const next = at.names.get(name) ?? node();
        at.names.set(name, next);
        at = next;
      }
    }
    at.censor = true;
  }
  const fold = (at: PathNode): void => {
    if (at.any !== undefined) {
      fold(at.any);
      for (const child of at.names.values()) merge(child, at.any);
    }
    for (const child of at.names.values()) fold(child);
    at.list = [...at.names].map(([name, step]) => ({ name, step }));
  };
  fold(root);
  return root;
}

type Bag = Record<string, unknown>;

/**
 * A copy of `value` whose properties may be set: an Error still an Error of its class, with all
 * its own properties (message, stack and cause too), for pino's serializer to write as it would
 * the original; an array; or its own enumerable properties.
 */
function copyOf(value: object): Bag {
  if (value instanceof Error) return Object.defineProperties(Object.create(Object.getPrototypeOf(value) as object) as Bag, Object.getOwnPropertyDescriptors(value));
  if (Array.isArray(value)) return [...(value as unknown[])] as unknown as Bag;
  return { ...(value as Bag) };
}

/** `value` with what `at` names censored: `value` itself when nothing is, else a copy along the way. */
function redacted(value: object, at: PathNode, censor: string, top: boolean): object {
  let copy: Bag | undefined;
  const any = at.any;
  if (any === undefined) {
    const list = at.list;
    for (let i = 0; i < list.length; i++) {
      const { name, step } = list[i] as { readonly name: string; readonly step: PathNode };
      if (Object.hasOwn(value, name)) copy = visit(value, copy, name, step, censor, top);
    }
  } else {
    for (const key in value) if (Object.hasOwn(value, key)) copy = visit(value, copy, key, at.names.get(key) ?? any, censor, top);
  }
  return copy ?? value;
}

/** One property of `value` on a path (`step`): its copy so far, with the property censored or its value redacted where it had to be. */
function visit(value: object, copy: Bag | undefined, key: string, step: PathNode, censor: string, top: boolean): Bag | undefined {
  const v = (value as Bag)[key];
  if (step.censor) {
    // At the top level pino leaves undefined and function values out of the line, censored or not.
    if (top && (v === undefined || typeof v === "function")) return copy;
    const out = copy ?? copyOf(value);
    out[key] = censor;
    return out;
  }
  if (typeof v !== "object" || v === null) return copy;
  const inner = redacted(v, step, censor, false);
  if (inner === v) return copy;
  const out = copy ?? copyOf(value);
  out[key] = inner;
  return out;
}

/**
 * A logger whose lines, and whose children's bindings, have `paths` censored with `censor`. pino
 * gives a line's object to `formatters.log`, but a child's bindings to no formatter (a child
 * resets `formatters.bindings`), so the root's `child` is replaced by one that censors them first;
 * a pino child is `Object.create(parent)`, so every descendant inherits it.
 */
export function redactingLogger(make: (formatters: { log(object: Bag): Bag }) => pino.Logger, paths: readonly string[], censor: string): pino.Logger {
  const root = compile(paths);
  const logger = make({ log: (object) => redacted(object, root, censor, true) as Bag });
  // pino's own `child`, called on whichever logger the call is made on (a child of a child too).
  const child = Reflect.get(logger, "child") as (...args: unknown[]) => unknown;
  const censored = function (this: unknown, bindings: pino.Bindings, options?: unknown): unknown {
    return Reflect.apply(child, this, [redacted(bindings, root, censor, true), options]);
  };
  Reflect.set(logger, "child", censored);
  return logger;
}
