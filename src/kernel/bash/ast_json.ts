import type { File } from "./ast_nodes.ts";

/**
 * The compact JSON text of `file` (as `JSON.stringify` writes it), or null as soon as it is known
 * to pass `limit` UTF-16 code units. Statements are serialized one at a time, so a source whose AST
 * no frame can carry never has its whole text built (E-4).
 */
export function boundedAstJson(file: File, limit: number): string | null {
  const stmts: string[] = [];
  let length = 0;
  for (const stmt of file.stmts) {
    const json = JSON.stringify(stmt);
    length += json.length + 1;
    if (length > limit) return null;
    stmts.push(json);
  }
  const text = `{"type":"File","span":${JSON.stringify(file.span)},"stmts":[${stmts.join(",")}]}`;
  return text.length <= limit ? text : null;
}
