import { cutText } from "../../protocol/bound_text.ts";
import {
  RENDER_COLUMNS,
  RENDER_EVENT_LIMIT,
  RENDER_HEAD_LINES,
  TEXT_LIMIT,
} from "../../protocol/limits.ts";
import { hasAnsi, stripAnsi } from "./ansi.ts";
import { BlobValue } from "./blob_value.ts";
import { scalarCount, scalarSlice } from "./js_string.ts";
import { utf8Decoder, utf8Length } from "../../protocol/utf8.ts";
import { unicodeEscape } from "../../protocol/unshowable.ts";
import {
  DateTime,
  Duration,
  IntegralFloat,
  isList,
  type List,
  listItem,
  listLength,
  Outcome,
  Table,
  type Value,
} from "./value.ts";

/**
 * A render text produced lazily: `pieces()` concatenate to the full text, while `newlines` and
 * `end` describe it without producing it, so bounding reads only the head it keeps.
 */
interface RenderText {
  /** Number of `\n` in the text. */
  newlines: number;
  /** Whether the text is empty, ends with `\n`, or ends with something else. */
  end: "empty" | "newline" | "other";
  pieces(): AsyncIterable<string>;
}

/** Table rows whose cells decide the column widths: no bounded render can show more rows. */
const WIDTH_ROWS = TEXT_LIMIT / 2;
/** A line-less run of a CAS-backed text longer than this is stripped of ANSI without waiting for `\n`. */
const STRIP_CARRY = 65536;
/** How far back from the end of such a run an escape sequence is kept for the next chunk. */
const ESCAPE_TAIL = 4096;
/** What starts a sequence of more than one character: ESC, the 8-bit CSI or the 8-bit OSC. */
// deno-lint-ignore no-control-regex
const SEQUENCE_START = /[\x1b\x9b\x9d]/;
/** Lines joined into one piece when rendering containers. */
const LINES_PER_PIECE = 256;

/**
 * The render of a value (V-RENDER-1), with ANSI escapes removed when `tty` is false
 * (V-RENDER-2), bounded to `limit` bytes by V-RENDER-3 with `uri` in the marker. Only the head
 * that is kept is produced; line totals come from counts (CAS-backed texts: the blob's `\n` count).
 */
export async function renderBounded(
  value: Value,
  uri: string | null,
  tty: boolean,
  limit = TEXT_LIMIT,
): Promise<string> {
  return (await bounded(value, uri, tty, limit)).text;
}

/** {@link renderBounded}, and whether that is the whole render (not cut). */
async function bounded(
  value: Value,
  uri: string | null,
  tty: boolean,
  limit: number,
): Promise<{ text: string; whole: boolean }> {
  const text = await renderText(value, !tty);
  let head = "";
  let bytes = 0;
  for await (const piece of text.pieces()) {
    head += piece;
    bytes += utf8Length(piece);
    if (bytes > limit) {
      const lines = text.newlines + (text.end === "other" ? 1 : 0);
      return { text: cutText(head, lines, uri, limit), whole: false };
    }
  }
  return { text: head, whole: true };
}

/** The three renders of an exec's outcome (V-RENDER-1..3). */
export interface OutcomeRenders {
  /** ANSI kept, bounded to {@link TEXT_LIMIT}: the journal's, and a tty caller's. */
  tty: string;
  /** ANSI stripped, bounded to {@link TEXT_LIMIT}: a caller's without a tty. */
  plain: string;
  /** ANSI stripped, bounded to {@link RENDER_EVENT_LIMIT}: the `render` event's. */
  event: string;
}

/**
 * The renders of an exec's outcome, produced once when they coincide: a whole render without an
 * escape (7-bit or C1) is its own stripped render, and bounding it to a limit it fits changes nothing.
 */
