import type { TSchema } from "@sinclair/typebox";
import type { Ajv, Options as AjvOptions } from "ajv";
import type { TypeCompiler } from "@sinclair/typebox/compiler";
import type { JSONSchema7 } from "json-schema";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ToolDefinitionError } from "./errors.js";

/** The outcome of validating tool arguments: the value to run with, or readable lines. */
export type Validation<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: readonly string[] };

/**
 * A parameter schema normalized once: plain JSON Schema for the wire (what every model and
 * host sees) and a validator compiled once, whichever library the author wrote it in.
 */
export interface CompiledSchema<T = unknown> {
  readonly json: JSONSchema7;
  readonly validate: (value: unknown) => Validation<T>;
}

/**
 * A TypeBox 1.x schema (the `typebox` package). 1.x marks a schema with a string `~kind`
 * property (non-enumerable), where 0.34 (`@sinclair/typebox`, whose `TSchema` this module
 * imports) uses the `[Kind]` symbol — so a 1.x schema is not a 0.34 `TSchema`. Seed 002:
 * "The TypeBox schema goes in as it is", whichever line wrote it. Described structurally so
 * that `typebox` stays a dev dependency: nothing published names a 1.x type.
 */
export interface TypeBox1Schema {
  readonly "~kind": string;
}

/**
 * A TypeBox schema (0.34 or 1.x) or a zod (v4) schema describing a tool's arguments (an
 * object), or a schema already compiled (`compileJsonSchema`, for tools whose schema arrives
 * as plain JSON Schema, such as MCP tools).
 */
export type ParameterSchema = TSchema | TypeBox1Schema | z.ZodType | CompiledSchema;

/** `{ [K in keyof T]: T[K] }`, flattened: what an intersection of mapped types reads as. */
type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** Whether a 1.x property schema carries a modifier (`~optional`, `~readonly`). */
type Marked<S, M extends string> = S extends { readonly [K in M]: true } ? true : false;

type KeysWhere<P, Optional extends boolean, Readonly extends boolean> = {
  [K in keyof P]: [Marked<P[K], "~optional">, Marked<P[K], "~readonly">] extends [Optional, Readonly] ? K : never;
}[keyof P];

/** A 1.x `Type.Object`'s properties, with `Type.Optional` and `Type.Readonly` as TypeBox reads them. */
type StaticObject1<P> = Flatten<
  { [K in KeysWhere<P, false, false>]: Static1<P[K]> } & { [K in KeysWhere<P, true, false>]?: Static1<P[K]> } & {
    readonly [K in KeysWhere<P, false, true>]: Static1<P[K]>;
  } & { readonly [K in KeysWhere<P, true, true>]?: Static1<P[K]> }
>;

type StaticAllOf1<A> = A extends readonly [infer First, ...infer Rest] ? Static1<First> & StaticAllOf1<Rest> : unknown;

/**
 * The value a TypeBox 1.x schema describes, read from its structure (the `~kind` literals of
 * `typebox`'s own types): the JSON kinds a tool's arguments can hold. What it cannot read (a
 * cyclic or referenced schema, a kind with no JSON form) is `unknown`.
 */
export type Static1<S> = S extends { readonly "~kind": "Object"; readonly properties: infer P }
  ? StaticObject1<P>
  : S extends { readonly "~kind": "String" | "TemplateLiteral" }
    ? string
    : S extends { readonly "~kind": "Number" | "Integer" }
      ? number
      : S extends { readonly "~kind": "Boolean" }
        ? boolean
        : S extends { readonly "~kind": "Null" }
          ? null
          : S extends { readonly "~kind": "Literal"; readonly const: infer V }
            ? V
            : S extends { readonly "~kind": "Enum"; readonly enum: readonly (infer V)[] }
              ? V
              : S extends { readonly "~kind": "Array"; readonly items: infer I }
                ? Static1<I>[]
                : S extends { readonly "~kind": "Tuple"; readonly items: infer T extends readonly unknown[] }
                  ? { -readonly [K in keyof T]: Static1<T[K]> }
                  : S extends { readonly "~kind": "Union"; readonly anyOf: readonly (infer U)[] }
                    ? Static1<U>
                    : S extends { readonly "~kind": "Intersect"; readonly allOf: infer A }
                      ? StaticAllOf1<A>
                      : S extends { readonly "~kind": "Record"; readonly patternProperties: Readonly<Record<string, infer V>> }
                        ? Record<string, Static1<V>>
                        : unknown;

