/**
 * The shell state a run records (K-BASH-4/5), value by value, over values that are hard to quote:
 * line breaks, quotes, backslashes, bytes that are not UTF-8, empty values, sparse and associative
 * arrays with odd keys, attributes, namerefs, functions, aliases, options, traps and a cwd that is
 * not UTF-8. What a run records is restored by the next one exactly (round trip).
 */
import assert from "node:assert/strict";
import { bashCandidates, resolveBash } from "../../../src/kernel/bash/discover.ts";
import { type BashExit, type ByteSink, runBash } from "../../../src/kernel/shells/run.ts";
import { ScratchPool } from "../../../src/kernel/bash/scratch_pool.ts";
import {
  applyChange,
  bashOwnVariables,
  cloneState,
  diffState,
  envDelta,
  parseDump,
  restoreScript,
  type ShellChange,
  type ShellState,
} from "../../../src/kernel/bash/shell_state.ts";
import { exec } from "../../_support/exec.ts";
import { withKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const bash = await resolveBash(undefined, bashCandidates(Deno.build.os, Deno.env.get("PATH")));
const bashVariables = await bashOwnVariables(bash);
const encoder = new TextEncoder();

/** A sink that keeps the text written to it. */
class TextSink implements ByteSink {
  text = "";
  write(chunk: Uint8Array): Promise<void> {
    this.text += new TextDecoder().decode(chunk);
    return Promise.resolve();
  }
}

/** Runs `src` cold from `state` in scratch directories under `dir`, without a word on stderr. */
async function runCold(
  dir: string,
  state: ShellState,
  src: string,
): Promise<{ exit: BashExit; out: string }> {
  const scratch = new ScratchPool(dir);
  const [stdout, stderr] = [new TextSink(), new TextSink()];
  try {
    const exit = await runBash({
      bash,
      bashVariables,
      src,
      state: cloneState(state),
      scratch,
      warm: null,
      stdout,
      stderr,
      sandbox: null,
    });
    assert.equal(stderr.text, "");
    return { exit, out: stdout.text };
  } finally {
    scratch.clear();
  }
}

/** Runs `src` cold from `state` in scratch directories under `dir`; the state bash left. */
async function run(dir: string, state: ShellState, src: string): Promise<ShellState> {
  const { exit } = await runCold(dir, state, src);
  assert.notEqual(exit.final, null);
  return exit.final!;
}

/** A change as plain entry lists, in the order the state keeps them. */
function entries(change: ShellChange) {
  const lists = (m: { set: Map<string, string>; unset: string[] }) => ({
    set: [...m.set],
    unset: m.unset,
  });
  return {
    env: lists(change.env),
    vars: lists(change.vars),
    funcs: lists(change.funcs),
    aliases: lists(change.aliases),
  };
}

/** A session state in `dir` with a few exported and shell variables. */
function startState(dir: string, env: Record<string, string> = {}): ShellState {
  return {
    cwd: dir,
    env: new Map(
      Object.entries({ PATH: "/usr/bin:/bin", KEEP: "k", GONE: "g", UNEXP: "u", ...env }),
    ),
    vars: new Map([["OLDV", 'declare -- OLDV="1"']]),
    funcs: new Map(),
    aliases: new Map(),
  };
}

/** Runs `src`, merges what it changed, then runs `true` from there: nothing may change. */
async function recordAndRestore(dir: string, start: ShellState, src: string) {
  const change = diffState(start, await run(dir, start, src));
  const session = cloneState(start);
  applyChange(session, change);
  assert.deepEqual(entries(diffState(session, await run(dir, session, "true"))), {
    env: { set: [], unset: [] },
    vars: { set: [], unset: [] },
    funcs: { set: [], unset: [] },
    aliases: { set: [], unset: [] },
  });
  return change;
}

const TRICKY = String.raw`
nl=$'a\nb'; q="it's \"q\" \$x \`c\`"; bs='a\b\\c'; raw=$'\xff\xfe ok'; empty=''
utf='héllo ✓'; tab=$'\t\e\a'
sp=([1]=a [5]=$'x\ny'); ea=(); declare -a dea
declare -A h=(["k y"]=1 ["q\"]"]=2 [']']=3 [$'n\nl']=4 ['$x']=5 [$'\xff']=$'\xfe')
declare -r ro=1; declare -i int=3+4; declare -l lo=ABC; declare -u up=abc; declare -t tr=1
export E1=$'line\nbreak' E2='é "q"' E3=$'\xff' E4= ; declare -ix EI=7; declare -rx ERX=1
declare -n ref2=nosuch ref3=sp ref5=q
declare ux; declare -x uxe
_u=1; __v=2; export _XE=3; z_=4
export -n UNEXP; unset GONE OLDV
f() { echo "a
alias x=y"; }
g() { :; }; export -f g
alias ll='ls -l' q2="echo 'x'"
shopt -s extglob; set -o noglob; trap 'echo hi' USR1
export IFS=,
mkdir -p $'d\xffir/sub' && cd $'d\xffir/sub'
`;

Deno.test("K-BASH-4/5 tricky values are recorded exactly and restored by the next run", async () => {
  await withTempDir(async (dir) => {
    const change = await recordAndRestore(dir, startState(dir), TRICKY);
    const cwd = new Uint8Array([...encoder.encode(`${dir}/d`), 0xff, ...encoder.encode("ir/sub")]);
    assert.deepEqual(change.cwd, { cwd: `${dir}/d\ufffdir/sub`, cwdBytes: cwd });
    assert.deepEqual(entries(change), {
      env: {
        set: [
          ["E1", "line\nbreak"],
          ["E2", 'é "q"'],
          ["E4", ""],
          ["EI", "7"],
          // ERX is read-only: never persisted
          // bash resets IFS at start: an exported one persists with bash's default
          ["IFS", " \t\n"],
          ["_XE", "3"],
        ],
        unset: ["GONE", "UNEXP"],
      },
      vars: {
        set: [
          ["E3", "declare -x E3=$'\\377'"],
          // an exported integer is restored with its attribute too, and so is `export NAME`
          ["EI", 'declare -ix EI="7"'],
          ["UNEXP", 'declare -- UNEXP="u"'],
          ["bs", 'declare -- bs="a\\\\b\\\\\\\\c"'],
          ["ea", "declare -a ea=()"],
          ["empty", 'declare -- empty=""'],
          [
            "h",
            'declare -A h=(["q\\"]"]="2" ["]"]="3" ["k y"]="1" [$\'n\\nl\']="4" ' +
            "[$'\\377']=$'\\376' [\"\\$x\"]=\"5\" )",
          ],
          ["int", 'declare -i int="7"'],
          ["lo", 'declare -l lo="abc"'],
          ["nl", "declare -- nl=$'a\\nb'"],
          ["q", 'declare -- q="it\'s \\"q\\" \\$x \\`c\\`"'],
          ["raw", "declare -- raw=$'\\377\\376 ok'"],
          ["ref2", 'declare -n ref2="nosuch"'],
          ["ref3", 'declare -n ref3="sp"'],
          ["ref5", 'declare -n ref5="q"'],
          ["sp", "declare -a sp=([1]=\"a\" [5]=$'x\\ny')"],
          ["tab", "declare -- tab=$'\\t\\E\\a'"],
          ["tr", 'declare -t tr="1"'],
          ["up", 'declare -u up="ABC"'],
          ["utf", "declare -- utf=$'h\\303\\251llo \\342\\234\\223'"],
          ["uxe", "declare -x uxe"],
          ["z_", 'declare -- z_="4"'],
          ["__v", 'declare -- __v="2"'],
          ["_u", 'declare -- _u="1"'],
        ],
        unset: ["OLDV"],
      },
      funcs: {
        set: [
          ["f", 'f () \n{ \n    echo "a\nalias x=y"\n}'],
          ["g", "g () \n{ \n    :\n}\ndeclare -fx g"],
        ],
        unset: [],
      },
      aliases: {
        set: [["ll", "alias ll='ls -l'"], ["q2", "alias q2='echo '\\''x'\\'''"]],
        unset: [],
      },
    });
  });
});

Deno.test("K-BASH-4/5 in a UTF-8 locale, and when the source exits inside a function, what is visible there is recorded", async () => {
  await withTempDir(async (dir) => {
    const src = String.raw`
utf='héllo ✓'; mix=$'é\xff✓\n'; export XU='ü ✓' XM=$'ü\xff'
declare -A hu=([ü]=$'✓\xfe' ["a b"]=ü)
set -eu
f() { local OLDV=local KEEP=lk; local -a la=(1); g=global; exit 7; }
f
`;
    const change = await recordAndRestore(dir, startState(dir, { LC_ALL: "C.UTF-8" }), src);
    assert.equal(change.cwd, null);
    assert.deepEqual(entries(change).env, {
      set: [["KEEP", "lk"], ["XU", "ü ✓"]],
      unset: [],
    });
    assert.deepEqual(entries(change).vars, {
      set: [
        ["OLDV", 'declare -- OLDV="local"'],
        ["XM", "declare -x XM=$'\\303\\274\\377'"],
        ["g", 'declare -- g="global"'],
        ["hu", 'declare -A hu=(["a b"]="ü" [ü]=$\'✓\\376\' )'],
        ["la", 'declare -a la=([0]="1")'],
        ["mix", "declare -- mix=$'é\\377✓\\n'"],
        ["utf", 'declare -- utf="héllo ✓"'],
      ],
      unset: [],
    });
  });
});

Deno.test("K-BASH-4/5 runs of variables and aliases of one kind are restored exactly as one command each, an alias named -x included", async () => {
  await withTempDir(async (dir) => {
    const src = String.raw`
a1=$'x\ny'; a2='q "b" $c'; a3=; declare -a r1=([2]=$'p\nq') r2=(); declare -A h1=(["k y"]=1)
declare -A h2=([z]=$'\xff'); declare -i i1=1 i2=2; declare -n n1=a1 n2=a2; export X1=1
alias -- -x='echo dash' b1='echo 1' b2="echo '2'"; f1() { :; }; f2() { echo 2; }
`;
    const change = await recordAndRestore(dir, startState(dir), src);
    assert.deepEqual(entries(change).vars.set, [
      ["a1", String.raw`declare -- a1=$'x\ny'`],
      ["a2", String.raw`declare -- a2="q \"b\" \$c"`],
      ["a3", 'declare -- a3=""'],
      ["h1", 'declare -A h1=(["k y"]="1" )'],
      ["h2", String.raw`declare -A h2=([z]=$'\377' )`],
      ["i1", 'declare -i i1="1"'],
      ["i2", 'declare -i i2="2"'],
      ["n1", 'declare -n n1="a1"'],
      ["n2", 'declare -n n2="a2"'],
      ["r1", String.raw`declare -a r1=([2]=$'p\nq')`],
      ["r2", "declare -a r2=()"],
    ]);
    assert.deepEqual(entries(change).aliases.set, [
      ["-x", "alias -- -x='echo dash'"],
      ["b1", "alias b1='echo 1'"],
      ["b2", String.raw`alias b2='echo '\''2'\'''`],
    ]);
    const session = startState(dir);
    applyChange(session, change);
    const commands = restoreScript(session).split("\n");
    for (
      const command of [
        String.raw`declare -- OLDV="1" a1=$'x\ny' a2="q \"b\" \$c" a3=""`,
        String.raw`declare -a r1=([2]=$'p\nq') r2=()`,
        "alias -- -x='echo dash'",
        String.raw`alias b1='echo 1' b2='echo '\''2'\'''`,
      ]
    ) assert.ok(commands.includes(command), command);
  });
});

Deno.test("K-BASH-5 namerefs and arrays stay shell variables even when exported: bash never exports them", async () => {
  await withTempDir(async (dir) => {
    const src = "export T=1; declare -r RO=1; declare -n ref=T rro=RO\n" +
      "declare -ax xa=(1 2); declare -Ax xh=([k]=v); declare -rx -a rxa=(1)";
    const change = await recordAndRestore(dir, startState(dir), src);
    assert.deepEqual(entries(change).env, { set: [["T", "1"]], unset: [] });
    assert.deepEqual(entries(change).vars.set, [
      ["ref", 'declare -n ref="T"'],
      ["rro", 'declare -n rro="RO"'],
      ["xa", 'declare -ax xa=([0]="1" [1]="2")'],
      ["xh", 'declare -Ax xh=([k]="v" )'],
    ]);
  });
});

Deno.test("K-BASH-5 a variable bash reports as read-only is never persisted: an exported one (declare -rx) is not set, and one that was session state before keeps that state (not unset)", async () => {
  await withTempDir(async (dir) => {
    const src = "declare -rx RX=1; readonly KEEP=changed; declare -r OLDV=2 NEWV=3; export T=1";
    const change = await recordAndRestore(dir, startState(dir), src);
    assert.deepEqual(entries(change).env, { set: [["T", "1"]], unset: [] });
    assert.deepEqual(entries(change).vars, { set: [], unset: [] });
  });
});

withKernel(
  "K-BASH-5 a nameref to an exported variable persists as a nameref, not as an exported copy",
  async (conn) => {
    await exec(conn, "export T=1; declare -n ref=T; declare -ax xa=(1 2)");
    await exec(conn, "T=2");
    const r = await exec(conn, "declare -p ref xa; echo $ref; printenv ref xa || echo none", {
      position: "value",
    });
    assert.equal(
      ((r.value as Rec).out as Rec).v,
      'declare -n ref="T"\ndeclare -ax xa=([0]="1" [1]="2")\n2\nnone\n',
    );
    const env = await conn.request("session.env", {}) as Rec;
    assert.ok(!(env.names as string[]).includes("ref"));
  },
);

Deno.test("K-BASH-6 a dump whose variable listing is not what bash writes is no state", () => {
  const dump = (listing: string) => encoder.encode(`C\0/\0D\0${listing}\0F\0\0A\0\0Z\0`);
  assert.notEqual(parseDump(dump('declare -x A="1"\n'), new Set(), startState("/")), null);
  for (const bad of ['declare -x A="1\n', "A=1\n", "declare -x A=1\n", "declare -x A=$'\\q'\n"]) {
    assert.equal(parseDump(dump(bad), new Set(), startState("/")), null, bad);
  }
});

Deno.test("P-SBX-7 a listing a confined program forged (code after a value, a second assignment, an unescaped expansion, an odd name) is no state", () => {
  const dump = (listing: string) => encoder.encode(`C\0/\0D\0${listing}\0F\0\0A\0\0Z\0`);
  const forged = [
    'declare -- x="1"; touch /tmp/pwned; #\n',
    'declare -- x="1" PATH="/evil"\n',
    'declare -- x="$(touch /tmp/pwned)"\n',
    'declare -- x="`touch /tmp/pwned`"\n',
    "declare -- x=$'1'$(touch /tmp/pwned)\n",
    "declare -- x=1\n",
    'declare -- x="1"\ntouch /tmp/pwned\n',
    'declare -x BASH_FUNC_f%%="() { touch /tmp/pwned; }"\n',
    'declare -- a[$(touch /tmp/pwned)]="1"\n',
    'declare -; touch /tmp/pwned x="1"\n',
    'declare -a a=([0]="1") ; touch /tmp/pwned\n',
    'declare -a a=([$(touch /tmp/pwned)]="1")\n',
    'declare -A h=([k]="1" [x]=$(touch /tmp/pwned) )\n',
    'declare -A h=([k]="1"; touch /tmp/pwned )\n',
    'declare -A h=([`touch /tmp/pwned`]="1" )\n',
    'declare -a a=([0]="1" [1]="$(touch /tmp/pwned)")\n',
  ];
  for (const listing of forged) {
    assert.equal(parseDump(dump(listing), new Set(), startState("/")), null, listing);
  }
});

Deno.test("K-BASH-4/5 associative keys bash leaves bare or quotes, and values it writes in either quoting, are taken and restored", async () => {
  await withTempDir(async (dir) => {
    const keys = ["a]b", "*", "@", "~x", "#c", "a=b", "!x", "{a}", "a,b", "é", "à", "a;b", "(x)"]
      .concat(["a b", "\t", "-", "%", "^", "+", "a:b", "\\", "x?", "[y", "$(x)", "`x`", "'", '"']);
    const src = "declare -A odd; for k in " +
      keys.map((k) => `'${k.replaceAll("'", "'\\''")}'`).join(" ") +
      '; do odd[$k]="v$k"; done; declare -a ix=([3]=$\'\\001\' [9]="\\$y")';
    const change = await recordAndRestore(dir, startState(dir), src);
    assert.match(change.vars.set.get("odd") ?? "", /^declare -A odd=\(/);
    assert.equal(change.vars.set.get("ix"), "declare -a ix=([3]=$'\\001' [9]=\"\\$y\")");
  });
});

Deno.test("K-BASH-6 a run that dumps no state never reads the state an earlier run left in its reused scratch directory", async () => {
  await withTempDir(async (dir) => {
    const scratch = new ScratchPool(dir);
    try {
      const outcomes = [];
      for (const src of ["X=1", "X=2; exec true"]) {
        const exit = await runBash({
          bash,
          bashVariables,
          src,
          state: startState(dir),
          scratch,
          warm: null,
          stdout: new TextSink(),
          stderr: new TextSink(),
          sandbox: null,
        });
        outcomes.push(exit.final?.vars.get("X") ?? null);
      }
      assert.deepEqual(outcomes, ['declare -- X="1"', null]);
    } finally {
      scratch.clear();
    }
  });
});

withKernel(
  "K-BASH-4 aliases and functions named like the builtins the driver uses neither run in their place nor lose the state",
  async (conn) => {
    const define = "X=1; [() { return 1; }; set() { echo hijacked; }; exit() { echo hijacked; }\n" +
      "alias exit='echo hijacked' builtin='echo hijacked' shopt='echo hijacked'\n" +
      "alias() { echo hijacked; }";
    const out = async (src: string) =>
      (((await exec(conn, src, { position: "value" })).value as Rec).out as Rec).v;
    assert.equal(await out(define), "");
    assert.equal(
      await out('echo "$X"; type -t [ set alias; \\builtin alias exit builtin'),
      "1\nfunction\nfunction\nfunction\nalias exit='echo hijacked'\nalias builtin='echo hijacked'\n",
    );
  },
);

Deno.test("the environment delta a warm shell sources turns its start environment into the run's, names set and removed together", () => {
  const from = new Map([["KEEP", "k"], ["GONE1", "1"], ["GONE2", "2"], ["CHANGED", "old"]]);
  const to = new Map([["KEEP", "k"], ["CHANGED", "new 'q' $x\nl"], ["NEW", ""], ["NEW2", "é"]]);
  const delta = envDelta(from, to, bashVariables);
  assert.notEqual(delta, null);
  const out = new Deno.Command(bash, {
    args: ["--noprofile", "--norc", "-c", `${delta}exec env -0`],
    env: Object.fromEntries(from),
    clearEnv: true,
    stdout: "piped",
  }).outputSync();
  const env = new Map(
    new TextDecoder().decode(out.stdout).split("\0").filter((e) => e !== "").map((e) => {
      const eq = e.indexOf("=");
      return [e.slice(0, eq), e.slice(eq + 1)];
    }),
  );
  for (const name of ["PWD", "SHLVL", "_"]) env.delete(name); // bash's own
  assert.deepEqual(env, to);
  assert.equal(envDelta(from, from, bashVariables), "");
});

Deno.test("K-BASH-1/4 a session with nothing to restore starts its source with status 0 and alias expansion on, as one with state does", async () => {
  await withTempDir(async (dir) => {
    const empty = { ...startState(dir), env: new Map(), vars: new Map() };
    for (const state of [empty, startState(dir)]) {
      assert.equal(restoreScript(state) === "", state === empty);
      const src = "echo \"$?\"; shopt -q expand_aliases && echo on\nalias e1='echo one'\ne1";
      const { exit, out } = await runCold(dir, state, src);
      assert.deepEqual([out, exit.status], ["0\non\none\n", 0]);
    }
  });
});
