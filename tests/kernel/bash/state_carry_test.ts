/**
 * Session state carried from one exec to the next as successive lines of one bash would carry it
 * (K-BASH-4/5), through a real kernel: state a run sets beside things the driver has to live with
 * (a function written with extglob patterns, the run's own EXIT trap, an export too large for a
 * program's environment).
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { rpcError } from "../../_support/rejection.ts";
import { exec } from "../../_support/exec.ts";
import { launchKernel, sharedKernel, startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { REPO, sandbox } from "../../_support/sandbox.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";

/** The cases on the local human's sessions share one kernel, each on a session of its own. */
const sharedCase = sharedKernel();

/** Runs `src` in value position: its stdout text and stderr text. */
async function run(conn: RpcConnection, src: string): Promise<{ out: string; err: string }> {
  const value = (await exec(conn, src, { position: "value" })).value as Rec;
  return { out: String((value.out as Rec).v), err: String((value.err as Rec).v) };
}

sharedCase(
  "K-BASH-5 a function written with extglob patterns persists like any other, and later execs restore it without a syntax error",
  async (conn) => {
    await run(
      conn,
      "shopt -s extglob\n" +
        "pick() { case $1 in @(a|b)) echo ab;; !(c)) echo other;; *) echo c;; esac; }\n" +
        "later() { echo later; }; X=kept",
    );
    const next = await run(conn, "shopt -s extglob; pick a; pick z; pick c; later; echo $X");
    assert.equal(next.out, "ab\nother\nc\nlater\nkept\n");
    assert.equal(next.err, "");
    // the option itself never persists (K-BASH-5)
    assert.equal((await run(conn, "shopt -q extglob && echo on || echo off")).out, "off\n");
  },
);

sharedCase(
  "K-BASH-5 a run that sets its own EXIT trap and ends normally still persists its cwd, exports and variables; its trap still runs, after them",
  async (conn) => {
    const first = await run(
      conn,
      "cd /usr && export BUILD=7; v=1; f() { echo f; }; trap 'echo cleanup; cd /' EXIT; echo body",
    );
    assert.equal(first.out, "body\ncleanup\n");
    assert.equal(first.err, "");
    const next = await run(conn, 'pwd; echo "$BUILD $v"; f; trap -p EXIT | grep -c cleanup');
    assert.equal(next.out, "/usr\n7 1\nf\n0\n");
    // status of the run is what it was: the trap's own commands do not change it
    const failed = (await exec(conn, "trap 'true' EXIT; cd /etc; false", { position: "value" }))
      .value as Rec;
    assert.equal(failed.status, 1);
    assert.equal((await run(conn, "pwd")).out, "/etc\n");
    // a trap that is reset, or set to nothing, leaves the state dumped as well
    await run(conn, "trap 'echo x' EXIT; trap - EXIT; cd /tmp; export R=1");
    assert.equal((await run(conn, 'pwd; echo "$R"')).out, "/tmp\n1\n");
  },
);

Deno.test({
  name:
    "K-BASH-4/K-BASH-6 (SPEC decision pending: is a run that replaced the EXIT trap and ends by `exit N` or `set -e` one whose final state cannot be captured?) its cd and export persist",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      await run(conn, "trap 'echo bye' EXIT; cd /usr; export GONE=1; exit 0");
      assert.equal((await run(conn, 'pwd; echo "$GONE"')).out, "/usr\n1\n");
    } finally {
      await k.cleanup();
    }
  },
});