/** The argument type a parameter schema describes. */
export type InferParameters<P> = P extends z.ZodType
  ? z.output<P>
  : P extends TSchema
    ? P["static"]
    : P extends CompiledSchema<infer T>
      ? T
      : P extends TypeBox1Schema
        ? Static1<P>
        : unknown;

function isCompiled(schema: unknown): schema is CompiledSchema {
  return typeof schema === "object" && schema !== null && "json" in schema && typeof (schema as { validate?: unknown }).validate === "function";
}

/**
 * TypeBox 0.34's `Kind` (`@sinclair/typebox`): a registered symbol, so it is the same whichever
 * copy of the package wrote the schema, and reading it loads no TypeBox here.
 */
const TYPEBOX_KIND = Symbol.for("TypeBox.Kind");

/** TypeBox 0.34 (`@sinclair/typebox`): marked with the `[Kind]` symbol. */
function isTypeBox(schema: unknown): schema is TSchema {
  return typeof schema === "object" && schema !== null && TYPEBOX_KIND in schema;
}

const requireModule = createRequire(import.meta.url);
let typeCompiler: typeof TypeCompiler | undefined;

/**
 * TypeBox's compiler, loaded when the first 0.34 schema is compiled: a process whose agents use
 * no TypeBox 0.34 never holds the package (about 7 MiB of RSS; docs/benchmarks.md, bench:idle).
 * `compileParameters` is synchronous (a tool is checked where it is defined), so the module is
 * required: the ES build where this Node can require ES modules (20.19+, 22.12+), which is the
 * instance the author's own `import` of `@sinclair/typebox` shares; the CommonJS build elsewhere.
 */
function loadTypeCompiler(): typeof TypeCompiler {
  if (typeCompiler !== undefined) return typeCompiler;
  type CompilerModule = { TypeCompiler: typeof TypeCompiler };
  let loaded: CompilerModule;
  try {
    loaded = requireModule(fileURLToPath(import.meta.resolve("@sinclair/typebox/compiler"))) as CompilerModule;
  } catch {
    loaded = requireModule("@sinclair/typebox/compiler") as CompilerModule;
  }
  typeCompiler = loaded.TypeCompiler;
  return typeCompiler;
}

/**
 * TypeBox 1.x (`typebox`): marked with a string `~kind`, except `Type.Unsafe`, which carries
 * `~unsafe` instead (both non-enumerable, so the JSON form never shows them).
 */
function isTypeBox1(schema: unknown): schema is TypeBox1Schema {
  if (typeof schema !== "object" || schema === null) return false;
  const marks = schema as Record<string, unknown>;
  return typeof marks["~kind"] === "string" || "~unsafe" in marks;
}

function isZod(schema: unknown): schema is z.ZodType {
  return typeof schema === "object" && schema !== null && "_zod" in schema;
}

/** JSON Pointer `/order/id` (TypeBox) or a zod path → `order.id`; the root reads `arguments`. */
function fieldOf(path: string | readonly PropertyKey[]): string {
  const parts = typeof path === "string" ? path.split("/").filter(Boolean) : path.map(String);
  return parts.length === 0 ? "arguments" : parts.join(".");
}

/**
 * A deep copy that keeps only what JSON keeps: TypeBox marks schemas with symbol keys (0.34)
 * or non-enumerable `~` keys (1.x), and neither reaches a model. A `RegExp` (1.x takes one as
 * `pattern`) becomes its source, which is what JSON Schema's `pattern` is.
 */
function plainJson(schema: object): JSONSchema7 {
  const text = JSON.stringify(schema, (_key, value: unknown) => (value instanceof RegExp ? value.source : value));
  const copy = JSON.parse(text) as JSONSchema7 & { $schema?: string };
  delete copy.$schema;
  return copy;
}

