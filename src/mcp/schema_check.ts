import { quotedInput } from "./resource_uri.ts";
import type { JsonSchema } from "./tool_schemas.ts";

/** JSON Schema keywords {@link schemaViolation} understands; the tool schemas use only these. */
export const SUPPORTED_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "enum",
  "minimum",
  "maximum",
  "minLength",
  "items",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "anyOf",
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function typeOk(type: string, v: unknown): boolean {
  switch (type) {
    case "object":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    default:
      return false;
  }
}

function at(path: string, detail: string): string {
  return path === "" ? detail : `${path}: ${detail}`;
}

/** The first way `value` violates `schema`, as a short detail naming the member, or null when it conforms. */
export function schemaViolation(schema: JsonSchema, value: unknown, path = ""): string | null {
  if (Array.isArray(schema.anyOf)) {
    const failures = (schema.anyOf as JsonSchema[]).map((s) => schemaViolation(s, value, ""));
    if (failures.every((f) => f !== null)) {
      return at(path, `matches no allowed form (${failures.join("; ")})`);
    }
  }
  if (typeof schema.type === "string" && !typeOk(schema.type, value)) {
    return at(path, `expected ${schema.type === "object" ? "an object" : schema.type}`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    return at(path, `must be one of ${schema.enum.join(", ")}`);
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) {
      return at(path, `must be >= ${schema.minimum}`);
    }
    if (typeof schema.maximum === "number" && value > schema.maximum) {
      return at(path, `must be <= ${schema.maximum}`);
    }
  }
  if (typeof value === "string" && typeof schema.minLength === "number") {
    if ([...value].length < schema.minLength) {
      return at(path, `must have at least ${schema.minLength} character(s)`);
    }
  }
  if (Array.isArray(value)) return arrayViolation(schema, value, path);
  if (isObject(value)) return objectViolation(schema, value, path);
  return null;
}

function arrayViolation(schema: JsonSchema, value: unknown[], path: string): string | null {
  if (typeof schema.minItems === "number" && value.length < schema.minItems) {
    return at(path, `must have at least ${schema.minItems} item(s)`);
  }
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
    return at(path, `must have at most ${schema.maxItems} item(s)`);
  }
  if (isObject(schema.items)) {
    for (let i = 0; i < value.length; i++) {
      const v = schemaViolation(schema.items, value[i], `${path}[${i}]`);
      if (v !== null) return v;
    }
  }
  return null;
}

function objectViolation(
  schema: JsonSchema,
  value: Record<string, unknown>,
  path: string,
): string | null {
  const member = (k: string) => (path === "" ? quotedInput(k) : `${path}.${quotedInput(k)}`);
  const count = Object.keys(value).length;
  if (typeof schema.minProperties === "number" && count < schema.minProperties) {
    return at(path, `must have at least ${schema.minProperties} member(s)`);
  }
  if (typeof schema.maxProperties === "number" && count > schema.maxProperties) {
    return at(path, `must have at most ${schema.maxProperties} member(s)`);
  }
  for (const k of (schema.required as string[] | undefined) ?? []) {
    if (!Object.hasOwn(value, k)) return at(path, `missing required property "${k}"`);
  }
  const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
  for (const [k, v] of Object.entries(value)) {
    if (Object.hasOwn(properties, k)) {
      const violation = schemaViolation(properties[k], v, member(k));
      if (violation !== null) return violation;
    } else if (schema.additionalProperties === false) {
      return at(path, `unknown property "${quotedInput(k)}"`);
    } else if (isObject(schema.additionalProperties)) {
      const violation = schemaViolation(schema.additionalProperties, v, member(k));
      if (violation !== null) return violation;
    }
  }
  return null;
}