sharedCase(
  "K-BASH-5 an export too large for a program's environment (over 128 KiB, or together over the budget) persists and leaves the session usable as bash does: builtins run, programs fail with E2BIG, unset recovers",
  async (conn) => {
    // builtins only: once BIG is exported, no program starts
    await run(
      conn,
      "printf -v s '%*s' 200000 ''; export BIG=${s// /x}; printf -v s '%*s' 120000 ''\n" +
        "for ((i = 1; i <= 18; i++)); do export M$i=${s// /y}; done; v=set; unset s",
    );
    // each exec below starts a bash of its own with that environment (a shell prepared before
    // the export may serve the first)
    for (let i = 0; i < 3; i++) {
      const next = await run(conn, 'echo "${#BIG} ${#M18} $v"; /bin/true || echo refused');
      assert.equal(next.out, "200000 120000 set\nrefused\n");
      assert.match(next.err, /Argument list too long/);
    }
    const names = (await conn.request("session.env", {}) as Rec).names as string[];
    assert.equal(names.includes("BIG") && names.includes("M18"), true);
    await run(conn, "unset BIG; for ((i = 1; i <= 18; i++)); do unset M$i; done");
    for (let i = 0; i < 3; i++) {
      const after = await run(conn, 'echo "${#BIG} ${#M1}"; /bin/echo started');
      assert.equal(after.out, "0 0\nstarted\n");
    }
  },
);

sharedCase(
  "K-BASH-1/5 a session whose cwd a later exec removed is not stuck: the next exec, or pty.open, is refused naming the directory (nothing runs), the session moves to its nearest existing parent, and execs run again there (each failed with 'cannot start bash … not found', cd / included)",
  async (conn, k) => {
    const dir = `${k.box.dir}/gone`;
    await run(conn, `mkdir -p '${dir}/a/b' && cd '${dir}/a/b'`);
    await run(conn, `rm -r '${dir}/a'`);
    const refused = await rpcError(exec(conn, "touch made-here; cd /"));
    assert.equal(refused.code, -32603);
    assert.deepEqual(refused.data, { reason: "cwd_removed", cwd: `${dir}/a/b`, moved_to: dir });
    assert.match(refused.message, /no longer exists; the session is now in .*\/gone; nothing ran/);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
    assert.equal((await run(conn, "pwd; touch made-here")).out, `${dir}\n`);
    assert.equal(Deno.statSync(`${dir}/made-here`).isFile, true);
    await run(conn, `mkdir '${dir}/c' && cd '${dir}/c' && rmdir '${dir}/c'`);
    // that run's own final cwd was gone when merged: the session stayed where it was (K-BASH-5)
    assert.equal((await run(conn, "pwd")).out, `${dir}\n`);
    await run(conn, `mkdir '${dir}/d' && cd '${dir}/d'`);
    await run(conn, `rmdir '${dir}/d'`);
    const pty = await rpcError(conn.request("pty.open", { cmd: "cat" }));
    assert.deepEqual(pty.data, { reason: "cwd_removed", cwd: `${dir}/d`, moved_to: dir });
    assert.equal((await run(conn, "cd / && pwd")).out, "/\n");
  },
);

hostTest(
  "K-BASH-1/5, P-SBX-3 a sandboxed agent whose cwd was removed moves to the nearest parent its sandbox shows, not past its project (was -32010 'outside this principal's sandbox' on every exec)",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(`${proj}/x`, { recursive: true });
    const { secret } = await createToken(box, "agent:c", "c");
    const k = await startKernel(
      ["--policy", await writePolicy(box, { "agent:c": PROJECT_AGENT })],
      box,
    );
    try {
      const agent = await k.connect();
      await agent.request("session.attach", { session: "work", token: secret, cwd: `${proj}/x` });
      await run(agent, "mkdir -p y/z && cd y/z");
      // the project itself goes (a human's rm -rf and re-clone, say): its parent is not shown
      await Deno.remove(`${proj}/x`, { recursive: true });
      const refused = await rpcError(exec(agent, "pwd"));
      assert.deepEqual(refused.data, {
        reason: "cwd_removed",
        cwd: `${proj}/x/y/z`,
        moved_to: proj,
      });
      assert.equal((await run(agent, "pwd")).out, `${proj}\n`);
    } finally {
      await k.cleanup();
    }
  },
);

