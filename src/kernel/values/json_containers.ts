/**
 * How many arrays and objects the parse of a JSON text builds (V-JSON-1), a table's rows aside: an
 * array whose items are all objects becomes one columnar table, any other array a list holding its
 * object items as records. One pass and a stack, nothing built, so a text with too many (each held
 * costs ~200 bytes, K-BASH-11) is turned away before its parse. The text is assumed to be JSON: for
 * any other the count means nothing, and its parse fails anyway.
 */
export function jsonContainers(text: string): number {
  let count = 0;
  /** Per open container: null for an object, else its array's object items and whether all are. */
  const open: ({ objects: number; onlyObjects: boolean } | null)[] = [];
  let itemStarts = false;
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
    if (c === 0x22) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) === 0x5c) i++;
      }
    } else if (c === 0x7b) {
      if (!(item && top)) count++; // an array's object item counts once the array ends
      open.push(null);
    } else if (c === 0x5b) {
      open.push({ objects: 0, onlyObjects: true });
      itemStarts = true;
    } else if (c === 0x5d) {
      if (top) count += top.onlyObjects ? 1 : 1 + top.objects;
      open.pop();
    } else if (c === 0x7d) {
      open.pop();
    } else if (c === 0x2c) {
      itemStarts = top !== null && top !== undefined;
    }
  }
  return count;
}
