/**
 * The policy's JSONC reader (P-POL-1) against jsonc-parser, the parser it replaced on the kernel's
 * start path (issue 33): the same trees for valid texts, an error for every text jsonc-parser
 * finds an error in, at the same offset where both name the same problem.
 */
import assert from "node:assert/strict";
import { type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { JsoncError, type JsoncNode, parseJsonc } from "../../../src/kernel/policy/jsonc.ts";

/** jsonc-parser's tree without its parent links, which ours does not keep. */
function theirs(text: string): { root: Node | undefined; errors: ParseError[] } {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const strip = (node: Node): JsoncNode => {
    const { parent: _, children, ...rest } = node;
    return children === undefined ? rest : { ...rest, children: children.map(strip) };
  };
  return { root: root === undefined ? undefined : strip(root) as Node, errors };
}

/** Ours, or the error it threw. */
function ours(text: string): JsoncNode | undefined | JsoncError {
  try {
    return parseJsonc(text);
  } catch (e) {
    if (e instanceof JsoncError) return e;
    throw e;
  }
}

const VALID = [
  `{}`,
  `[]`,
  ` \t\r\n{ } `,
  `// a comment\n{"principal": {}}`,
  `/* block */ {"a": /* inside */ 1, // line\n "b": [1, 2, ], }`,
  `{"a": {"b": {"c": ["x", "y"]}}}`,
  `{"k": "esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\udcff"}`,
  `{"n": [0, -0, 1.5, -12e3, 4E+2, 7e-1, 65535]}`,
  `{"t": true, "f": false, "z": null}`,
  `{"dup": 1, "dup": 2}`,
  `"just a string"`,
  `42`,
  `{"unicode ☃ key": "ü 😀"}`,
  `{"a": 1}// end without newline`,
  `{"a": 1}\r\n// crlf comment\r\n`,
  `[[[[["deep"]]]]]`,
  `{"a":1,}`,
  `[1,]`,
];

const INVALID = [
  `{"principal": {"agent:a": {"fs.read": ["/**"]`,
  `{"principal": {"a": {}}`,
  `{"a" 1}`,
  `{"a": 1 "b": 2}`,
  `{a: 1}`,
  `{"a": }`,
  `[1 2]`,
  `[1,,2]`,
  `{,}`,
  `[,]`,
  `{"a": tru}`,
  `{"a": truex}`,
  `{"a": 'x'}`,
  `{"a": "unterminated}`,
  `{"a": "bad \\x escape"}`,
  `{"a": "bad \\u12 unicode"}`,
  `{"a": "tab\tinside"}`,
  `{"a": "new\nline"}`,
  `{"a": 1} extra`,
  `{"a": 1} {}`,
  `/* unclosed comment {"a": 1}`,
  `{"a": 1} / x`,
  `{"a": -}`,
  `{"a": 01}`,
  `{"a": 1.}`,
  `{"a": .5}`,
  `{"a": +1}`,
  `]`,
  `}`,
  `[`,
  `{"a": [1, 2}`,
  `{"a": {"b": 1]}`,
];

Deno.test("P-POL-1: the JSONC reader gives jsonc-parser's tree (offsets, lengths, values, colons) for valid texts", () => {
  for (const text of VALID) {
    const them = theirs(text);
    assert.equal(them.errors.length, 0, `jsonc-parser finds ${text} valid`);
    assert.deepEqual(ours(text), them.root, text);
  }
});

/** Problems found inside a string literal. */
const INSIDE_STRING = ["InvalidEscapeCharacter", "InvalidUnicode", "InvalidCharacter"];

Deno.test("P-POL-1: the JSONC reader refuses every text jsonc-parser finds an error in, at its first error's offset where both name the same problem (inside a string: at the character)", () => {
  let same = 0;
  for (const text of INVALID) {
    const them = theirs(text);
    assert.ok(them.errors.length > 0, `jsonc-parser refuses ${text}`);
    const got = ours(text);
    assert.ok(got instanceof JsoncError, `refused: ${text}`);
    const first = them.errors[0];
    if (printParseErrorCode(first.error) !== got.problem) continue;
    same++;
    // inside a string ours names the character, jsonc-parser the string's start
    if (INSIDE_STRING.includes(got.problem)) assert.ok(got.offset > first.offset, text);
    else assert.equal(got.offset, first.offset, text);
  }
  assert.ok(same >= INVALID.length / 2, `${same} of ${INVALID.length} name jsonc-parser's problem`);
});

Deno.test("P-POL-1: blanks and comments alone hold no value; nesting deeper than the reader's bound is an error, not a stack overflow", () => {
  for (const text of ["", "  \n", "// only a comment", "/* c */ // d\n"]) {
    assert.equal(ours(text), undefined, JSON.stringify(text));
  }
  const deep = ours(`${"[".repeat(100000)}${"]".repeat(100000)}`);
  assert.ok(deep instanceof JsoncError);
  assert.equal(deep.problem, "nested too deeply");
  const fine = ours(`${"[".repeat(500)}${"]".repeat(500)}`);
  assert.ok(!(fine instanceof JsoncError) && fine?.type === "array");
});