Deno.test({
  name:
    "K-BASH-5 (SPEC decision pending: is a user's IFS=: or PS4 one of the 'bash-managed dynamic variables' never persisted? exec_test asserts IFS=: is lost) a variable bash also defines persists once set to another value",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      await run(conn, "IFS=:; PS4='>> '; OPTERR=0");
      const next = await run(conn, 'x=a:b; for w in $x; do echo "$w"; done; echo "$PS4$OPTERR"');
      assert.equal(next.out, "a\nb\n>> 0\n");
    } finally {
      await k.cleanup();
    }
  },
});

sharedCase(
  "K-BASH-5 a working directory renamed while bash stands in it persists under its new name: the run's cwd still exists, and the next exec runs there, not back where the session was",
  async (conn) => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-renamed-cwd-" });
    try {
      await run(conn, `mkdir '${dir}/old' && cd '${dir}/old' && mv '${dir}/old' '${dir}/new'`);
      assert.equal((await run(conn, "pwd; touch here")).out, `${dir}/new\n`);
      assert.equal((await Deno.stat(`${dir}/new/here`)).isFile, true);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

sharedCase(
  "K-BASH-4 a run that leaves xtrace or verbose on traces only its own commands: the driver's state dump never shows in its stderr (a run ending by exit or errexit shows the trap's one call, FUNCNEST lifted for it)",
  async (conn) => {
    const call = ["+ FUNCNEST=", "+ __shoal_exit"];
    const cases: [string, string[]][] = [
      ["set -x; X=1", []],
      ["set -v; X=2", []],
      ["set -x; X=3; exit 0", call],
      ["set -ex; X=4; false", call],
    ];
    for (const [src, expected] of cases) {
      const lines = (await run(conn, src)).err.trimEnd().split("\n");
      const driver = lines.filter((l) => /__shoal|builtin|FUNCNEST/.test(l));
      assert.deepEqual(driver, expected, src);
      assert.equal(lines.length <= 4, true, `${src}: ${lines.length} lines`);
    }
    assert.equal((await run(conn, 'echo "x$X"')).out, "x4\n");
  },
);

sharedCase(
  "K-BASH-4 a run's DEBUG trap fires for its own commands only, never for the driver's state dump",
  async (conn) => {
    const cases: [string, string][] = [
      ["trap 'echo dbg >&2' DEBUG; X=1", "dbg\n"],
      ["set -T; trap 'echo dbg >&2' DEBUG; X=2", "dbg\n"],
    ];
    for (const [src, err] of cases) assert.equal((await run(conn, src)).err, err, src);
    assert.equal((await run(conn, 'echo "x$X"')).out, "x2\n");
    // one printing on stdout: bash -c prints dbg once; the driver's own first commands printed
    // it three more times (nine once it reached its builtins again), into the run's stdout
    assert.deepEqual(await run(conn, "trap 'echo dbg' DEBUG; X=3"), { out: "dbg\n", err: "" });
    // ended by exit, the EXIT trap's one call shows, as under xtrace
    const exited = await run(conn, "trap 'echo dbg' DEBUG; exit 0");
    assert.deepEqual(exited, { out: "dbg\ndbg\n", err: "" });
  },
);

sharedCase(
  "K-BASH-5 a function whose heredoc holds a line like another function's header (`bar () `) persists whole, and a real function of that name persists beside it",
  async (conn) => {
    await run(conn, "f() { cat <<'E'\nbar () \nE\n}");
    await run(conn, "bar() { echo real-bar; }");
    const next = await run(conn, "f; bar; unset -f bar");
    assert.equal(next.out, "bar () \nreal-bar\n");
    assert.equal(next.err, "");
    assert.equal((await run(conn, "f; type -t bar || echo none")).out, "bar () \nnone\n");
  },
);

sharedCase(
  "K-BASH-5 an alias whose value holds a line starting `alias ` persists whole, and defines no other alias",
  async (conn) => {
    const define = 'alias s=$\'echo "1\\nalias b=y"\'; alias q="echo \\"it\'s\\""';
    const listed = (await run(conn, `${define}; alias -p`)).out;
    assert.equal((await run(conn, "alias -p")).out, listed);
    assert.equal((await run(conn, "q; alias b 2>/dev/null || echo no-b")).out, "it's\nno-b\n");
  },
);

Deno.test({
  name:
    "K-BASH-5 (SPEC decision pending: does an exported but unset variable persist? state_dump_test leaves `declare -x uxe` out) `export FOO` then `FOO=1` exports FOO as in one bash",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      await run(conn, "export FOO; declare -i N");
      assert.equal((await run(conn, "FOO=1; N=2+3; env | grep ^FOO=; echo $N")).out, "FOO=1\n5\n");
    } finally {
      await k.cleanup();
    }
  },
});

