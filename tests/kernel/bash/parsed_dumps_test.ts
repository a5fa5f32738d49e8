/**
 * Kept parses of state dumps (issue 33) answer exactly as parsing the dump again would: checked
 * against `parseDump` itself on dumps that differ in bash's pid, in a variable or a function, and
 * on start states that differ in a read-only variable's value or in an exported name that is no
 * identifier.
 */
import assert from "node:assert/strict";
import { ParsedDumps } from "../../../src/kernel/bash/parsed_dumps.ts";
import { parseDump, type ShellState } from "../../../src/kernel/bash/shell_state.ts";

const encoder = new TextEncoder();
const BASH_VARIABLES = new Set(["BASHPID", "BASHOPTS", "PPID"]);

/** A dump as the driver writes it: cwd, `declare -p` listing, `declare -f`, `alias -p`. */
function dump(pid: string | null, listing: string, funcs = ""): Uint8Array {
  const pidLine = pid === null ? "" : `declare -i BASHPID="${pid}"\n`;
  return encoder.encode(
    `C\0/tmp\0D\0declare -r BASHOPTS="x"\n${pidLine}${listing}` +
      `\0F\0${funcs}\0A\0alias ll='ls -l'\n\0Z\0`,
  );
}

function start(env: Record<string, string> = {}, vars: Record<string, string> = {}): ShellState {
  return {
    cwd: "/tmp",
    env: new Map(Object.entries(env)),
    vars: new Map(Object.entries(vars)),
    funcs: new Map(),
    aliases: new Map(),
  };
}

Deno.test("a kept parse answers as parseDump does, whatever differs between dumps and starts", () => {
  const parsed = new ParsedDumps();
  const cases: [Uint8Array, ShellState][] = [
    [dump("100", 'declare -x A="1"\n'), start()],
    [dump("2000", 'declare -x A="1"\n'), start()], // bash's pid only: the kept parse
    [dump("2000", 'declare -x A="2"\n'), start()],
    [dump("7", 'declare -x A="2"\ndeclare -r R="9"\n'), start({ R: "1" })],
    [dump("8", 'declare -x A="2"\ndeclare -r R="9"\n'), start({ R: "3" })], // R keeps the start's
    [dump("9", 'declare -x A="2"\ndeclare -r R="9"\n'), start({}, { R: 'declare -- R="4"' })],
    // a function's body holding a pid-like line is never taken for bash's pid
    [dump(null, "", 'f () \n{ \n    echo "\ndeclare -i BASHPID="1"\n"\n}\n'), start()],
    [dump(null, "", 'f () \n{ \n    echo "\ndeclare -i BASHPID="2"\n"\n}\n'), start()],
    // an exported BASHPID is not bash's own line: its value is state
    [dump("5", 'declare -ix BASHPID="3"\n'), start()],
    [dump("6", 'declare -ix BASHPID="4"\n'), start()],
    // exported names that are no identifier come from the start, which no dump lists
    [dump("10", 'declare -x A="2"\n'), start({ "A-B": "1" })],
    [dump("11", 'declare -x A="2"\n'), start({ "A-B": "2" })],
    [dump("12", 'declare -x A="2"\n'), start({ "A-B": "2", "x.y": "" })],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [bytes, from] of cases) {
      const got = parsed.parse(bytes.slice(), BASH_VARIABLES, from);
      assert.deepEqual(got, parseDump(bytes, BASH_VARIABLES, from));
      // a caller's changes to its copy never reach a later answer
      got?.env.set("CHANGED", "1");
      got?.funcs.clear();
    }
  }
});

Deno.test("a caller's changes to the state it got never reach a later answer", () => {
  const parsed = new ParsedDumps();
  const bytes = dump("1", 'declare -x A="1"\n', "f () \n{ \n    :\n}\n");
  for (let i = 0; i < 3; i++) {
    const got = parsed.parse(bytes, BASH_VARIABLES, start())!;
    assert.deepEqual(got, parseDump(bytes, BASH_VARIABLES, start()));
    got.env.set("CHANGED", "1");
    got.funcs.clear();
  }
});

Deno.test("where bash does not list BASHPID among its own variables, its value is state", () => {
  const parsed = new ParsedDumps();
  const own = new Set(["BASHOPTS"]);
  for (const pid of ["1", "2"]) {
    const bytes = dump(pid, "");
    assert.deepEqual(parsed.parse(bytes, own, start()), parseDump(bytes, own, start()));
  }
});

Deno.test("an incomplete dump is not parsed into a state, kept or not", () => {
  const parsed = new ParsedDumps();
  const whole = dump("1", 'declare -x A="1"\n');
  const cut = whole.subarray(0, whole.length - 3);
  assert.equal(parsed.parse(cut, BASH_VARIABLES, start()), null);
  assert.equal(parsed.parse(cut, BASH_VARIABLES, start()), null);
  assert.ok(parsed.parse(whole, BASH_VARIABLES, start()) !== null);
});
