import type { File } from "./ast_nodes.ts";

/**
 * The compact JSON text of `file` (as `JSON.stringify` writes it), or null as soon as it is known
 * to pass `limit` UTF-16 code units. Statements are serialized one at a time, each only once its
 * length is known to fit, so a source whose AST no frame can carry never has its whole text built,
 * nor that of one huge statement (E-4): the text of a 2.2 MB `a=(x x … x)`, one statement of
 * 120 MB of JSON, took the worker's heap from 1.1 to 1.4 GB only to be dropped.
 */
export function boundedAstJson(file: File, limit: number): string | null {
  const stmts: string[] = [];
  let length = 0;
  for (const stmt of file.stmts) {
    if (jsonRoom(stmt, limit - length - 1) < 0) return null;
    const json = JSON.stringify(stmt);
    length += json.length + 1;
    if (length > limit) return null;
    stmts.push(json);
  }
  const text = `{"type":"File","span":${JSON.stringify(file.span)},"stmts":[${stmts.join(",")}]}`;
  return text.length <= limit ? text : null;
}

/**
 * What is left of `room` code units once the compact JSON text of `value` is written, or a
 * negative number as soon as it does not fit; the text itself is never built, only that of its
 * strings and numbers one at a time.
 */
function jsonRoom(value: unknown, room: number): number {
  if (room < 0) return room;
  if (value === null) return room - 4;
  switch (typeof value) {
    case "string":
    case "number":
      return room - JSON.stringify(value).length;
    case "boolean":
      return room - (value ? 4 : 5);
    case "object":
      break;
    default:
      return room - 4; // only an array's undefined is written, as null
  }
  if (Array.isArray(value)) {
    room -= 2 + Math.max(0, value.length - 1);
    for (const item of value) {
      room = jsonRoom(item, room);
      if (room < 0) return room;
    }
    return room;
  }
  room -= 2;
  let first = true;
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    if (member === undefined || typeof member === "function" || typeof member === "symbol") {
      continue;
    }
    room -= JSON.stringify(key).length + (first ? 1 : 2);
    first = false;
    room = jsonRoom(member, room);
    if (room < 0) return room;
  }
  return room;
}
