/** The `_meta` key naming the task a message relates to (MCP tasks). */
const RELATED_TASK = "io.modelcontextprotocol/related-task";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether `params._meta` is absent or well-formed as MCP defines it: an object whose
 * `progressToken`, if any, is a string or safe integer and whose related-task entry, if any,
 * is an object with a string `taskId` (the MCP SDK's rule for requests and notifications).
 */
export function validMeta(params: Record<string, unknown>): boolean {
  if (!("_meta" in params)) return true;
  const meta = params._meta;
  if (!isObject(meta)) return false;
  const token = meta.progressToken;
  if (token !== undefined && typeof token !== "string" && !Number.isSafeInteger(token)) {
    return false;
  }
  const related = meta[RELATED_TASK];
  return related === undefined || (isObject(related) && typeof related.taskId === "string");
}
