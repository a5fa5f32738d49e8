import {
  ELIDE_DEFAULTS,
  ELIDE_HARD_CAP,
  type ElideBudget,
  PREVIEW_BUDGET,
  PREVIEW_ITEMS,
  PREVIEW_SCALARS,
} from "../../protocol/limits.ts";
import { BlobValue } from "./blob_value.ts";
import { base64 } from "./chunk.ts";
import { scalarCount, scalarSlice } from "./js_string.ts";
import type { ElideOverride } from "./params.ts";
import { renderHead } from "./render.ts";
import type { ValueUri } from "./uri.ts";
import {
  isList,
  type List,
  listItem,
  listLength,
  listSlice,
  Outcome,
  Table,
  tagOf,
  type Value,
} from "./value.ts";
import { setMember, type Wire, wireBytes, wireWithin } from "./wire.ts";

/**
 * How deep refs nest inside previews: a preview element that is itself elided gets a preview,
 * but refs below that level carry `{"$":"null"}` and `""`, which keeps the work and size of a
 * ref bounded whatever the value's shape.
 */
const PREVIEW_DEPTH = 2;

/**
 * The budget of one call (V-ELIDE-2): the defaults overridden by the members given. `max_bytes`
 * is clamped to the hard cap and also sets `max_bytes_raw`.
 */
export function resolveBudget(override?: ElideOverride | null): ElideBudget {
  const budget = { ...ELIDE_DEFAULTS };
  if (override?.max_bytes != null) {
    budget.max_bytes = Math.min(override.max_bytes, ELIDE_HARD_CAP);
    budget.max_bytes_raw = budget.max_bytes;
  }
  if (override?.max_rows != null) budget.max_rows = override.max_rows;
  if (override?.max_items != null) budget.max_items = override.max_items;
  return budget;
}

/**
 * The wire form of a value to return (V-ELIDE-3..6): the full tagged value when it is within the
 * budget, else a `ref` to `uri` with a bounded preview. An outcome is never elided as a whole;
 * its `out` and `err` are decided separately (suffixes `.out`, `.err`). The result never exceeds
 * 65536 encoded bytes, and huge or CAS-backed values are decided without being read.
 */
export async function elideValue(
  value: Value,
  budget: ElideBudget,
  uri: ValueUri,
  tty: boolean,
): Promise<Wire> {
  if (value instanceof Outcome) return await elideOutcome(value, budget, uri, tty);
  return await elideAt(value, budget, uri, tty, 0);
}

async function elideOutcome(
  o: Outcome,
  budget: ElideBudget,
  uri: ValueUri,
  tty: boolean,
): Promise<Wire> {
  const outUri = uri.field("out");
  const errUri = uri.field("err");
  let out = await elideAt(o.out, budget, outUri, tty, 0);
  let err = await elideAt(o.err, budget, errUri, tty, 0);
  const wire = () => {
    const w: Wire = {
      $: "outcome",
      ok: o.ok,
      status: o.status,
      signal: o.signal,
      out,
      err,
      dur_ns: o.durNs,
      pid: o.pid,
      cmd: o.cmd,
    };
    if (o.truncated) w.truncated = true;
    if (o.netRefused.length > 0) w.net_refused = [...o.netRefused];
    return w;
  };
  // Each member may fit the budget while both together pass the hard cap: elide the larger
  // member, then the other, then drop their previews.
  const order = wireBytes(out) >= wireBytes(err) ? ["out", "err"] : ["err", "out"];
  for (const name of order) {
    if (wireBytes(wire()) <= ELIDE_HARD_CAP) return wire();
    if (name === "out" && out.$ !== "ref") out = await refOf(o.out, outUri, tty, 0);
    if (name === "err" && err.$ !== "ref") err = await refOf(o.err, errUri, tty, 0);
  }
  if (wireBytes(wire()) > ELIDE_HARD_CAP) {
    out = withoutPreview(out);
    err = withoutPreview(err);
  }
  if (wireBytes(wire()) > ELIDE_HARD_CAP) {
    out = withoutCols(out);
    err = withoutCols(err);
  }
  return wire();
}

async function elideAt(
  v: Value,
  budget: ElideBudget,
  uri: ValueUri,
  tty: boolean,
  depth: number,
): Promise<Wire> {
  if (!overCount(v, budget)) {
    const wire = wireWithin(v, budget.max_bytes);
    if (wire) return wire;
  }
  return await refOf(v, uri, tty, depth);
}

/** The count rules of V-ELIDE-4 (CAS-backed payloads are always larger than any byte budget). */
function overCount(v: Value, budget: ElideBudget): boolean {
  if (isList(v)) return listLength(v) > budget.max_items;
  if (v instanceof Table) return v.n > budget.max_rows;
  if (v instanceof Uint8Array) return v.length > budget.max_bytes_raw;
  return v instanceof BlobValue;
}

