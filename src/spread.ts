/**
 * `{ ...a, ...b, … }`, built so that V8 gives the result the shape other objects of the same keys
 * have.
 *
 * On Node 20 (V8 11.3) an object literal that starts with a spread and then adds to it
 * (`{ ...a, b: 1 }`, `{ ...a, ...b }`) gets a hidden class of its own every time once its code is
 * optimized: each such object costs about half a microsecond and a map (with its descriptors) in
 * the old generation, there until a full collection, and code reading those objects meets a new
 * shape each time. `npm run bench:object-spread` measures it against this and a plain literal.
 * `Object.assign` onto a fresh literal walks the shared transitions instead. A literal that starts
 * with a property (`{ a: 1, ...b }`) is not affected; eslint refuses the other kind in `src/`.
 *
 * Typed as TypeScript types a spread of generic objects, their intersection. The same own
 * enumerable properties, later ones winning, as the spread copies them (an undefined object adds
 * none); an object with an own `__proto__` property (a parsed peer's JSON can
 * have one, where `Object.assign` would set the result's prototype) takes the spread's path.
 */
export function spread<P extends readonly (object | undefined)[]>(...parts: P): Spread<P> {
  for (const part of parts) {
    if (part !== undefined && Object.hasOwn(part, "__proto__")) {
      // The spread's path, one part at a time: a literal that defines `__proto__` as a property.
      // eslint-disable-next-line no-restricted-syntax -- the literal that must define `__proto__` as a property
      return parts.reduce<object>((out, each) => ({ ...out, ...each }), {}) as Spread<P>;
    }
  }
  return Object.assign({}, ...parts) as Spread<P>;
}

/**
 * What `{ ...a, ...b, … }` gives, as TypeScript types a spread of generic objects: the parts'
 * intersection (an undefined part adds nothing, and is typed as if it added its type's properties;
 * parts spread from an array of unknown length make an `object`).
 */
export type Spread<P extends readonly unknown[]> = P extends readonly [infer Head, ...infer Rest] ? (Head & {}) & Spread<Rest> : P extends readonly [] ? unknown : object;
