import { BlobValue } from "./blob_value.ts";
import { base64 } from "./chunk.ts";
import { utf8Length } from "../../protocol/utf8.ts";
import {
  DateTime,
  Duration,
  IntegralFloat,
  type List,
  listItem,
  listLength,
  Table,
  TableRows,
  type Value,
} from "./value.ts";

/** A tagged wire value (V-TAG-1). */
export type Wire = { $: string; [member: string]: unknown };

const OVER = new Error("over budget");

/** Sets a member of a wire object, as an own data property even when it is named `__proto__`. */
export function setMember<T>(object: Record<string, T>, name: string, value: T): void {
  if (name === "__proto__") {
    Object.defineProperty(object, name, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    object[name] = value;
  }
}

/** Bytes of the compact JSON encoding of a wire value. */
export function wireBytes(w: unknown): number {
  return utf8Length(JSON.stringify(w));
}

/**
 * The full wire form of a value whose compact encoding is at most `maxBytes`, else null.
 * Building stops as soon as a lower bound of the encoding passes `maxBytes`, so a huge value
 * costs no more than the budget; CAS-backed payloads are never read (they are always larger
 * than any budget). Outcomes are not handled here: they are only ever top-level values.
 *
 * Record and column names that are canonical array indices ("0", "17") are emitted first by
 * JSON.stringify, so their wire order may differ from source order.
 */
export function wireWithin(v: Value, maxBytes: number): Wire | null {
  // Lower bounds: the fixed text of each tagged object, plus one byte per UTF-16 unit of text.
  let used = 0;
  const spend = (n: number) => {
    used += n;
    if (used > maxBytes) throw OVER;
  };
  const list = (items: List): Wire => {
    const n = listLength(items);
    spend(19 + Math.max(0, n - 1));
    const out: Wire[] = [];
    for (let i = 0; i < n; i++) out.push(build(listItem(items, i)));
    return { $: "list", v: out };
  };
  const build = (v: Value): Wire => {
    if (v === null) {
      spend(12);
      return { $: "null" };
    }
    switch (typeof v) {
      case "boolean":
        spend(21);
        return { $: "bool", v };
      case "number":
        if (Number.isInteger(v)) {
          spend(17);
          return { $: "int", v };
        }
        spend(19);
        return { $: "float", v };
      case "string":
        spend(18 + v.length);
        return { $: "str", v };
    }
    if (v instanceof IntegralFloat) {
      spend(19);
      return { $: "float", v: v.v };
    }
    if (v instanceof Uint8Array) {
      spend(20 + 4 * Math.ceil(v.length / 3));
      return { $: "bytes", v: base64(v) };
    }
    if (Array.isArray(v) || v instanceof TableRows) return list(v);
    if (v instanceof Map) {
      spend(21);
      const members: Record<string, Wire> = {};
      for (const [name, member] of v) {
        spend(name.length + 3);
        setMember(members, name, build(member));
      }
      return { $: "record", v: members };
    }
    if (v instanceof Table) {
      spend(29);
      const cols: Record<string, Wire[]> = {};
      v.cols.forEach((name, c) => {
        spend(name.length + 5 + Math.max(0, v.n - 1));
        setMember(cols, name, v.columns[c].map(build));
      });
      return { $: "table", cols, n: v.n };
    }
    if (v instanceof Duration) {
      spend(22);
      return { $: "duration", v: v.ns };
    }
    if (v instanceof DateTime) {
      spend(23 + v.iso.length);
      return { $: "datetime", v: v.iso };
    }
    if (v instanceof BlobValue) throw OVER;
    throw new Error("an outcome is only ever a top-level value");
  };
  try {
    const wire = build(v);
    return wireBytes(wire) <= maxBytes ? wire : null;
  } catch (e) {
    if (e === OVER) return null;
    throw e;
  }
}
