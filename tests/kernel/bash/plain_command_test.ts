// Issue 33: a plain command's tree is built without the bash parser, and must be exactly the
// parser's: checked on chosen sources and on many random ones against parseBash itself.
import assert from "node:assert/strict";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { plainCommand } from "../../../src/kernel/bash/plain_command.ts";

/** Sources taken without the parser; each must give parseBash's tree. */
const PLAIN = [
  "",
  "   ",
  "\n",
  "true",
  "ls -la src",
  "  git status\n",
  " a \tb ",
  "a\n\n",
  "\n\t make -j4 test:unit",
  "echo if then fi",
  "npm run build -- --watch=false".replace("=", " "),
  "cp ./a/b.txt ../c,d @x %1 +5 -- -",
];

/** Sources left to the parser: anything beyond one call of plain words. */
const NOT_PLAIN = [
  "a=b",
  "A=1 cmd",
  "echo a=b",
  "echo ~",
  "echo '*'",
  'echo "$HOME"',
  "echo $HOME",
  "ls *.ts",
  "ls a?",
  "echo {a,b}",
  "a; b",
  "a\nb",
  "a && b",
  "a | b",
  "a > f",
  "a # note",
  "a\r",
  "a\\ b",
  "if",
  "time ls",
  "coproc x",
  "declare -x A",
  "export A",
  "local a",
  "readonly a",
  "typeset a",
  "nameref a",
  "let a",
  "function f",
  "for",
  "in",
  "select",
  "while",
  "until",
  "case",
  "do",
  "done",
  "then",
  "else",
  "elif",
  "fi",
  "esac",
  "! ls",
  "[[ a ]]",
  "{ a; }",
  "(a)",
  "ls é",
];

Deno.test("plain commands get exactly the parser's tree", () => {
  for (const src of PLAIN) {
    const tree = plainCommand(src);
    assert.notEqual(tree, null, JSON.stringify(src));
    assert.deepEqual(tree, parseBash(src), JSON.stringify(src));
  }
});

Deno.test("anything beyond one call of plain words is left to the parser", () => {
  for (const src of NOT_PLAIN) assert.equal(plainCommand(src), null, JSON.stringify(src));
});

/** Pieces random sources are made of: plain words, reserved words, blanks and special characters. */
const PIECES = [
  ..."abcxyzABZ019_./:,+@%-".split(""),
  "ls",
  "git",
  "if",
  "in",
  "do",
  "time",
  "let",
  "export",
  "declare",
  "coproc",
  "function",
  "!",
  " ",
  " ",
  " ",
  "\t",
  "\n",
  "=",
  "~",
  "#",
  "*",
  "$",
  "'",
  '"',
  ";",
  "{",
  "}",
  "[",
  "\\",
  "&",
  "|",
];

Deno.test("random sources: a tree built without the parser is always the parser's", () => {
  let seed = 33;
  const next = (n: number) => { // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  let plain = 0;
  let declined = 0;
  for (let i = 0; i < 4000; i++) {
    let src = "";
    for (let k = next(8); k >= 0; k--) src += PIECES[next(PIECES.length)];
    const tree = plainCommand(src);
    if (tree === null) {
      declined++;
      continue;
    }
    plain++;
    assert.deepEqual(tree, parseBash(src), JSON.stringify(src));
  }
  // Both kinds were drawn often enough for the comparison to mean something.
  assert.ok(plain > 500 && declined > 500, `${plain} plain, ${declined} declined`);
});
