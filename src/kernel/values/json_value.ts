import {
  NODE_BYTES,
  SCALAR_BYTES,
  STRING_BYTES,
  TABLE_CELL_LIMIT,
  VALUE_NESTING_LIMIT,
  VALUE_NODE_LIMIT,
} from "../../protocol/limits.ts";
import { detached } from "../../protocol/detached.ts";
import { jsonShape } from "./json_shape.ts";
import { IntegralFloat, Table, type Value } from "./value.ts";

/** Thrown inside the parser when the text is not exactly one JSON text it can represent. */
const FAIL = new Error("not JSON");
/** What a finished table row hands to its array: the row already lives in the table. */
const ROW = Symbol("row");

type Emitted = Value | typeof ROW;

interface ArrayFrame {
  array: true;
  /** Offset of the `[`, to re-parse the array as a list when a non-object item turns up. */
  start: number;
  items: Value[];
  table: TableBuilder | null;
  /** Known to hold a non-object item: parse it as a list from the start. */
  list: boolean;
}

interface ObjectFrame {
  array: false;
  record: Map<string, Value> | null;
  table: TableBuilder | null;
  key: string;
}

type Frame = ArrayFrame | ObjectFrame;

/** Builds a table column by column while the objects of an array are parsed. */
class TableBuilder {
  readonly cols: string[] = [];
  readonly columns: Value[][] = [];
  readonly #index = new Map<string, number>();
  n = 0;

  /** Sets a cell of the current row; false when a new column would take it past TABLE_CELL_LIMIT. */
  set(key: string, v: Value): boolean {
    let c = this.#index.get(key);
    if (c === undefined) {
      if ((this.cols.length + 1) * (this.n + 1) > TABLE_CELL_LIMIT) return false;
      c = this.cols.length;
      this.#index.set(key, c);
      this.cols.push(key);
      this.columns.push(new Array<Value>(this.n).fill(null));
    }
    this.columns[c][this.n] = v;
    return true;
  }

  endRow(): void {
    for (const cells of this.columns) if (cells.length === this.n) cells.push(null);
    this.n++;
  }

  finish(): Table {
    return new Table(this.cols, this.columns, this.n);
  }
}

/**
 * Converts one JSON text to a value by V-JSON-1, or returns null when the text (ASCII whitespace
 * around it allowed) is not exactly one JSON text. Numbers are typed by their literal: no `.`,
 * `e`, `E` and within ±(2^53−1) is an int, anything else a float; a number too large for a
 * double is treated as not JSON, and so is nesting deeper than VALUE_NESTING_LIMIT (the parse stops
 * there, having built at most that many containers) and a text holding more than
 * VALUE_NODE_LIMIT nodes, its scalars weighed in (found before the parse when its arrays and objects
 * alone are more, else as it builds them; an array of objects whose table would pass TABLE_CELL_LIMIT cells is parsed
 * again as a list of records). Arrays whose items are all objects are built directly as
 * columnar tables, so a large array of objects never exists as one record per row.
 */
export function parseJsonValue(text: string): { value: Value } | null {
  const shape = jsonShape(text);
  if (shape.containers * NODE_BYTES + shape.scalarBytes > VALUE_NODE_LIMIT * NODE_BYTES) {
    return null;
  }
  try {
    return { value: new JsonParser(text).parse() };
  } catch (e) {
    if (e === FAIL) return null;
    throw e;
  }
}

class JsonParser {
  #i = 0;
  /**
   * Bytes taken to be held by what was built: {@link NODE_BYTES} per node, and its scalars
   * (VALUE_NODE_LIMIT); a list re-parsed from a table counting its rows too.
   */
  #bytes = 0;
  readonly #listStarts = new Set<number>();

  constructor(private readonly s: string) {}

