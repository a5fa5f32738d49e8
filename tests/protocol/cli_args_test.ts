// Issue 33: the command-line parser of both programs keeps node:util parseArgs' rules and first
// message lines without loading node:util.
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { parseCommandArgs, UsageError } from "../../src/protocol/cli_args.ts";

const OPTIONS = {
  socket: { type: "string" },
  session: { type: "string" },
  help: { type: "boolean", short: "h" },
  verbose: { type: "boolean", short: "v" },
  name: { type: "string", short: "n" },
  cap: { type: "string", multiple: true },
  flag: { type: "boolean" },
} as const;

const CASES: string[][] = [
  [],
  ["--socket", "/a"],
  ["--socket=/a", "--socket", "/b"],
  ["--socket"],
  ["--socket", "--session", "s"],
  ["--socket", "-"],
  ["--socket=-5"],
  ["--socket", ""],
  ["--bogus"],
  ["--bogus=1", "x"],
  ["-h"],
  ["-hv"],
  ["-hx"],
  ["-nfoo"],
  ["-n", "foo"],
  ["-hnfoo"],
  ["-n"],
  ["-n", "-x"],
  ["--flag=1"],
  ["--help=yes"],
  ["--flag", "x"],
  ["x", "--flag"],
  ["--", "--socket"],
  ["-"],
  ["--cap", "a", "--cap=b"],
  ["---x"],
  ["--=x"],
  ["--constructor"],
  ["--toString", "a"],
];

/** What a parser made of `args`: its values and operands, or its first message line. */
function outcome(parse: () => { values: object; positionals: string[] }): string {
  try {
    const r = parse();
    return JSON.stringify([{ ...r.values }, r.positionals]);
  } catch (e) {
    return `error: ${(e as Error).message.split("\n")[0]}`;
  }
}

Deno.test("every command line parses as node:util parseArgs (strict) parses it, errors included", () => {
  for (const operands of [false, true]) {
    for (const args of CASES) {
      const ours = outcome(() => parseCommandArgs(args, OPTIONS, operands));
      const node = outcome(() =>
        parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: operands })
      );
      assert.equal(ours, node, `${JSON.stringify(args)}, operands ${operands}`);
    }
  }
});

Deno.test("bad usage is a UsageError", () => {
  for (const args of [["--bogus"], ["--socket"], ["x"], ["--flag=1"]]) {
    assert.throws(() => parseCommandArgs(args, OPTIONS, false), UsageError, args.join(" "));
  }
});