/** An elided value (V-ELIDE-5), capped by V-ELIDE-6. */
async function refOf(v: Value, uri: ValueUri, tty: boolean, depth: number): Promise<Wire> {
  const ref: Wire = { $: "ref", uri: uri.toString(), of: tagOf(v), n: countOf(v) };
  if (v instanceof Table) ref.cols = columnTags(v);
  const preview = depth < PREVIEW_DEPTH ? await previewOf(v) : undefined;
  ref.preview = { $: "null" };
  ref.render_head = "";
  if (preview !== undefined) {
    ref.preview = await previewWire(preview, uri, tty, depth);
    ref.render_head = await renderHead(preview, tty);
  }
  if (wireBytes(ref) <= ELIDE_HARD_CAP) return ref;
  const bare = withoutPreview(ref);
  return wireBytes(bare) <= ELIDE_HARD_CAP ? bare : withoutCols(bare);
}

function withoutPreview(wire: Wire): Wire {
  return wire.$ === "ref" ? { ...wire, preview: { $: "null" }, render_head: "" } : wire;
}

/**
 * A ref without `cols`, the last thing V-ELIDE-6 can shed: the column names of a very wide table
 * (or one with a huge name) pass the cap on their own, and the table's `.rows`, rows and columns
 * stay reachable by the ref's uri.
 */
function withoutCols(wire: Wire): Wire {
  if (wire.$ !== "ref" || !("cols" in wire)) return wire;
  const { cols: _cols, ...rest } = wire;
  return rest;
}

/** `n` of a ref: rows, items, scalars, bytes, members, else 1. */
function countOf(v: Value): number {
  if (isList(v)) return listLength(v);
  if (v instanceof Table) return v.n;
  if (typeof v === "string") return scalarCount(v);
  if (v instanceof Uint8Array) return v.length;
  if (v instanceof BlobValue) return v.kind === "str" ? v.scalars : v.len;
  if (v instanceof Map) return v.size;
  return 1;
}

/** Column → tag of its first non-null cell, or `"null"`. */
function columnTags(t: Table): Record<string, string> {
  const tags: Record<string, string> = {};
  t.cols.forEach((name, c) => {
    const cell = t.columns[c].find((x) => x !== null);
    setMember(tags, name, cell === undefined ? "null" : tagOf(cell));
  });
  return tags;
}

/** The head of a value that a ref previews, or undefined when it has none. */
async function previewOf(v: Value): Promise<Value | undefined> {
  if (isList(v)) return listSlice(v, 0, Math.min(PREVIEW_ITEMS, listLength(v)));
  if (v instanceof Table) return v.slice(0, Math.min(PREVIEW_ITEMS, v.n));
  if (v instanceof Map) {
    const head = new Map<string, Value>();
    for (const [name, member] of v) {
      if (head.size === PREVIEW_ITEMS) break;
      head.set(name, member);
    }
    return head;
  }
  if (typeof v === "string") return scalarSlice(v, 0, PREVIEW_SCALARS);
  if (v instanceof Uint8Array) return v.slice(0, PREVIEW_SCALARS);
  if (v instanceof BlobValue) {
    return v.kind === "str"
      ? await v.headScalars(PREVIEW_SCALARS)
      : await v.read(0, PREVIEW_SCALARS);
  }
  return undefined;
}

/** A preview's wire form, each element elided with the preview budget and its own suffix. */
async function previewWire(p: Value, uri: ValueUri, tty: boolean, depth: number): Promise<Wire> {
  const element = (x: Value, at: ValueUri) => elideAt(x, PREVIEW_BUDGET, at, tty, depth + 1);
  if (isList(p)) {
    const items: Wire[] = [];
    for (let i = 0; i < listLength(p); i++) {
      items.push(await element(listItem(p as List, i), uri.index(i)));
    }
    return { $: "list", v: items };
  }
  if (p instanceof Table) {
    const cols: Record<string, Wire[]> = {};
    for (let c = 0; c < p.cols.length; c++) {
      const cells: Wire[] = [];
      for (let r = 0; r < p.n; r++) {
        cells.push(await element(p.columns[c][r], uri.index(r).member(p.cols[c])));
      }
      setMember(cols, p.cols[c], cells);
    }
    return { $: "table", cols, n: p.n };
  }
  if (p instanceof Map) {
    const members: Record<string, Wire> = {};
    for (const [name, member] of p) {
      setMember(members, name, await element(member, uri.member(name)));
    }
    return { $: "record", v: members };
  }
  if (typeof p === "string") return { $: "str", v: p };
  return { $: "bytes", v: base64(p as Uint8Array) };
}