export async function outcomeRenders(value: Value, uri: string): Promise<OutcomeRenders> {
  const { text: tty, whole } = await bounded(value, uri, true, TEXT_LIMIT);
  if (!whole || hasAnsi(tty)) {
    return {
      tty,
      plain: await renderBounded(value, uri, false),
      event: await renderBounded(value, uri, false, RENDER_EVENT_LIMIT),
    };
  }
  const event = utf8Length(tty) <= RENDER_EVENT_LIMIT
    ? tty
    : await renderBounded(value, uri, false, RENDER_EVENT_LIMIT);
  return { tty, plain: tty, event };
}

/** At most the first 10 lines of a (small) value's render, each cut to 80 scalars (V-ELIDE-5). */
export async function renderHead(value: Value, tty: boolean): Promise<string> {
  const text = await renderText(value, !tty);
  let head = "";
  let lines = 0;
  for await (const piece of text.pieces()) {
    head += piece;
    for (let i = piece.indexOf("\n"); i >= 0; i = piece.indexOf("\n", i + 1)) lines++;
    if (lines >= RENDER_HEAD_LINES) break;
  }
  return head.split("\n").slice(0, RENDER_HEAD_LINES).map(cutLine).join("\n");
}

/** A float as the shortest round-trip decimal that contains `.` or `e` (V-RENDER-1). */
export function floatText(v: number): string {
  if (Object.is(v, -0)) return "-0.0";
  const s = String(v);
  return /[.e]/.test(s) ? s : s + ".0";
}

async function renderText(v: Value, strip: boolean): Promise<RenderText> {
  if (typeof v === "string") return textOf(v.endsWith("\n") ? v.slice(0, -1) : v, strip);
  if (v instanceof BlobValue) {
    return v.kind === "str" ? await blobText(v, strip) : textOf(`<${v.len} bytes>`, false);
  }
  if (isList(v)) {
    const n = listLength(v);
    return linesOf(n, (i) => cutLine(inline(listItem(v, i))));
  }
  if (v instanceof Map) {
    const members = [...v];
    return linesOf(
      members.length,
      (i) => cutLine(`${escapeControls(members[i][0])}: ${inline(members[i][1])}`),
    );
  }
  if (v instanceof Table) return tableText(v);
  if (v instanceof Outcome) return await outcomeText(v, strip);
  return textOf(inline(v), false);
}

async function outcomeText(o: Outcome, strip: boolean): Promise<RenderText> {
  const parts = [await renderText(o.out, strip)];
  const errEmpty = o.err === "" || (o.err instanceof Uint8Array && o.err.length === 0);
  if (!errEmpty) parts.push(textOf("--- stderr ---", false), await renderText(o.err, strip));
  if (!o.ok) {
    const status = o.status !== null ? `[exit status ${o.status}]` : `[killed by ${o.signal}]`;
    parts.push(textOf(status, false));
  }
  return joinTexts(parts);
}

/** Texts joined by `\n`, skipping empty ones. */
function joinTexts(parts: RenderText[]): RenderText {
  const kept = parts.filter((p) => p.end !== "empty");
  if (kept.length === 0) return textOf("", false);
  return {
    newlines: kept.reduce((n, p) => n + p.newlines, kept.length - 1),
    end: kept[kept.length - 1].end,
    async *pieces() {
      for (let i = 0; i < kept.length; i++) {
        if (i > 0) yield "\n";
        yield* kept[i].pieces();
      }
    },
  };
}

function textOf(raw: string, strip: boolean): RenderText {
  const text = strip ? stripAnsi(raw) : raw;
  let newlines = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) newlines++;
  return {
    newlines,
    end: text === "" ? "empty" : text.endsWith("\n") ? "newline" : "other",
    async *pieces() {
      yield text;
    },
  };
}

