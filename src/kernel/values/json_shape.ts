import { SCALAR_BYTES, STRING_BYTES } from "../../protocol/limits.ts";

/** What the parse of a JSON text would hold (V-JSON-1), told before it is built. */
export interface JsonShape {
  /**
   * The arrays and objects it builds, a table's rows aside: an array whose items are all objects
   * becomes one columnar table, any other array a list holding its object items as records.
   */
  containers: number;
  /**
   * Bytes its scalar values are taken to hold: {@link STRING_BYTES} and the characters of each
   * string, {@link SCALAR_BYTES} for any other (member names aside).
   */
  scalarBytes: number;
}

/**
 * The {@link JsonShape} of a JSON text: one pass and a stack, nothing built, so a text whose value
 * would hold too much (K-BASH-11) is turned away before its parse. The text is assumed to be JSON:
 * for any other the figures mean nothing, and its parse fails anyway.
 */
export function jsonShape(text: string): JsonShape {
  let containers = 0;
  let scalarBytes = 0;
  /** Per open container: null for an object, else its array's object items and whether all are. */
  const open: ({ objects: number; onlyObjects: boolean } | null)[] = [];
  let itemStarts = false;
  /** The next token is a value: the text's, an item's or a member's (not a member name). */
  let valueStarts = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    const top = open.at(-1);
    const item = itemStarts && c !== 0x5d;
    itemStarts = false;
    if (item && top) {
      if (c === 0x7b) top.objects++;
      else top.onlyObjects = false;
    }
    const value = valueStarts && c !== 0x5d;
    valueStarts = false;
    if (c === 0x22) {
      const start = i;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) === 0x5c) i++;
      }
      if (value) scalarBytes += STRING_BYTES + (i - start - 1);
    } else if (c === 0x7b) {
      if (!(item && top)) containers++; // an array's object item counts once the array ends
      open.push(null);
    } else if (c === 0x5b) {
      open.push({ objects: 0, onlyObjects: true });
      itemStarts = true;
      valueStarts = true;
    } else if (c === 0x5d) {
      if (top) containers += top.onlyObjects ? 1 : 1 + top.objects;
      open.pop();
    } else if (c === 0x7d) {
      open.pop();
    } else if (c === 0x2c) {
      itemStarts = top !== null && top !== undefined;
      valueStarts = itemStarts;
    } else if (c === 0x3a) {
      valueStarts = true;
    } else if (value) {
      scalarBytes += SCALAR_BYTES;
    }
  }
  return { containers, scalarBytes };
}
