/**
 * Policy files' syntax (P-POL-1): JSON with comments and trailing commas, read into a syntax tree
 * with offsets, stopping at the first error. Ours rather than jsonc-parser's `parseTree` because
 * the policy loads on the kernel's start path, and jsonc-parser is CommonJS: the leash's modules
 * took 15 ms to load there instead of 8, and the kernel was ready ~6 ms later (issue 33; any
 * CommonJS package alone costs a fresh process 13-17 ms). jsonc-parser stays for editing
 * (`project_profile.ts`, in the `onboard` command only); the nodes here have the shape of its
 * `Node`, so its edits take them.
 */
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "../../protocol/json_depth.ts";

/** A node of the syntax tree, shaped as jsonc-parser's `Node` (offsets in UTF-16 code units). */
export interface JsoncNode {
  type: "object" | "array" | "property" | "string" | "number" | "boolean" | "null";
  offset: number;
  length: number;
  /** A string's, number's, boolean's or null's value. */
  // deno-lint-ignore no-explicit-any
  value?: any;
  /** A property's colon. */
  colonOffset?: number;
  /** An object's properties, an array's items, a property's key and value. */
  children?: JsoncNode[];
}

/** The first syntax error of a text: where, and what (jsonc-parser's name for it, e.g. `CommaExpected`). */
export class JsoncError extends Error {
  constructor(readonly offset: number, readonly problem: string) {
    super(`${problem} at offset ${offset}`);
  }
}

/** How deeply arrays and objects may nest (a policy uses 4 levels); deeper is an error, not a stack overflow. */
const MAX_DEPTH = 512;

/** A number as JSON writes it. */
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** A word: `true`, `false`, `null` or a stray symbol. */
const WORD = /[A-Za-z0-9_$]+/y;
/** What may follow a backslash in a string. */
const ESCAPE = /["\\/bfnrt]|u[0-9a-fA-F]{4}/y;

const SLASH = 0x2f;
const STAR = 0x2a;

/** The tree of the JSONC `text`, or undefined when it holds no value (only blanks and comments). */
export function parseJsonc(text: string): JsoncNode | undefined {
  const reader = new Reader(text);
  reader.skip();
  if (reader.at >= text.length) return undefined;
  const root = reader.value(0);
  reader.skip();
  if (reader.at < text.length) reader.fail("EndOfFileExpected");
  return root;
}

/** A position in a text and the grammar read from it. */
class Reader {
  at = 0;
  constructor(readonly text: string) {}

  fail(problem: string, offset = this.at): never {
    throw new JsoncError(offset, problem);
  }

  /** Moves past blanks and comments. */
  skip(): void {
    const text = this.text;
    while (this.at < text.length) {
      const c = text.charCodeAt(this.at);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.at++;
      } else if (c === SLASH && text.charCodeAt(this.at + 1) === SLASH) {
        const end = text.slice(this.at).search(/[\r\n]/);
        this.at = end < 0 ? text.length : this.at + end;
      } else if (c === SLASH && text.charCodeAt(this.at + 1) === STAR) {
        const end = text.indexOf("*/", this.at + 2);
        if (end < 0) this.fail("UnexpectedEndOfComment");
        this.at = end + 2;
      } else if (c === SLASH) {
        this.fail("InvalidCommentToken");
      } else {
        return;
      }
    }
  }

  /** The value starting at the next token; `depth` counts the arrays and objects around it. */
  value(depth: number): JsoncNode {
    this.skip();
    const text = this.text;
    const start = this.at;
    const c = text.charCodeAt(start);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth >= MAX_DEPTH) this.fail("nested too deeply");
      return c === OPEN_BRACE ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === QUOTE) return this.string();
    NUMBER.lastIndex = start;
    const number = NUMBER.exec(text);
    if (number !== null) {
      this.at = start + number[0].length;
      return { type: "number", offset: start, length: number[0].length, value: Number(number[0]) };
    }
    WORD.lastIndex = start;
    const word = WORD.exec(text)?.[0];
    if (word === "true" || word === "false" || word === "null") {
      this.at = start + word.length;
      const type = word === "null" ? "null" : "boolean";
      return {
        type,
        offset: start,
        length: word.length,
        value: type === "null" ? null : word === "true",
      };
    }
    const closes = c === COMMA || c === COLON || c === CLOSE_BRACE || c === CLOSE_BRACKET;
    return this.fail(start >= text.length || closes ? "ValueExpected" : "InvalidSymbol");
  }

  /** The string literal at the reader's position, its escapes checked and decoded. */
  string(): JsoncNode {
    const text = this.text;
    const start = this.at;
    let at = start + 1;
    while (true) {
      if (at >= text.length) this.fail("UnexpectedEndOfString", start);
      const c = text.charCodeAt(at);
      if (c === QUOTE) break;
      if (c < 0x20) this.fail("InvalidCharacter", at);
      if (c === BACKSLASH) {
        ESCAPE.lastIndex = at + 1;
        const escape = ESCAPE.exec(text);
        if (escape === null) {
          this.fail(text[at + 1] === "u" ? "InvalidUnicode" : "InvalidEscapeCharacter", at);
        }
        at += 1 + escape[0].length;
      } else {
        at++;
      }
    }
    this.at = at + 1;
    return {
      type: "string",
      offset: start,
      length: this.at - start,
      value: JSON.parse(text.slice(start, this.at)),
    };
  }

  /** The object at the reader's position: its properties in order, duplicates kept. */
  object(depth: number): JsoncNode {
    const start = this.at++;
    const children: JsoncNode[] = [];
    this.skip();
    while (this.text.charCodeAt(this.at) !== CLOSE_BRACE) {
      if (this.at >= this.text.length) this.fail("CloseBraceExpected");
      if (this.text.charCodeAt(this.at) !== QUOTE) this.fail("PropertyNameExpected");
      const key = this.string();
      this.skip();
      if (this.text.charCodeAt(this.at) !== COLON) this.fail("ColonExpected");
      const colonOffset = this.at++;
      const value = this.value(depth);
      children.push({
        type: "property",
        offset: key.offset,
        length: value.offset + value.length - key.offset,
        colonOffset,
        children: [key, value],
      });
      this.#separator(CLOSE_BRACE, "CloseBraceExpected");
    }
    this.at++;
    return { type: "object", offset: start, length: this.at - start, children };
  }

  /** The array at the reader's position. */
  array(depth: number): JsoncNode {
    const start = this.at++;
    const children: JsoncNode[] = [];
    this.skip();
    while (this.text.charCodeAt(this.at) !== CLOSE_BRACKET) {
      if (this.at >= this.text.length) this.fail("CloseBracketExpected");
      children.push(this.value(depth));
      this.#separator(CLOSE_BRACKET, "CloseBracketExpected");
    }
    this.at++;
    return { type: "array", offset: start, length: this.at - start, children };
  }

  /** After a member: a comma (a trailing one too) and the blanks after it, or the closing `close`. */
  #separator(close: number, unclosed: string): void {
    this.skip();
    const c = this.text.charCodeAt(this.at);
    if (c === COMMA) {
      this.at++;
      this.skip();
    } else if (c !== close) {
      this.fail(this.at >= this.text.length ? unclosed : "CommaExpected");
    }
  }
}