/** `count` lines without embedded newlines, joined by `\n`. */
function linesOf(count: number, line: (i: number) => string): RenderText {
  const last = count > 0 ? line(count - 1) : "";
  return {
    newlines: Math.max(0, count - 1),
    end: count === 0 || (count === 1 && last === "") ? "empty" : last === "" ? "newline" : "other",
    async *pieces() {
      for (let i = 0; i < count; i += LINES_PER_PIECE) {
        const batch: string[] = [];
        for (let j = i; j < Math.min(count, i + LINES_PER_PIECE); j++) batch.push(line(j));
        yield (i > 0 ? "\n" : "") + batch.join("\n");
      }
    },
  };
}

/** A top-level CAS-backed str minus one trailing newline, streamed. */
async function blobText(v: BlobValue, strip: boolean): Promise<RenderText> {
  const tail = await v.read(Math.max(0, v.len - 2), 2);
  const dropsNewline = tail[tail.length - 1] === 0x0a;
  const length = v.len - (dropsNewline ? 1 : 0);
  const endsWithNewline = dropsNewline && tail.length === 2 && tail[0] === 0x0a;
  const end = length === 0 ? "empty" : endsWithNewline ? "newline" : "other";
  return {
    newlines: (await v.lineCount()) - (dropsNewline ? 1 : 0),
    end: strip && end === "other" ? await strippedEnd(v, length) : end,
    async *pieces() {
      const decoder = utf8Decoder();
      let carry = "";
      for await (const chunk of v.chunks(0, length)) {
        const text = decoder.decode(chunk, { stream: true });
        if (!strip) {
          yield text;
          continue;
        }
        carry += text;
        // Strip whole lines only (no escape sequence spans a newline); very long lines in runs.
        let cut = carry.lastIndexOf("\n") + 1;
        if (cut === 0) {
          if (carry.length <= STRIP_CARRY) continue;
          // Carry over the tail from its first sequence start, 7-bit or 8-bit: a C1 CSI or OSC
          // cut here lost only its introducer and left its parameters as text.
          const tail = carry.length - ESCAPE_TAIL;
          const start = carry.slice(tail).search(SEQUENCE_START);
          cut = start >= 0 ? tail + start : carry.length;
        }
        yield stripAnsi(carry.slice(0, cut));
        carry = carry.slice(cut);
      }
      carry += decoder.decode();
      if (carry !== "") yield strip ? stripAnsi(carry) : carry;
    },
  };
}

/**
 * How the first `length` bytes of a CAS-backed text end once stripped: a last line made only of
 * escape sequences (a colour reset after the final newline) leaves the text ending in `\n`, which
 * starts no line of its own (V-RENDER-3), so the marker's count must not include it. Only the
 * last STRIP_CARRY bytes are read: a last line longer than that is counted as a line.
 */
async function strippedEnd(v: BlobValue, length: number): Promise<"newline" | "other"> {
  const from = Math.max(0, length - STRIP_CARRY);
  const window = await v.read(from, length - from);
  const lastNewline = window.lastIndexOf(0x0a);
  if (lastNewline < 0) return "other";
  const lastLine = utf8Decoder().decode(window.subarray(lastNewline + 1));
  return stripAnsi(lastLine) === "" ? "newline" : "other";
}

function tableText(t: Table): RenderText {
  const shown = Math.min(t.n, WIDTH_ROWS);
  const cells = t.columns.map((column) => {
    const texts: string[] = [];
    for (let r = 0; r < shown; r++) texts.push(cutLine(inline(column[r])));
    return texts;
  });
  const header = t.cols.map((name) => cutLine(escapeControls(name)));
  const widths = header.map((name, c) =>
    cells[c].reduce((w, text) => Math.max(w, scalarCount(text)), scalarCount(name))
  );
  // Rows past WIDTH_ROWS (the last one is built for the line count) may be wider: not padded.
  const row = (texts: string[]) =>
    cutLine(
      texts.map((text, c) =>
        c === texts.length - 1
          ? text
          : text + " ".repeat(Math.max(0, widths[c] - scalarCount(text)))
      ).join("  "),
    );
  const cell = (c: number, r: number) => r < shown ? cells[c][r] : cutLine(inline(t.columns[c][r]));
  return linesOf(t.n + 2, (i) => {
    if (i === 0) return row(header);
    if (i === 1) return row(widths.map((w) => "─".repeat(w)));
    return row(t.cols.map((_, c) => cell(c, i - 2)));
  });
}

