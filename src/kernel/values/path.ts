import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import {
  Duration,
  isList,
  listItem,
  listLength,
  listSlice,
  Outcome,
  Table,
  TableRows,
  type Value,
} from "./value.ts";

/** One step of a path (V-PATH-1). `quoted` marks the `["name"]` form. */
export type PathSegment =
  | { kind: "name"; name: string; quoted: boolean }
  | { kind: "index"; index: number }
  | { kind: "range"; from: number; to: number };

/** A `-32005` error carrying `{ref, path}` (K-VAL-5); `path` is null when none was given. */
export function badPath(message: string, ref: string, path: string | null): RpcError {
  return new RpcError(ErrorCode.BAD_PATH_OR_SLICE, message, { ref, path });
}

/** Parses a path by the V-PATH-1 grammar; any deviation → -32005. */
export function parsePath(path: string, ref: string): PathSegment[] {
  const segments: PathSegment[] = [];
  const fail = (why: string) => badPath(`bad path: ${why}`, ref, path);
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c === "[") {
      const close = bracketEnd(path, i + 1);
      if (close < 0) throw fail("unterminated [");
      segments.push(bracket(path.slice(i + 1, close), fail));
      i = close + 1;
    } else {
      // A name, with a leading "." except at the very start; ".[" only at the start.
      if (c === ".") i++;
      else if (i !== 0) throw fail(`unexpected ${JSON.stringify(c)}`);
      if (c === "." && path[i] === "[" && i === 1) continue;
      let end = i;
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
      if (end === i) throw fail("a . must be followed by a name");
      segments.push({ kind: "name", name: path.slice(i, end), quoted: false });
      i = end;
    }
  }
  return segments;
}

/** Index of the `]` closing a bracket whose body starts at `i` (skipping a JSON string), or -1. */
function bracketEnd(path: string, i: number): number {
  if (path[i] === '"') {
    for (let j = i + 1; j < path.length; j++) {
      if (path[j] === "\\") j++;
      else if (path[j] === '"') return path[j + 1] === "]" ? j + 1 : -1;
    }
    return -1;
  }
  return path.indexOf("]", i);
}

function bracket(body: string, fail: (why: string) => RpcError): PathSegment {
  if (body.startsWith('"')) {
    let name: unknown;
    try {
      name = JSON.parse(body);
    } catch {
      throw fail("bad quoted name");
    }
    return { kind: "name", name: name as string, quoted: true };
  }
  const range = /^(\d+)\.\.(\d+)$/.exec(body);
  if (range) return { kind: "range", from: uint(range[1], fail), to: uint(range[2], fail) };
  if (/^\d+$/.test(body)) return { kind: "index", index: uint(body, fail) };
  throw fail(`bad bracket [${body}]`);
}

function uint(digits: string, fail: (why: string) => RpcError): number {
  const n = Number(digits);
  if (n > Number.MAX_SAFE_INTEGER) throw fail("index above 2^53-1");
  return n;
}

/** Selects `path` from a value (V-PATH-1..4); errors → -32005 with `{ref, path}`. */
export function selectPath(value: Value, path: string, ref: string): Value {
  let v = value;
  for (const segment of parsePath(path, ref)) {
    const next = step(v, segment);
    if (next === undefined) throw badPath(`path ${path} does not select a value`, ref, path);
    v = next;
  }
  return v;
}

/** One selection step, or undefined when it selects nothing. */
function step(v: Value, segment: PathSegment): Value | undefined {
  switch (segment.kind) {
    case "name":
      return field(v, segment.name, segment.quoted);
    case "index":
      if (isList(v)) return segment.index < listLength(v) ? listItem(v, segment.index) : undefined;
      if (v instanceof Table) return segment.index < v.n ? v.row(segment.index) : undefined;
      return undefined;
    case "range": {
      const len = isList(v) ? listLength(v) : v instanceof Table ? v.n : -1;
      if (len < 0) return undefined;
      const from = Math.min(segment.from, len);
      const to = Math.max(from, Math.min(segment.to, len));
      return v instanceof Table ? v.slice(from, to) : listSlice(v as Value[] | TableRows, from, to);
    }
  }
}

function field(v: Value, name: string, quoted: boolean): Value | undefined {
  if (v instanceof Map) return v.has(name) ? v.get(name) : undefined;
  if (v instanceof Table) {
    if (name === "rows" && !quoted) return new TableRows(v);
    return v.column(name);
  }
  if (v instanceof Outcome) {
    switch (name) {
      case "ok":
        return v.ok;
      case "status":
        return v.status;
      case "signal":
        return v.signal;
      case "out":
        return v.out;
      case "err":
        return v.err;
      case "dur_ns":
        return new Duration(v.durNs);
      case "pid":
        return v.pid;
      case "cmd":
        return v.cmd;
      case "stdout":
        return v.stdout;
      case "stderr":
        return v.err;
      default:
        return field(v.out, name, quoted);
    }
  }
  return undefined;
}
