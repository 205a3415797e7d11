import { Kind, type TSchema } from "@sinclair/typebox";
import { Ajv } from "ajv";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { JSONSchema7 } from "json-schema";
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
 * A TypeBox schema or a zod (v4) schema describing a tool's arguments (an object), or a
 * schema already compiled (`compileJsonSchema`, for tools whose schema arrives as plain JSON
 * Schema, such as MCP tools).
 */
export type ParameterSchema = TSchema | z.ZodType | CompiledSchema;

/** The argument type a parameter schema describes. */
export type InferParameters<P> = P extends z.ZodType
  ? z.output<P>
  : P extends TSchema
    ? P["static"]
    : P extends CompiledSchema<infer T>
      ? T
      : unknown;

function isCompiled(schema: unknown): schema is CompiledSchema {
  return typeof schema === "object" && schema !== null && "json" in schema && typeof (schema as { validate?: unknown }).validate === "function";
}

function isTypeBox(schema: unknown): schema is TSchema {
  return typeof schema === "object" && schema !== null && Kind in schema;
}

function isZod(schema: unknown): schema is z.ZodType {
  return typeof schema === "object" && schema !== null && "_zod" in schema;
}

/** JSON Pointer `/order/id` (TypeBox) or a zod path → `order.id`; the root reads `arguments`. */
function fieldOf(path: string | readonly PropertyKey[]): string {
  const parts = typeof path === "string" ? path.split("/").filter(Boolean) : path.map(String);
  return parts.length === 0 ? "arguments" : parts.join(".");
}

/** A deep copy that keeps only what JSON keeps (TypeBox marks schemas with symbol keys). */
function plainJson(schema: object): JSONSchema7 {
  const copy = JSON.parse(JSON.stringify(schema)) as JSONSchema7 & { $schema?: string };
  delete copy.$schema;
  return copy;
}

function compileTypeBox<T>(schema: TSchema): CompiledSchema<T> {
  const checker = TypeCompiler.Compile(schema);
  return {
    json: plainJson(schema),
    validate(value) {
      if (checker.Check(value)) return { ok: true, value: value as T };
      const errors = [...checker.Errors(value)].map((e) => `${fieldOf(e.path)}: ${e.message}`);
      return { ok: false, errors };
    },
  };
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
  else if (isZod(parameters)) compiled = compileZod<T>(parameters);
  else {
    throw new ToolDefinitionError(
      `${owner}: \`parameters\` must be a TypeBox schema (Type.Object({...})) or a zod schema (z.object({...})).`,
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

/** One validator compiler for plain JSON Schema; strict mode off, since MCP servers publish loose schemas. */
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });

/**
 * Compile a plain JSON Schema (draft-07 style, as MCP servers and hand-written declarations
 * carry) once into a CompiledSchema. Throws `ToolDefinitionError` when it does not compile.
 */
export function compileJsonSchema<T = Record<string, unknown>>(json: JSONSchema7, owner = "tool"): CompiledSchema<T> {
  let check: ReturnType<typeof ajv.compile>;
  const schema = plainJson(json);
  try {
    check = ajv.compile(schema as Record<string, unknown>);
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