function compileTypeBox<T>(schema: TSchema): CompiledSchema<T> {
  const checker = loadTypeCompiler().Compile(schema);
  return {
    json: plainJson(schema),
    validate(value) {
      if (checker.Check(value)) return { ok: true, value: value as T };
      const errors = [...checker.Errors(value)].map((e) => `${fieldOf(e.path)}: ${e.message}`);
      return { ok: false, errors };
    },
  };
}

/** 1.x kinds whose JSON form is not JSON Schema (`{"type":"bigint"}`…), each with its fix. */
const NON_JSON_KINDS: Readonly<Record<string, string>> = {
  BigInt: "Use Type.Integer() or Type.String() and convert in execute.",
  Symbol: "Use Type.String().",
  Undefined: "Leave the property out instead: Type.Optional(...).",
  Void: "Leave the property out instead: Type.Optional(...).",
  Function: "A model sends data, not code; take the data the function would need.",
  Constructor: "A model sends data, not code; take the data the constructor would need.",
};

/**
 * The first part of a 1.x schema with no JSON Schema form, as `parameters.<field>: <why and
 * the fix>`. Such a part would reach the model as something else (a refinement or codec
 * vanishes from the JSON; `{"type":"bigint"}` is no JSON type), and the arguments are
 * checked against the JSON form (there is no 1.x validator here), so it could not hold either.
 */