  parse(): Value {
    const s = this.s;
    const stack: Frame[] = [];
    this.#ws();
    for (;;) {
      let value: Emitted;
      const c = s.charCodeAt(this.#i);
      if ((c === 0x5b || c === 0x7b) && stack.length >= VALUE_NESTING_LIMIT) throw FAIL;
      if (c === 0x5b) {
        this.#count();
        const start = this.#i++;
        this.#ws();
        if (s.charCodeAt(this.#i) === 0x5d) {
          this.#i++;
          value = [];
        } else {
          stack.push({
            array: true,
            start,
            items: [],
            table: null,
            list: this.#listStarts.has(start),
          });
          continue;
        }
      } else if (c === 0x7b) {
        const parent = stack.length ? stack[stack.length - 1] : null;
        let frame: ObjectFrame;
        if (parent?.array && !parent.list && parent.items.length === 0) {
          parent.table ??= new TableBuilder();
          frame = { array: false, record: null, table: parent.table, key: "" };
        } else {
          this.#count();
          frame = { array: false, record: new Map(), table: null, key: "" };
        }
        this.#i++;
        this.#ws();
        if (s.charCodeAt(this.#i) === 0x7d) {
          this.#i++;
          value = this.#closeObject(frame);
        } else {
          this.#key(frame);
          stack.push(frame);
          continue;
        }
      } else if (c === 0x22) {
        value = this.#string();
        this.#hold(STRING_BYTES + value.length);
      } else {
        if (c === 0x74) value = this.#literal("true", true);
        else if (c === 0x66) value = this.#literal("false", false);
        else if (c === 0x6e) value = this.#literal("null", null);
        else value = this.#number();
        this.#hold(SCALAR_BYTES);
      }
      // Hand the finished value to the enclosing containers, closing those that end here.
      emit: for (;;) {
        const top = stack.length ? stack[stack.length - 1] : null;
        if (top === null) {
          this.#ws();
          if (this.#i !== s.length || value === ROW) throw FAIL;
          return value;
        }
        if (top.array) {
          if (value !== ROW) {
            if (top.table) {
              // A non-object item in an array parsed as a table so far: start it over as a list.
              this.#listStarts.add(top.start);
              stack.pop();
              this.#i = top.start;
              break emit;
            }
            top.items.push(value);
          }
          this.#ws();
          const d = s.charCodeAt(this.#i++);
          if (d === 0x2c) {
            this.#ws();
            break emit;
          }
          if (d !== 0x5d) throw FAIL;
          stack.pop();
          value = top.table ? top.table.finish() : top.items;
        } else {
          if (value === ROW) throw FAIL;
          const columns = top.table?.cols.length;
          if (top.table && !top.table.set(top.key, value)) {
            // Rows whose keys differ make a table of mostly empty cells: start it over as a list.
            const array = stack[stack.length - 2] as ArrayFrame;
            this.#listStarts.add(array.start);
            stack.length -= 2;
            this.#i = array.start;
            break emit;
          }
          if (!top.table) top.record!.set(top.key, value);
          if (!top.table || top.table.cols.length !== columns) this.#count();
          this.#ws();
          const d = s.charCodeAt(this.#i++);
          if (d === 0x2c) {
            this.#ws();
            this.#key(top);
            break emit;
          }
          if (d !== 0x7d) throw FAIL;
          stack.pop();
          value = this.#closeObject(top);
        }
      }
    }
  }

  #count(): void {
    this.#hold(NODE_BYTES);
  }

  #hold(bytes: number): void {
    this.#bytes += bytes;
    if (this.#bytes > VALUE_NODE_LIMIT * NODE_BYTES) throw FAIL;
  }

  #closeObject(frame: ObjectFrame): Emitted {
    if (frame.table) {
      frame.table.endRow();
      return ROW;
    }
    return frame.record!;
  }

  /** Reads `"key"` `:` and the whitespace up to the member's value. */
  #key(frame: ObjectFrame): void {
    if (this.s.charCodeAt(this.#i) !== 0x22) throw FAIL;
    frame.key = this.#string();
    this.#ws();
    if (this.s.charCodeAt(this.#i++) !== 0x3a) throw FAIL;
    this.#ws();
  }

  #ws(): void {
    const s = this.s;
    let i = this.#i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.#i = i;
  }

  #literal(word: string, value: boolean | null): boolean | null {
    if (!this.s.startsWith(word, this.#i)) throw FAIL;
    this.#i += word.length;
    return value;
  }

  /** A string of the text, detached from it: a value of one 26-character string kept 15 MB of stdout (K-BASH-11). */
  #string(): string {
    const s = this.s;
    let i = this.#i + 1;
    const start = i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        this.#i = i + 1;
        return detached(s.slice(start, i));
      }
      if (c === 0x5c) break;
      if (!(c >= 0x20)) throw FAIL;
      i++;
    }
    let out = s.slice(start, i);
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        this.#i = i + 1;
        return detached(out);
      }
      if (c === 0x5c) {
        const e = s.charCodeAt(i + 1);
        i += 2;
        switch (e) {
          case 0x22:
            out += '"';
            break;
          case 0x5c:
            out += "\\";
            break;
          case 0x2f:
            out += "/";
            break;
          case 0x62:
            out += "\b";
            break;
          case 0x66:
            out += "\f";
            break;
          case 0x6e:
            out += "\n";
            break;
          case 0x72:
            out += "\r";
            break;
          case 0x74:
            out += "\t";
            break;
          case 0x75: {
            const hex = s.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw FAIL;
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            throw FAIL;
        }
        continue;
      }
      if (!(c >= 0x20)) throw FAIL;
      const run = i;
      do i++; while (isPlain(s.charCodeAt(i)));
      out += s.slice(run, i);
    }
  }

  #number(): Value {
    const s = this.s;
    let i = this.#i;
    const start = i;
    if (s.charCodeAt(i) === 0x2d) i++;
    const first = s.charCodeAt(i);
    if (first === 0x30) i++;
    else if (first >= 0x31 && first <= 0x39) {
      do i++; while (isDigit(s.charCodeAt(i)));
    } else throw FAIL;
    let float = false;
    if (s.charCodeAt(i) === 0x2e) {
      i++;
      if (!isDigit(s.charCodeAt(i))) throw FAIL;
      do i++; while (isDigit(s.charCodeAt(i)));
      float = true;
    }
    const e = s.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(s.charCodeAt(i))) throw FAIL;
      do i++; while (isDigit(s.charCodeAt(i)));
      float = true;
    }
    this.#i = i;
    if (!float && i - start <= 15) {
      // At most 15 characters: exact in a double, and well inside ±(2^53−1).
      let j = start;
      const negative = s.charCodeAt(j) === 0x2d;
      if (negative) j++;
      let v = 0;
      for (; j < i; j++) v = v * 10 + (s.charCodeAt(j) - 0x30);
      return negative ? -v || 0 : v;
    }
    const v = Number(s.slice(start, i));
    if (!float && Math.abs(v) <= Number.MAX_SAFE_INTEGER) return v;
    if (!Number.isFinite(v)) throw FAIL;
    return Number.isInteger(v) ? new IntegralFloat(v) : v;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isPlain(c: number): boolean {
  return c >= 0x20 && c !== 0x22 && c !== 0x5c;
}