/** A line cut to 80 scalars, ending in `…` when cut. */
function cutLine(line: string): string {
  if (line.length <= RENDER_COLUMNS || scalarCount(line) <= RENDER_COLUMNS) return line;
  return scalarSlice(line, 0, RENDER_COLUMNS - 1) + "…";
}

/** The one-line form of a value inside a list, record or table; only its head is built. */
function inline(v: Value): string {
  if (typeof v === "string") return escapeControls(v.slice(0, 2 * RENDER_COLUMNS + 2));
  const out = { text: "" };
  nested(v, out);
  return out.text;
}

/** Appends the compact, JSON-like form of a value, stopping once a line is certainly full. */
function nested(v: Value, out: { text: string }): void {
  if (out.text.length > RENDER_COLUMNS) return;
  if (typeof v === "string") {
    out.text += quoted(v.slice(0, 2 * RENDER_COLUMNS + 2));
  } else if (isList(v)) {
    container("[", "]", listLength(v), (i) => nested(listItem(v as List, i), out), out);
  } else if (v instanceof Map) {
    out.text += "{";
    let first = true;
    for (const [name, member] of v) {
      if (out.text.length > RENDER_COLUMNS) break;
      out.text += (first ? "" : ", ") + quoted(name) + ": ";
      first = false;
      nested(member, out);
    }
    out.text += "}";
  } else if (v instanceof Table) {
    container("[", "]", v.n, (i) => nested(v.row(i), out), out);
  } else {
    out.text += scalarText(v);
  }
}

function container(
  open: string,
  close: string,
  count: number,
  item: (i: number) => void,
  out: { text: string },
): void {
  out.text += open;
  for (let i = 0; i < count && out.text.length <= RENDER_COLUMNS; i++) {
    if (i > 0) out.text += ", ";
    item(i);
  }
  out.text += close;
}

function scalarText(v: Value): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : floatText(v);
  if (v instanceof IntegralFloat) return floatText(v.v);
  if (v instanceof Uint8Array) return `<${v.length} bytes>`;
  if (v instanceof BlobValue) return `<${v.len} bytes>`;
  if (v instanceof Duration) return durationText(v.ns);
  if (v instanceof DateTime) return v.iso;
  return `<${v instanceof Outcome ? "outcome" : "value"}>`;
}

function durationText(ns: number): string {
  const scaled = (div: number, unit: string) => `${Number((ns / div).toFixed(3))}${unit}`;
  if (Math.abs(ns) < 1e3) return `${ns}ns`;
  if (Math.abs(ns) < 1e6) return scaled(1e3, "µs");
  if (Math.abs(ns) < 1e9) return scaled(1e6, "ms");
  return scaled(1e9, "s");
}

/**
 * A string as a JSON string literal whose C1 controls are escapes too: JSON.stringify leaves
 * U+0080–U+009F raw, and an 8-bit CSI or OSC inside a record or list reached a tty:false client
 * (V-RENDER-2), where only a top-level str is stripped.
 */
function quoted(s: string): string {
  return JSON.stringify(s).replace(/[\x7f-\x9f]/g, unicodeEscape);
}

/**
 * Control characters (C0, DEL and C1) written as escapes, so one value stays on one line and
 * starts no escape sequence: ESC and the 8-bit CSI/OSC alike (V-RENDER-2).
 */
function escapeControls(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => {
    switch (c) {
      case "\n":
        return "\\n";
      case "\t":
        return "\\t";
      case "\r":
        return "\\r";
      default:
        return unicodeEscape(c);
    }
  });
}
