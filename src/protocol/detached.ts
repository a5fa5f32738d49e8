/** V8 makes a string cut from a longer one of this length or more a view of it, not a copy. */
const SLICE_MIN = 13;

/**
 * `part` of a larger string as a string of its own, for keeping: V8 keeps a slice, a regular
 * expression's match or a concatenation of them as a view that holds the whole source alive, so
 * one short string kept for long (a transcript value, a session variable) kept megabytes of the
 * text it was cut from. Slicing a concatenation copies it first.
 */
export function detached(part: string): string {
  return part.length < SLICE_MIN ? part : (" " + part).slice(1);
}