function unrepresentable(node: unknown, path: string, seen: Set<object>): string | undefined {
  if (typeof node !== "object" || node === null || seen.has(node)) return undefined;
  seen.add(node);
  if (node instanceof RegExp) {
    const flags = node.flags.replace("u", "");
    return flags === "" ? undefined : `${path}: the RegExp pattern's flags (${flags}) have no JSON Schema form (a pattern is its source alone). Write the pattern without flags, e.g. [Bb]ob rather than /bob/i.`;
  }
  const marks = node as Record<string, unknown>;
  if ("~refine" in marks) {
    return `${path}: Type.Refine has no JSON Schema form — the model never sees the check and it cannot run here. Use a JSON Schema constraint (pattern, minimum, enum…), or check it in execute and return { text, isError: true }.`;
  }
  if ("~codec" in marks) {
    return `${path}: Type.Codec has no JSON Schema form — arguments arrive as the model sent them, never decoded. Take the encoded type (e.g. Type.String()) and decode it in execute.`;
  }
  const kind = marks["~kind"];
  if (typeof kind === "string" && Object.hasOwn(NON_JSON_KINDS, kind)) {
    return `${path}: Type.${kind} has no JSON Schema form (models send JSON). ${NON_JSON_KINDS[kind]}`;
  }
  for (const [key, value] of Object.entries(marks)) {
    const problem =
      key === "properties" && typeof value === "object" && value !== null
        ? Object.entries(value).map(([field, schema]) => unrepresentable(schema, `${path}.${field}`, seen)).find((p) => p !== undefined)
        : unrepresentable(value, path, seen);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * TypeBox 1.x: its plain JSON form is draft-07-compatible JSON Schema (a tuple is
 * `items: [...]` with `additionalItems`, a cyclic type `$defs` and `$ref`), so it is checked
 * by the same ajv as any JSON Schema — `typebox` is not a runtime dependency, and a schema
 * goes in as it is (seed 002). What the JSON form cannot say is refused, not dropped.
 */
function compileTypeBox1<T>(schema: TypeBox1Schema, owner: string): CompiledSchema<T> {
  const problem = unrepresentable(schema, "parameters", new Set());
  if (problem !== undefined) throw new ToolDefinitionError(`${owner}: ${problem}`);
  return compileJsonSchema<T>(plainJson(schema), owner);
}

function compileZod<T>(schema: z.ZodType): CompiledSchema<T> {
  let json: JSONSchema7;
  try {
    json = plainJson(z.toJSONSchema(schema, { io: "input", unrepresentable: "throw" }));
  } catch (cause) {
    throw new ToolDefinitionError(
      `parameters: this zod schema has no JSON Schema form (${String(cause)}). Use JSON-representable types (no transforms, dates or functions).`,
    );
  }
  return {
    json,
    validate(value) {
      const parsed = schema.safeParse(value);
      if (parsed.success) return { ok: true, value: parsed.data as T };
      return { ok: false, errors: parsed.error.issues.map((i) => `${fieldOf(i.path)}: ${i.message}`) };
    },
  };
}

/**
 * Normalize a tool's parameters once. The top level must be an object schema: models call
 * tools with named arguments, and the tool-message `when` conditions read top-level fields.
 */
export function compileParameters<T = unknown>(parameters: unknown, owner = "tool"): CompiledSchema<T> {
  let compiled: CompiledSchema<T>;
  if (isCompiled(parameters)) compiled = parameters as CompiledSchema<T>;
  else if (isTypeBox(parameters)) compiled = compileTypeBox<T>(parameters);
  else if (isTypeBox1(parameters)) compiled = compileTypeBox1<T>(parameters, owner);
  else if (isZod(parameters)) compiled = compileZod<T>(parameters);
  else {
    throw new ToolDefinitionError(
      `${owner}: \`parameters\` must be a TypeBox schema (Type.Object({...}), from typebox 1.x or @sinclair/typebox 0.34) or a zod schema (z.object({...})).`,
    );
  }
  if (compiled.json.type !== "object") {
    throw new ToolDefinitionError(
      `${owner}: \`parameters\` must describe an object of named arguments (got type ${JSON.stringify(compiled.json.type ?? "unknown")}). Wrap it: Type.Object({ value: ... }).`,
    );
  }
  return compiled;
}

/** The schema of a tool that takes no arguments. */
export const NO_PARAMETERS: CompiledSchema<Record<string, never>> = {
  json: { type: "object", properties: {}, additionalProperties: false },
  // Models send `{}`, `null` or nothing for an argument-less call; all mean the same.
  validate: (value) =>
    value === undefined || value === null || (typeof value === "object" && !Array.isArray(value))
      ? { ok: true, value: {} }
      : { ok: false, errors: ["arguments: this tool takes no arguments"] },
};

let ajv: Ajv | undefined;

/**
 * One validator compiler for plain JSON Schema; strict mode off, since MCP servers publish
 * loose schemas. `addUsedSchema: false`: a schema's `$id` stays its own — registered on the
 * shared instance, a second tool using the same `$id` (TypeBox's `{ $id: "Order" }`, two MCP
 * servers) would be refused as "already exists". Created on the first JSON Schema compiled
 * (ajv is CommonJS, so `require` loads it where it is needed): a process whose agents declare
 * no such tool never holds it (about 2 MiB; docs/benchmarks.md, bench:idle).
 */
function jsonSchemaCompiler(): Ajv {
  if (ajv !== undefined) return ajv;
  const { Ajv: AjvClass } = requireModule("ajv") as { Ajv: new (options: AjvOptions) => Ajv };
  ajv = new AjvClass({ allErrors: true, strict: false, validateFormats: false, addUsedSchema: false });
  return ajv;
}

/**
 * Compile a plain JSON Schema (draft-07 style, as MCP servers and hand-written declarations
 * carry) once into a CompiledSchema. Throws `ToolDefinitionError` when it does not compile.
 */
export function compileJsonSchema<T = Record<string, unknown>>(json: JSONSchema7, owner = "tool"): CompiledSchema<T> {
  let check: ReturnType<Ajv["compile"]>;
  const schema = plainJson(json);
  try {
    check = jsonSchemaCompiler().compile(schema as Record<string, unknown>);
  } catch (cause) {
    throw new ToolDefinitionError(`${owner}: the JSON Schema does not compile (${cause instanceof Error ? cause.message : String(cause)}).`);
  }
  return {
    json: schema,
    validate(value) {
      if (check(value)) return { ok: true, value: value as T };
      const errors = (check.errors ?? []).map((e) => `${fieldOf(e.instancePath)}: ${e.message ?? "is invalid"}`);
      return { ok: false, errors };
    },
  };
}