/** Runs `src` in value position: its status, stdout text and stderr text. */
async function runStatus(conn: RpcConnection, src: string) {
  const value = (await exec(conn, src, { position: "value" })).value as Rec;
  return {
    status: value.status,
    out: String((value.out as Rec).v),
    err: String((value.err as Rec).v),
  };
}

sharedCase(
  "K-BASH-4/9 a run that defines a function named builtin (a logging wrapper) ends with its own status and persists its state, and later execs are not run through the wrapper",
  async (conn) => {
    const first = await runStatus(
      conn,
      'builtin() { echo "B:$1" >&2; command builtin "$@"; }; cd /tmp; K=1',
    );
    // bash -c gives status 0 and prints nothing: the source calls no builtin
    assert.deepEqual(first, { status: 0, out: "", err: "" });
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await runStatus(conn, 'pwd; echo "K=$K"'), {
        status: 0,
        out: "/tmp\nK=1\n",
        err: "",
      });
    }
    // one that stands for nothing: the run's status is its own, its state persists
    assert.equal((await runStatus(conn, "builtin() { return 7; }; cd /usr; K=2")).status, 0);
    assert.equal((await runStatus(conn, 'pwd; echo "K=$K"')).out, "/usr\nK=2\n");
  },
);

sharedCase(
  "K-BASH-4/9 a run that disables builtins the driver's dump uses (enable -n) ends with its own status, prints nothing more and persists its state",
  async (conn) => {
    const cases: [string, number, string][] = [
      ["enable -n printf declare; cd /tmp; K=1", 0, "/tmp\nK=1\n"],
      ["enable -n builtin; cd /usr; K=2", 0, "/usr\nK=2\n"],
      ["enable -n [ set local; cd /etc; K=3", 0, "/etc\nK=3\n"],
      // bash -c: exit is not found (127) and the run goes on
      ["enable -n exit unset alias trap; cd /var; K=4; exit 3", 127, "/var\nK=4\n"],
    ];
    for (const [src, status, state] of cases) {
      const r = await runStatus(conn, src);
      assert.equal(r.status, status, src);
      assert.equal(r.err.split("\n").filter((l) => /builtin|environment/.test(l)).length, 0, r.err);
      assert.equal((await runStatus(conn, 'pwd; echo "K=$K"')).out, state, src);
    }
  },
);

sharedCase(
  "K-BASH-4 a session's own FUNCNEST never shows in its execs: at 1 each printed '__shoal_exit: maximum function nesting level exceeded', and a run ending by exit or errexit inside a function as deep as FUNCNEST allows lost its state",
  async (conn) => {
    // bash -c prints nothing for any of these
    assert.deepEqual(await runStatus(conn, "FUNCNEST=1; cd /tmp; X=1"), {
      status: 0,
      out: "",
      err: "",
    });
    assert.deepEqual(await runStatus(conn, 'echo "$X $FUNCNEST"; pwd'), {
      status: 0,
      out: "1 1\n/tmp\n",
      err: "",
    });
    assert.deepEqual(await runStatus(conn, "f() { cd /usr; Y=1; exit 3; }; f"), {
      status: 3,
      out: "",
      err: "",
    });
    assert.equal((await runStatus(conn, 'echo "$Y"; pwd')).out, "1\n/usr\n");
    assert.equal((await runStatus(conn, "f() { cd /etc; Y=2; false; }; set -e; f")).status, 1);
    assert.equal((await runStatus(conn, 'echo "$Y $FUNCNEST"; pwd')).out, "2 1\n/etc\n");
    // the limit still holds for the run's own calls, as in bash
    const own = await runStatus(conn, "g() { :; }; f() { g; }; f; echo after");
    assert.match(own.err, /g: maximum function nesting level exceeded \(1\)/);
  },
);

sharedCase(
  "K-BASH-4 the driver's own variables are out of a run's reach: a run that unsets every variable compgen lists, or sets __shoal_pid or __shoal_st, ends with its own status and keeps its state, and no dump is written where __shoal_dir points",
  async (conn) => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-driver-vars-" });
    try {
      await runStatus(conn, "for v in $(compgen -v); do unset $v 2>/dev/null; done; cd /usr; K=1");
      assert.equal((await runStatus(conn, 'pwd; echo "$K"')).out, "/usr\n1\n");
      await runStatus(conn, `__shoal_dir='${dir}'; cd /etc; K=2`);
      assert.equal((await runStatus(conn, 'pwd; echo "$K"')).out, "/etc\n2\n");
      assert.deepEqual([...Deno.readDirSync(dir)], []);
      await runStatus(conn, "__shoal_pid=1; cd /usr; K=3");
      assert.equal((await runStatus(conn, 'pwd; echo "$K"')).out, "/usr\n3\n");
      for (const end of ["true", "exit 0"]) {
        const r = await runStatus(conn, `__shoal_st=5; cd /; K=4; ${end}`);
        assert.equal(r.status, 0, end);
        assert.equal((await runStatus(conn, 'pwd; echo "$K"')).out, "/\n4\n");
        await runStatus(conn, "cd /usr");
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

sharedCase(
  "K-BASH-1/K-BASH-4 the source runs as bash -c runs its text: BASH_SOURCE is empty, so the script-directory idiom stays in the session's cwd (it moved the session into the kernel's scratch directory), LINENO counts from 1, no error names a scratch path, and a RETURN trap set by the run does not fire when it ends",
  async (conn) => {
    // bash -c: /usr, /usr, 1 (then 3 in f), []; the RETURN trap prints nothing
    const src = 'cd /usr; cd "$(dirname "${BASH_SOURCE[0]}")"\n' +
      'here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"; pwd; echo "$here $LINENO"\n' +
      'f() { echo "$LINENO"; }; f; echo "[${BASH_SOURCE[*]}]"\n' +
      "trap 'echo returned' RETURN; nosuchcommand_x";
    const r = await runStatus(conn, src);
    assert.equal(r.out, "/usr\n/usr 2\n3\n[]\n");
    assert.equal(r.status, 127);
    assert.match(r.err, /nosuchcommand_x: command not found/);
    assert.equal(r.err.includes("/src"), false, r.err);
    assert.equal((await runStatus(conn, "pwd")).out, "/usr\n");
  },
);

sharedCase(
  "K-BASH-1 a run sees its own source in BASH_EXECUTION_STRING, as bash -c shows its text, and an error bash finds in it quotes that text alone",
  async (conn) => {
    const src = 'echo "$BASH_EXECUTION_STRING"';
    assert.deepEqual(await runStatus(conn, src), { status: 0, out: `${src}\n`, err: "" });
    // mvdan-sh takes @(…) always; bash without extglob on when it reads the line does not
    const bad = await runStatus(conn, "shopt -s extglob; echo @(a|b)");
    assert.equal(bad.status, 2);
    assert.match(bad.err, /`shopt -s extglob; echo @\(a\|b\)'/);
    assert.equal(/__shoal|builtin/.test(bad.err), false, bad.err);
    const listed = (await runStatus(conn, "declare -p BASH_EXECUTION_STRING")).out;
    assert.equal(listed, 'declare -- BASH_EXECUTION_STRING="declare -p BASH_EXECUTION_STRING"\n');
  },
);

sharedCase(
  "K-BASH-4 a run that adds to the EXIT trap it finds (trap -p EXIT, the usual chaining idiom) still runs its own part, after the dump, and ends with its own status",
  async (conn) => {
    // bash -c finds no trap and runs cleanup; the driver's trap was found and exited first
    const chain = "old=$(trap -p EXIT); old=${old#*\\'}; old=${old%\\'*}\n" +
      'trap "${old:+$old; }echo cleanup" EXIT\n';
    for (const end of ["cd /usr; K=1", "cd /usr; K=1; exit 4", "set -e; cd /usr; K=1; false"]) {
      const r = await runStatus(conn, chain + end);
      assert.deepEqual(r, {
        status: end === "cd /usr; K=1" ? 0 : end.endsWith("false") ? 1 : 4,
        out: "cleanup\n",
        err: "",
      }, end);
      assert.equal((await runStatus(conn, 'pwd; echo "$K"; cd /; K=')).out, "/usr\n1\n", end);
    }
  },
);

Deno.test(
  "K-BASH-5 an exported name that is no shell identifier (spring.profiles.active, A-B) stays in the environment of every later exec: bash passes it on and cannot change it, and the first exec's dump, which lists no such name, removed it from the session",
  async () => {
    const box = await sandbox();
    const socket = box.socket();
    // bin/shoal-kernel is a /bin/sh script, and dash drops such names before the kernel starts
    const deno = [Deno.execPath(), "run", "-A", `--config=${REPO}/deno.json`];
    const k = await launchKernel(box, ["--socket", socket], socket, {
      "spring.profiles.active": "dev",
      "A-B": "1",
      PLAIN: "p",
    }, [...deno, `${REPO}/src/kernel/main.ts`]);
    try {
      const conn = await k.attach();
      const show = "env | grep -E '^(spring|A-B|PLAIN)' | sort";
      const all = "A-B=1\nPLAIN=p\nspring.profiles.active=dev\n";
      assert.equal((await run(conn, show)).out, all);
      await run(conn, "cd /; X=1; export Y=2");
      assert.equal((await run(conn, show)).out, all);
      await run(conn, "unset PLAIN");
      assert.equal((await run(conn, show)).out, "A-B=1\nspring.profiles.active=dev\n");
      const names = (await conn.request("session.env", {}) as Rec).names as string[];
      assert.deepEqual(names.filter((n) => /^(A-B|spring)/.test(n)), [
        "A-B",
        "spring.profiles.active",
      ]);
    } finally {
      await k.cleanup();
    }
  },
);

sharedCase(
  "K-BASH-5 an exported variable keeps its other attributes (integer, lower and upper case, trace) for later execs, and `export NAME` without a value keeps NAME exported for a later assignment, as on the next line of one bash",
  async (conn) => {
    await run(conn, "declare -ix N=5; declare -lx LO=ABC; declare -ux UP=abc; export LATER");
    const next = await run(
      conn,
      "N+=1; LO=DEF; UP=ghi; LATER=set; env | grep -E '^(N|LO|UP|LATER)=' | sort",
    );
    // plain bash: N=6 (integer), LO=def, UP=GHI, LATER exported once set
    assert.equal(next.out, "LATER=set\nLO=def\nN=6\nUP=GHI\n");
    assert.equal(next.err, "");
    const names = (await conn.request("session.env", {}) as Rec).names as string[];
    assert.deepEqual(names.filter((n) => /^(N|LO|UP|LATER)$/.test(n)), ["LATER", "LO", "N", "UP"]);
    // and they go as bash lets them go
    await run(conn, "export -n N; unset LO; declare +u UP; unset LATER; export EMPTY");
    const last = await run(
      conn,
      "N+=1; UP=jkl; EMPTY=e; env | grep -E '^(N|LO|UP|LATER|EMPTY)=' | sort; declare -p N",
    );
    assert.equal(last.out, 'EMPTY=e\nUP=jkl\ndeclare -i N="7"\n');
  },
);

sharedCase(
  "K-BASH-9/K-BASH-5 a run that lowers its file size limit (ulimit -f) ends with its own status, not killed by SIGXFSZ while its state was written, and its state persists when the limit can be raised back",
  async (conn) => {
    const soft = await runStatus(conn, "ulimit -S -f 0; export A=1; echo done");
    // bash -c: status 0, "done"; the dump's write past the limit killed bash (SIGXFSZ)
    assert.deepEqual(soft, { status: 0, out: "done\n", err: "" });
    assert.equal((await run(conn, 'echo "A=$A"; ulimit -S -f')).out, "A=1\nunlimited\n");
    for (const src of ["ulimit -f 0; export B=1; echo done", "ulimit -f 0; exit 3"]) {
      const value = (await exec(conn, src, { position: "value" })).value as Rec;
      assert.equal(value.signal, null, src);
      assert.equal(value.status, src.endsWith("3") ? 3 : 0, src);
      assert.deepEqual(value.err, { $: "str", v: "" }, src);
    }
  },
);

sharedCase(
  "K-BASH-5 a function whose heredoc holds lines like the header of a function in `declare -f` (`name () ` then `{ `) persists whole, and later execs restore it without errors",
  async (conn) => {
    // a generator of a script in the very form `declare -f` prints
    const def = "gen() { cat <<'END'\nmain () \n{ \n    echo generated\n}\nEND\n}\n" +
      "main() { echo real main; }";
    await run(conn, def);
    const next = await run(conn, "gen; main");
    // the heredoc was cut into a function `main` of its own, which the real one replaced: gen
    // lost its end, and each later exec's restore printed 'END: command not found' in stderr
    assert.equal(next.out, "main () \n{ \n    echo generated\n}\nreal main\n");
    assert.equal(next.err, "");
  },
);

sharedCase(
  "K-BASH-5 a cwd entered through a symlink stays that path for later execs, as bash's logical PWD: pwd shows it and cd .. leaves it for the link's parent, not the target's",
  async (conn, k) => {
    const link = `${k.box.dir}/link`;
    await Deno.mkdir(`${k.box.dir}/real/deep`, { recursive: true });
    await Deno.symlink(`${k.box.dir}/real/deep`, link);
    assert.equal((await run(conn, `cd ${link}; pwd`)).out, `${link}\n`);
    for (let i = 0; i < 3; i++) { // cold and warm shells alike
      const next = await run(conn, 'pwd; echo "$PWD"; pwd -P');
      // each later exec started in the target's physical path
      assert.equal(next.out, `${link}\n${link}\n${k.box.dir}/real/deep\n`);
    }
    assert.equal((await run(conn, "cd ..; pwd")).out, `${k.box.dir}\n`);
  },
);

hostTest(
  "K-BASH-5/P-SBX-2 in a sandboxed run too, a cwd entered through a symlink stays that path for later execs (bash's logical PWD), not its target's",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(`${proj}/real/deep`, { recursive: true });
    await Deno.symlink(`${proj}/real/deep`, `${proj}/link`);
    const { secret } = await createToken(box, "agent:c", "c");
    const k = await startKernel(
      ["--policy", await writePolicy(box, { "agent:c": PROJECT_AGENT })],
      box,
    );
    try {
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.connect();
      const attached = await agent.request("session.attach", { session: "work", token: secret });
      assert.equal(((attached as Rec).caps as Rec).tier, "B");
      assert.equal((await run(agent, "cd link; pwd")).out, `${proj}/link\n`);
      for (let i = 0; i < 3; i++) {
        assert.equal((await run(agent, "pwd; pwd -P")).out, `${proj}/link\n${proj}/real/deep\n`);
      }
      assert.equal((await run(agent, "cd ..; pwd")).out, `${proj}\n`);
    } finally {
      await k.cleanup();
    }
  },
);
