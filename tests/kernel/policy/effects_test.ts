import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  deriveEffects,
  type Effect,
  type EffectAnalysis,
  type EffectState,
  fillBinHashes,
  normalizeEffectName,
  reversibilityOf,
} from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { RpcError } from "../../../src/protocol/errors.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

/** A session state; its exported variables all changed since the session's start unless `changedEnv` says. */
function state(cwd: string, extra: Partial<EffectState> = {}): EffectState {
  const changedEnv = new Set(Object.keys(extra.env ?? {}));
  return { cwd, env: {}, changedEnv, home: "/home/me", sessionCommands: new Set(), ...extra };
}

function derive(src: string, cwd = "/w", extra: Partial<EffectState> = {}): EffectAnalysis {
  return deriveEffects(parseBash(src), src, state(cwd, extra));
}

const spawn = (argv0: string): Effect => ({ kind: "proc_spawn", argv0, bin_hash: null });

function kinds(src: string, extra: Partial<EffectState> = {}): string[] {
  return derive(src, "/w", extra).effects.map((e) => e.kind);
}

Deno.test("K-EFF-3: rm -rf ./x in /w deletes /w/x, irreversible", () => {
  assert.deepEqual(derive("rm -rf ./x"), {
    effects: [{ kind: "fs_delete", paths: ["/w/x"] }, spawn("rm")],
    reversibility: "irreversible",
    written: [],
  });
});

Deno.test("K-EFF-4: cp report.csv archive/ gives exactly the canonical example", () => {
  assert.deepEqual(derive("cp report.csv archive/", "/home/me/proj").effects, [
    { kind: "fs_read", paths: ["/home/me/proj/report.csv"] },
    { kind: "fs_write", paths: ["/home/me/proj/archive"] },
    { kind: "proc_spawn", argv0: "cp", bin_hash: null },
  ]);
});

Deno.test("K-EFF-3: unquoted globs stay literal patterns", () => {
  assert.deepEqual(derive("rm *.log", "/home/me/proj").effects, [
    { kind: "fs_delete", paths: ["/home/me/proj/*.log"] },
    spawn("rm"),
  ]);
});

Deno.test("K-EFF-3: redirections", () => {
  assert.deepEqual(derive("echo hi > out.txt"), {
    effects: [{ kind: "fs_write", paths: ["/w/out.txt"] }],
    reversibility: "irreversible",
    written: [],
  });
  assert.deepEqual(derive("cat < in").effects, [
    { kind: "fs_read", paths: ["/w/in"] },
    spawn("cat"),
  ]);
  assert.deepEqual(derive("echo a >> a 2> b &> c &>> d >| e 3> f").effects, [
    { kind: "fs_write", paths: ["/w/a", "/w/b", "/w/c", "/w/d", "/w/e", "/w/f"] },
  ]);
  assert.deepEqual(derive(": <> rw").effects, [
    { kind: "fs_read", paths: ["/w/rw"] },
    { kind: "fs_write", paths: ["/w/rw"] },
  ]);
  assert.deepEqual(
    derive("echo x >/dev/null 2>/dev/stderr </dev/stdin >/dev/fd/3 >/dev/tty 2>&1 3<&- <<<s")
      .effects,
    [],
  );
  assert.deepEqual(derive("cat <<EOF\nhello\nEOF\n").effects, [spawn("cat")]);
});

Deno.test("K-EFF-3: an output operand /dev/null touches no file, as a redirection's does not", () => {
  const writes = (src: string) =>
    derive(src, "/w", { env: { HOME: "/home/me" } }).effects.filter((e) =>
      e.kind === "fs_write" || e.kind === "opaque"
    );
  for (
    const src of [
      "cp f /dev/null",
      "cp -t /dev/null f",
      "tee /dev/null < f",
      "tee -a /dev/null",
      "dd if=f of=/dev/null",
      "curl -sS -o /dev/null -D /dev/null https://example.com/x",
      "wget -q -O /dev/null -o /dev/null https://example.com/x",
      "sort -o /dev/null f",
      "uniq f /dev/null",
      "xxd f /dev/null",
      "sed -n 'w /dev/null' f",
      "tree -o /dev/null",
      "cp f /dev/../dev/null",
    ]
  ) assert.deepEqual(writes(src), [], src);
  // What else writes there still does: it changes the device's mode, owner or times, replaces it,
  // or is not /dev/null.
  for (
    const src of [
      "cp -p f /dev/null",
      "cp --preserve=mode f /dev/null",
      "cp --attr f /dev/null",
      "cp --remove-destination f /dev/null",
      "cp -Z f /dev/null",
      "cp -r d /dev/null",
      "install f /dev/null",
      "mv f /dev/null",
      "chmod 600 /dev/null",
      "touch /dev/null",
      "truncate -s 0 /dev/null",
      "tee /dev/zero",
      "sort -T /dev/null f",
    ]
  ) {
    assert.ok(
      writes(src).some((e) => e.kind === "fs_write" && e.paths.some((p) => p.startsWith("/dev/"))),
      src,
    );
  }
});

Deno.test("K-EFF-3: reading /dev/null, /dev/zero, /dev/random or /dev/urandom is no effect", () => {
  const reads = (src: string) =>
    derive(src).effects.filter((e) => e.kind === "fs_read" || e.kind === "opaque");
  for (
    const src of [
      "cat /dev/null",
      "head -c 16 /dev/urandom",
      "dd if=/dev/zero bs=1k count=1",
      "tr -dc a-z < /dev/urandom",
      "od -An -N4 /dev/random",
      "diff /dev/null /dev/null",
    ]
  ) assert.deepEqual(reads(src), [], src);
  assert.deepEqual(derive("cat /dev/null > f").effects, [
    { kind: "fs_write", paths: ["/w/f"] },
    spawn("cat"),
  ]);
  // Other devices and what a read of a device names are still reads.
  for (const src of ["cat /dev/sda", "head /dev/../etc/passwd", "cat /dev/tty"]) {
    assert.ok(reads(src).some((e) => e.kind === "fs_read"), src);
  }
});

Deno.test("K-EFF-3a: curl -o f https://example.com:8443/x", () => {
  assert.deepEqual(derive("curl -o f https://example.com:8443/x").effects, [
    { kind: "fs_write", paths: ["/w/f"] },
    spawn("curl"),
    { kind: "net_connect", host: "example.com", port: 8443 },
  ]);
  assert.deepEqual(derive("curl -sL http://a.example/ ftp://b.example/f").effects, [
    spawn("curl"),
    { kind: "net_connect", host: "a.example", port: 80 },
    { kind: "net_connect", host: "b.example", port: 21 },
  ]);
  assert.deepEqual(derive("curl -O https://h.example/f").effects, [
    { kind: "fs_write", paths: ["/w"] },
    spawn("curl"),
    { kind: "net_connect", host: "h.example", port: 443 },
  ]);
  assert.deepEqual(kinds("curl file:///etc/passwd"), ["proc_spawn", "opaque"]);
  assert.deepEqual(kinds("curl -K cfg https://h.example"), ["proc_spawn", "opaque"]);
  // wget reads ~/.netrc for a host that asks for credentials, when there is one (/home/me has
  // none: everyday_tables_2_test has one that is read)
  assert.deepEqual(derive("wget https://h.example/x").effects, [
    { kind: "fs_write", paths: ["/w"] },
    spawn("wget"),
    { kind: "net_connect", host: "h.example", port: 443 },
  ]);
});

Deno.test("K-EFF-3a: session and environment builtins", () => {
  assert.deepEqual(derive("cd /tmp"), {
    effects: [{ kind: "session_write" }],
    reversibility: "reversible",
    written: [],
  });
  assert.deepEqual(derive("export A=1").effects, [{ kind: "env_write", names: ["A"] }]);
  assert.deepEqual(derive("export -n B; unset C").effects, [
    { kind: "env_write", names: ["B", "C"] },
  ]);
  assert.deepEqual(derive("declare -x D=1").effects, [{ kind: "env_write", names: ["D"] }]);
  assert.deepEqual(derive("alias ll='ls -l'; unalias x; f() { :; }").effects, [
    { kind: "session_write" },
  ]);
  assert.deepEqual(derive("X=1; A=2 echo hi").effects, []);
});

Deno.test("K-EFF-3: $NAME of the exported env is substituted and read", () => {
  const env = { HOME: "/home/me", DIR: "/data" };
  assert.deepEqual(derive("echo $HOME", "/w", { env }).effects, [
    { kind: "env_read", names: ["HOME"] },
  ]);
  assert.deepEqual(derive('rm "${DIR}/x"', "/w", { env }).effects, [
    { kind: "fs_delete", paths: ["/data/x"] },
    spawn("rm"),
    { kind: "env_read", names: ["DIR"] },
  ]);
  // Assigned earlier in the same source: dynamic, so a path there is opaque; assigning an
  // exported variable changes the session environment.
  assert.deepEqual(derive("DIR=/x; rm $DIR/y", "/w", { env }).effects, [
    spawn("rm"),
    { kind: "env_write", names: ["DIR"] },
    { kind: "opaque", reason: "dynamic argument" },
  ]);
  // Not exported: dynamic.
  assert.deepEqual(kinds("rm $NOPE/y", { env }), ["proc_spawn", "opaque"]);
});

Deno.test("K-EFF-3: opaque cases from the table", () => {
  for (
    const src of [
      'eval "$X"',
      "$(which rm) x",
      "bash -c 'x'",
      "find . -delete",
      "find . -exec rm {} +",
      "source ./env.sh",
      ". ./env.sh",
      "exec ls",
      "kill 1",
      "builtin echo",
      "sudo ls",
      "xargs rm",
      "python3 x.py",
      "awk '{print}' f",
      "env FOO=1 ls",
      "git push",
      "./script.sh",
    ]
  ) {
    const { effects, reversibility } = derive(src);
    assert.equal(effects.at(-1)?.kind, "opaque", src);
    assert.equal(reversibility, "unknown", src);
  }
  assert.deepEqual(derive('eval "$X"').effects, [{ kind: "opaque", reason: "eval" }]);
});

Deno.test("K-EFF-3: true is no effect and reversible", () => {
  assert.deepEqual(derive("true"), { effects: [], reversibility: "reversible", written: [] });
  assert.deepEqual(derive(""), { effects: [], reversibility: "reversible", written: [] });
});

Deno.test("K-EFF-3a: readers, listers and writers", () => {
  assert.deepEqual(derive("head -n 5 a.txt | sort -o out.txt").effects, [
    { kind: "fs_read", paths: ["/w/a.txt"] },
    { kind: "fs_write", paths: ["/w/out.txt"] },
    spawn("head"),
    spawn("sort"),
  ]);
  assert.deepEqual(derive("grep -e pat a b").effects[0], {
    kind: "fs_read",
    paths: ["/w/a", "/w/b"],
  });
  assert.deepEqual(derive("grep pat a").effects[0], { kind: "fs_read", paths: ["/w/a"] });
  assert.deepEqual(derive("grep -r pat").effects[0], { kind: "fs_read", paths: ["/w"] });
  assert.deepEqual(derive("jq '.a' x.json").effects[0], { kind: "fs_read", paths: ["/w/x.json"] });
  assert.deepEqual(derive("sed -i 's/a/b/' f").effects[0], { kind: "fs_write", paths: ["/w/f"] });
  assert.deepEqual(derive("sed 's/a/b/' f").effects[0], { kind: "fs_read", paths: ["/w/f"] });
  assert.deepEqual(kinds("sed 's/a/b/e' f"), ["proc_spawn", "opaque"]);
  assert.deepEqual(derive("ls").effects[0], { kind: "fs_read", paths: ["/w"] });
  assert.deepEqual(derive("ls -la /etc ..").effects[0], { kind: "fs_read", paths: ["/", "/etc"] });
  assert.deepEqual(derive("find src -name '*.ts'").effects[0], {
    kind: "fs_read",
    paths: ["/w/src"],
  });
  assert.deepEqual(derive("mv a b dir").effects.slice(0, 2), [
    { kind: "fs_write", paths: ["/w/dir"] },
    { kind: "fs_delete", paths: ["/w/a", "/w/b"] },
  ]);
  // /w/x is not there: mkdir -p makes it too
  assert.deepEqual(derive("mkdir -p x/y; touch z; tee t").effects[0], {
    kind: "fs_write",
    paths: ["/w/t", "/w/x", "/w/x/y", "/w/z"],
  });
  assert.deepEqual(derive("ln -s target link").effects[0], {
    kind: "fs_write",
    paths: ["/w/link"],
  });
  assert.deepEqual(derive("chmod 755 a b").effects[0], {
    kind: "fs_write",
    paths: ["/w/a", "/w/b"],
  });
  assert.deepEqual(derive("chown me:me f").effects[0], { kind: "fs_write", paths: ["/w/f"] });
  assert.deepEqual(derive("dd if=disk.raw of=img bs=1M").effects.slice(0, 2), [
    { kind: "fs_read", paths: ["/w/disk.raw"] },
    { kind: "fs_write", paths: ["/w/img"] },
  ]);
  assert.deepEqual(derive("rm -- -rf").effects[0], { kind: "fs_delete", paths: ["/w/-rf"] });
});

Deno.test("K-EFF-3a: git, date, env, printenv and plain utilities", () => {
  assert.deepEqual(derive("git status").effects, [
    { kind: "fs_read", paths: ["/w"] },
    spawn("git"),
  ]);
  assert.deepEqual(derive("git commit -m msg").effects, [
    { kind: "fs_write", paths: ["/w"] },
    spawn("git"),
  ]);
  assert.deepEqual(derive("git -C sub log").effects[0], { kind: "fs_read", paths: ["/w/sub"] });
  assert.deepEqual(kinds("git diff --output=/etc/x"), ["proc_spawn", "opaque"]);
  assert.deepEqual(derive("date").effects, [spawn("date"), { kind: "time" }]);
  assert.deepEqual(derive("env").effects, [spawn("env"), { kind: "env_read", names: ["*"] }]);
  assert.deepEqual(derive("printenv PATH HOME").effects, [
    spawn("printenv"),
    { kind: "env_read", names: ["HOME", "PATH"] },
  ]);
  assert.deepEqual(derive("sleep 1; basename a/b; uname -a").effects, [
    spawn("basename"),
    spawn("sleep"),
    spawn("uname"),
  ]);
  assert.deepEqual(derive("command ls d").effects, [
    { kind: "fs_read", paths: ["/w/d"] },
    spawn("ls"),
  ]);
  assert.deepEqual(derive("/bin/rm x").effects, [
    { kind: "fs_delete", paths: ["/w/x"] },
    spawn("/bin/rm"),
  ]);
});

Deno.test("K-EFF-3: paths resolve against cwd, ~ uses HOME, . and .. are lexical", () => {
  assert.deepEqual(derive("cat ~/notes ~ ../up ./a/./b/../c //x").effects[0], {
    kind: "fs_read",
    paths: ["/home/me", "/home/me/notes", "/w/a/c", "/x", "/up"].sort(),
  });
  assert.deepEqual(kinds("cat ~/x", { home: undefined }), ["proc_spawn", "opaque"]);
  assert.deepEqual(kinds("cat ~other/x"), ["proc_spawn", "opaque"]);
});

Deno.test("K-EFF-3: cd changes where later relative paths point", () => {
  assert.deepEqual(derive("cd /tmp && rm x").effects[0], { kind: "fs_delete", paths: ["/tmp/x"] });
  // cd may fail: both directories are possible.
  assert.deepEqual(derive("cd d; rm x").effects[0], {
    kind: "fs_delete",
    paths: ["/w/d/x", "/w/x"],
  });
  // A subshell's cd does not leak out.
  assert.deepEqual(derive("(cd /tmp) && rm x").effects[0], { kind: "fs_delete", paths: ["/w/x"] });
  assert.deepEqual(derive("cd -; rm x; rm /abs").effects, [
    { kind: "fs_delete", paths: ["/abs"] },
    spawn("rm"),
    { kind: "session_write" },
    { kind: "opaque", reason: "unknown working directory" },
  ]);
});

Deno.test("K-EFF-3: command and process substitutions contribute their inner effects", () => {
  assert.deepEqual(derive("echo $(rm y)").effects, [
    { kind: "fs_delete", paths: ["/w/y"] },
    spawn("rm"),
  ]);
  const diff = derive("diff <(sort a) <(sort b)");
  assert.deepEqual(diff.effects[0], { kind: "fs_read", paths: ["/w/a", "/w/b"] });
  assert.equal(diff.effects.at(-1)?.kind, "opaque");
});

Deno.test("K-EFF-3: control structures union every branch and loop body", () => {
  assert.deepEqual(derive("if test -f a; then rm a; else touch b; fi").effects.slice(0, 2), [
    { kind: "fs_write", paths: ["/w/b"] },
    { kind: "fs_delete", paths: ["/w/a"] },
  ]);
  assert.deepEqual(derive("while false; do rm c; done").effects[0], {
    kind: "fs_delete",
    paths: ["/w/c"],
  });
  assert.deepEqual(derive("case x in a) rm d;; b) rm e;; esac").effects[0], {
    kind: "fs_delete",
    paths: ["/w/d", "/w/e"],
  });
  assert.deepEqual(kinds('for f in *.txt; do cat "$f"; done'), ["proc_spawn", "opaque"]);
});

Deno.test("K-EFF-3: functions in the source count once; session functions are opaque", () => {
  assert.deepEqual(derive("f() { rm a; }; f; f").effects, [
    { kind: "fs_delete", paths: ["/w/a"] },
    spawn("rm"),
    { kind: "session_write" },
  ]);
  assert.deepEqual(derive("myfn x", "/w", { sessionCommands: new Set(["myfn"]) }).effects, [
    { kind: "opaque", reason: "session function" },
  ]);
  // `command` bypasses functions and aliases.
  assert.deepEqual(
    derive("command ls", "/w", { sessionCommands: new Set(["ls"]) }).effects,
    [{ kind: "fs_read", paths: ["/w"] }, spawn("ls")],
  );
  // A definition that may not have happened does not hide the real command.
  assert.deepEqual(derive("if false; then rm() { :; }; fi; rm -rf x").effects[0], {
    kind: "fs_delete",
    paths: ["/w/x"],
  });
});

Deno.test("K-EFF-3: commands that install or redirect execution are opaque", () => {
  assert.deepEqual(kinds("trap 'rm -rf /' EXIT"), ["opaque"]);
  assert.deepEqual(kinds("trap - EXIT; trap -p"), []);
  assert.deepEqual(kinds("LD_PRELOAD=/x.so cat f"), ["fs_read", "proc_spawn", "opaque"]);
  assert.deepEqual(derive("PATH=/tmp", "/w", { env: { PATH: "/bin" } }).effects, [
    { kind: "env_write", names: ["PATH"] },
  ]);
});

Deno.test("K-EFF-4: kinds in table order, proc_spawn and net_connect sorted", () => {
  const { effects } = derive(
    "date; curl https://b.example https://a.example:9 https://a.example; cat r; export Z; cd /; rm d; echo $(ls)",
    "/w",
  );
  assert.deepEqual(effects.map((e) => e.kind), [
    "fs_read",
    "fs_delete",
    "proc_spawn",
    "proc_spawn",
    "proc_spawn",
    "proc_spawn",
    "proc_spawn",
    "net_connect",
    "net_connect",
    "net_connect",
    "env_write",
    "session_write",
    "time",
  ]);
  assert.deepEqual(effects.filter((e) => e.kind === "proc_spawn").map((e) => e.argv0), [
    "cat",
    "curl",
    "date",
    "ls",
    "rm",
  ]);
  assert.deepEqual(
    effects.filter((e) => e.kind === "net_connect").map((e) => `${e.host}:${e.port}`),
    ["a.example:9", "a.example:443", "b.example:443"],
  );
  assert.deepEqual(derive("eval a; exec b").effects.filter((e) => e.kind === "opaque"), [
    { kind: "opaque", reason: "eval" },
  ]);
});

Deno.test("K-EFF-5: reversibility", () => {
  assert.equal(reversibilityOf([]), "reversible");
  assert.equal(reversibilityOf([{ kind: "fs_read", paths: ["/a"] }, spawn("cat")]), "reversible");
  assert.equal(reversibilityOf([{ kind: "fs_write", paths: ["/a"] }]), "irreversible");
  assert.equal(reversibilityOf([{ kind: "net_connect", host: "h", port: 1 }]), "irreversible");
  assert.equal(
    reversibilityOf([{ kind: "fs_delete", paths: ["/a"] }, { kind: "opaque", reason: "x" }]),
    "unknown",
  );
});

Deno.test("K-EFF-3: derivation accepts a parsed AST and is bounded on big sources", () => {
  const file = parseBash("rm a");
  assert.deepEqual(deriveEffects(file, "rm a", state("/w")).effects[0], {
    kind: "fs_delete",
    paths: ["/w/a"],
  });
  const big = derive("cat f; ".repeat(5000));
  assert.deepEqual(big.effects, [{ kind: "fs_read", paths: ["/w/f"] }, spawn("cat")]);
  const nested = "f0() { :; }\n" +
    Array.from({ length: 40 }, (_, i) => `f${i + 1}() { cd d$i; f${i}; f${i}; }`).join("\n") +
    "\nf40; rm x";
  assert.equal(derive(nested).effects.at(-1)?.kind, "opaque");
});

Deno.test("K-EFF-2: normalizeEffectName accepts snake and dotted forms", () => {
  assert.equal(normalizeEffectName("fs.read"), "fs_read");
  assert.equal(normalizeEffectName("proc_spawn"), "proc_spawn");
  assert.equal(normalizeEffectName("journal.read"), "journal_read");
  assert.equal(normalizeEffectName("opaque"), "opaque");
  assert.throws(
    () => normalizeEffectName("fs.exec"),
    (e) => e instanceof RpcError && e.code === -32602,
  );
});

Deno.test("K-EFF-3: fillBinHashes hashes the executable PATH resolves to", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-binhash-" });
  try {
    const bytes = new TextEncoder().encode("#!/bin/sh\necho tool\n");
    await Deno.writeFile(`${dir}/tool`, bytes, { mode: 0o755 });
    const expected = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    const filled = await fillBinHashes(
      [{ kind: "fs_read", paths: ["/a"] }, spawn("tool"), spawn("missing-tool")],
      `/nonexistent:${dir}`,
      "/",
    );
    assert.deepEqual(filled, [
      { kind: "fs_read", paths: ["/a"] },
      { kind: "proc_spawn", argv0: "tool", bin_hash: expected },
      { kind: "proc_spawn", argv0: "missing-tool", bin_hash: null },
    ]);
    const relative = await fillBinHashes([spawn("./tool")], "", dir);
    assert.deepEqual(relative, [{ kind: "proc_spawn", argv0: "./tool", bin_hash: expected }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("K-EFF-3: aliases, callbacks and arithmetic on hostile values are opaque", () => {
  assert.deepEqual(derive("alias ls='rm -rf /'\nls").effects, [
    { kind: "session_write" },
    { kind: "opaque", reason: "alias" },
  ]);
  assert.deepEqual(kinds("mapfile -C 'rm x' -c 1 arr < f"), ["fs_read", "opaque"]);
  assert.deepEqual(kinds("mapfile -t arr < f"), ["fs_read"]);
  const env = { N: "a[$(rm -rf /)]", M: "3" };
  assert.deepEqual(kinds("(( N + 1 ))", { env }), ["env_read", "opaque"]);
  assert.deepEqual(kinds("echo $(( M + 1 ))", { env }), ["env_read"]);
});

Deno.test("K-EFF-3: a variable assigned through `command`, quoting, coproc or wait -p is not substituted", () => {
  const env = { HOME: "/home/me" };
  // bash runs each of these in the current shell, so $HOME afterwards is /etc (or a number),
  // never the session value: a path built from it cannot be resolved statically.
  for (
    const src of [
      "command read HOME <<< /etc; rm $HOME/x",
      "command -p read HOME <<< /etc; rm $HOME/x",
      "command export HOME=/etc; rm $HOME/x",
      "command declare HOME=/etc; rm $HOME/x",
      "\\read HOME <<< /etc; rm $HOME/x",
      '"export" HOME=/etc; rm $HOME/x',
      "command printf -v HOME /etc; rm $HOME/x",
      "printf -vHOME /etc; rm $HOME/x",
      "command mapfile HOME < /dev/null; rm $HOME/x",
      "coproc HOME { cat; }; rm $HOME/x",
      "wait -p HOME -n; rm $HOME/x",
    ]
  ) {
    const effects = derive(src, "/w", { env }).effects;
    assert.ok(
      !effects.some((e) => e.kind === "fs_delete"),
      `${src}: ${JSON.stringify(effects)}`,
    );
    assert.deepEqual(effects.find((e) => e.kind === "env_write"), {
      kind: "env_write",
      names: ["HOME"],
    }, src);
    assert.equal(effects.at(-1)!.kind, "opaque", src);
  }
});

Deno.test("K-EFF-3: a dynamic variable name may assign anything: no substitution, env_write *, opaque", () => {
  const env = { HOME: "/home/me" };
  // bash evaluates a subscript in the name it is given (`k='a[$(cmd)]'; read "$k"` runs cmd).
  for (const src of ['read "$v"; rm $HOME/x', 'printf "$fmt" x; rm $HOME/x']) {
    assert.deepEqual(derive(src, "/w", { env }).effects, [
      spawn("rm"),
      { kind: "env_write", names: ["*"] },
      { kind: "opaque", reason: "assigns a variable named by data" },
    ], src);
  }
  // A lone quoted format names nothing: printf needs a format after `-v NAME`.
  assert.deepEqual(derive('printf "$fmt"', "/w", { env }).effects, []);
  // A dynamic prompt or format is a value, not a name.
  assert.deepEqual(derive('read -p "$prompt" x; printf "%s\\n" "$x"', "/w", { env }).effects, []);
});

Deno.test("K-EFF-3: a nameref can write any variable through another name: opaque", () => {
  assert.deepEqual(derive("declare -n r=HOME; r=/etc", "/w", { env: { HOME: "/h" } }).effects, [
    { kind: "opaque", reason: "nameref" },
  ]);
  assert.deepEqual(kinds("f() { local -n out=$1; out=x; }"), ["session_write", "opaque"]);
  // `export -n` un-exports: an env_write, not a nameref.
  assert.deepEqual(derive("export -n HOME").effects, [{ kind: "env_write", names: ["HOME"] }]);
});

Deno.test("K-EFF-3a: printf, read and declare -p write nothing they only print or read", () => {
  const env = { HOME: "/home/me", USER: "me" };
  for (const src of ["printf '%s\\n' HOME", "printf HOME", "read -p USER x", "declare HOME"]) {
    assert.deepEqual(derive(src, "/w", { env }).effects, [], src);
  }
  assert.deepEqual(derive("declare -p HOME; typeset -p USER", "/w", { env }).effects, [
    { kind: "env_read", names: ["HOME", "USER"] },
  ]);
  // What they really assign still counts.
  assert.deepEqual(derive("read USER; getopts ab HOME", "/w", { env }).effects, [
    { kind: "env_write", names: ["HOME", "USER"] },
  ]);
});

Deno.test("K-EFF-3: a brace expansion makes several words: dynamic, never one literal path", () => {
  // bash runs `rm /etc/passwd x` here; a literal "/w/{/etc/passwd,x}" would pass a /w/** grant.
  for (
    const src of ["rm {/etc/passwd,x}", "rm x{,/../../etc/passwd}", "cat a{1..3}", "cp a{,.bak}"]
  ) {
    const effects = derive(src).effects;
    assert.ok(!effects.some((e) => e.kind.startsWith("fs_")), `${src}: ${JSON.stringify(effects)}`);
    assert.equal(effects.at(-1)!.kind, "opaque", src);
  }
  assert.deepEqual(kinds("{rm,x} y"), ["opaque"]);
  // A brace-expanded name given to printf -v may be any variable.
  assert.deepEqual(
    kinds("printf -v {HOME,X} y; rm $HOME/x", { env: { HOME: "/home/me" } }),
    ["proc_spawn", "env_write", "opaque"],
  );
  // Quoted or escaped braces, `{}` and a single word in braces are literal.
  for (
    const [src, path] of [['rm "{a,b}"', "/w/{a,b}"], ["rm \\{a,b\\}", "/w/{a,b}"], [
      "rm {a}",
      "/w/{a}",
    ]]
  ) {
    assert.deepEqual(derive(src).effects, [{ kind: "fs_delete", paths: [path] }, spawn("rm")], src);
  }
});

Deno.test("K-EFF-3: a glob that may match `..` (`.?`, `.*`, `@(..)`) is not a literal path; a glob cd leaves the cwd unknown", () => {
  // With globskipdots off (bash < 5.2 or `shopt -u globskipdots`) `.?/.?/x` is `../../x`.
  for (const src of ["rm .?/.?/secret", "rm -rf .*", "cat ..*/x", "rm .[.]/x", "echo > .?/f"]) {
    const effects = derive(src).effects;
    assert.ok(!effects.some((e) => e.kind.startsWith("fs_")), `${src}: ${JSON.stringify(effects)}`);
    assert.deepEqual(effects.at(-1), { kind: "opaque", reason: "dynamic path" }, src);
  }
  assert.deepEqual(kinds("cd .?/.? && rm x"), ["proc_spawn", "session_write", "opaque"]);
  assert.deepEqual(kinds("cd pro* && rm x"), ["proc_spawn", "session_write", "opaque"]);
  // Globs that cannot match a dot directory stay literal patterns.
  for (
    const [src, path] of [["rm *.log", "/w/*.log"], ["rm a/.b*", "/w/a/.b*"], ["rm ...", "/w/..."]]
  ) {
    assert.deepEqual(derive(src).effects, [{ kind: "fs_delete", paths: [path] }, spawn("rm")], src);
  }
});

Deno.test("K-EFF-3a: abbreviated long options resolve like getopt_long, so a write cannot hide behind one", () => {
  const cases: [string, Effect[]][] = [
    ["cp --target=/etc a", [
      { kind: "fs_read", paths: ["/w/a"] },
      { kind: "fs_write", paths: ["/etc"] },
      spawn("cp"),
    ]],
    ["cp --targ /etc a", [
      { kind: "fs_read", paths: ["/w/a"] },
      { kind: "fs_write", paths: ["/etc"] },
      spawn("cp"),
    ]],
    ["sort --out=/etc/x a", [
      { kind: "fs_read", paths: ["/w/a"] },
      { kind: "fs_write", paths: ["/etc/x"] },
      spawn("sort"),
    ]],
    ["sed --in s/a/b/ f", [{ kind: "fs_write", paths: ["/w/f"] }, spawn("sed")]],
    ["chmod --ref=r f", [
      { kind: "fs_read", paths: ["/w/r"] },
      { kind: "fs_write", paths: ["/w/f"] },
      spawn("chmod"),
    ]],
    ["rmdir --par a/b", [{ kind: "fs_delete", paths: ["/w/a", "/w/a/b"] }, spawn("rmdir")]],
    // Exact options that merely start another option's name are not that option abbreviated.
    ["grep --binary pat f", [{ kind: "fs_read", paths: ["/w/f"] }, spawn("grep")]],
    ["du --time d", [{ kind: "fs_read", paths: ["/w/d"] }, spawn("du")]],
    ["diff --context a b", [{ kind: "fs_read", paths: ["/w/a", "/w/b"] }, spawn("diff")]],
    ["curl --parallel http://a/ http://b/", [
      spawn("curl"),
      { kind: "net_connect", host: "a", port: 80 },
      { kind: "net_connect", host: "b", port: 80 },
    ]],
  ];
  for (const [src, effects] of cases) assert.deepEqual(derive(src).effects, effects, src);
  assert.deepEqual(derive("cp --s a b").effects, [
    spawn("cp"),
    { kind: "opaque", reason: "ambiguous option --s" },
  ]);
  assert.deepEqual(kinds("curl --conf x"), ["proc_spawn", "opaque"]);
  assert.deepEqual(kinds("wget --exec x http://h/"), ["proc_spawn", "opaque"]);
});

Deno.test("K-EFF-3a: git config and git remote writes name the configuration file they change", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/.git`);
    const writes = (src: string) => derive(src, dir, { home: "/home/me" }).effects[0];
    const local = { kind: "fs_write", paths: [`${dir}/.git/config`] };
    for (
      const src of [
        "git config user.email a@b",
        "git config --local --type=bool core.x true",
        "git config set user.name me",
        "git config --unset user.name",
        "git config unset user.name",
        "git remote add origin https://example.com/r.git",
        "git remote set-url origin https://example.com/r.git",
        "git remote remove origin",
      ]
    ) assert.deepEqual(writes(src), local, src);
    assert.deepEqual(writes("git config --worktree a.b c"), {
      kind: "fs_write",
      paths: [`${dir}/.git/config.worktree`],
    });
    assert.deepEqual(writes("git config --global user.name me"), {
      kind: "fs_write",
      paths: ["/home/me/.config/git/config", "/home/me/.gitconfig"],
    });
    assert.deepEqual(writes("git config --system a.b c"), {
      kind: "fs_write",
      paths: ["/etc/gitconfig"],
    });
    // Reads, editors, other files, fetches and what is not followed stay opaque.
    for (
      const src of [
        "git config user.email",
        "git config --get user.email",
        "git config --list",
        "git config list",
        "git config -e",
        "git config -f other a.b c",
        "git config --frobnicate a.b c",
        "git remote -v",
        "git remote add -f origin u",
        "git remote update",
      ]
    ) {
      const effects = derive(src, dir).effects;
      assert.ok(effects.some((e) => e.kind === "opaque"), src);
      assert.ok(!effects.some((e) => e.kind === "fs_write"), src);
    }
  });
  // No repository yet (`git init` in the same source makes one): opaque, as before.
  await withTempDir((dir) => {
    assert.ok(
      derive("git config a.b c", dir).effects.some((e) =>
        e.kind === "opaque" && e.reason === "git config outside a repository"
      ),
    );
    return Promise.resolve();
  });
});

Deno.test("P-SBX-6/K-EFF-3a: git subcommands that rewrite .git/config as a side effect name it, the others do not", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/.git`);
    await Deno.writeTextFile(`${dir}/.git/config`, '[remote "up stream"]\n\turl = /x\n');
    const config = `${dir}/.git/config`;
    const writesConfig = (src: string) =>
      derive(src, dir).effects.some((e) => e.kind === "fs_write" && e.paths.includes(config));
    const rewriting = [
      "git branch -m a b",
      "git branch -fM a b",
      "git branch --mov a b",
      "git branch -c a b",
      "git branch -uorigin/main",
      "git branch --set-upstream-to=origin/main",
      "git branch --unset-upstream",
      "git branch -t a main",
      "git branch a 'up stream/main'",
      "git branch a remotes/x/main",
      "git checkout -b a 'up stream/main'",
      "git checkout -qb a refs/remotes/x/main",
      "git checkout --track x/main",
      "git checkout -t x/main",
      "git switch -c a 'up stream/main'",
      "git switch --create a 'up stream/main'",
      "git switch -c a --track=inherit main",
      "git push -u x main",
      "git submodule update --init",
      "git submodule --quiet add ../lib lib",
      "git submodule sync",
      "git init",
      "git init -q .",
      "git -C . init -b main",
    ];
    const leaving = [
      "git branch",
      "git branch -a -vv",
      "git branch -r --list",
      "git branch -dr x/main",
      "git branch -d a",
      "git branch -D a",
      "git branch --contains main",
      "git branch a",
      "git branch a main",
      "git branch a feature/base",
      "git checkout -b a",
      "git checkout -b up/stream main",
      "git checkout -b a 'up stream/main' --no-track",
      "git checkout --theirs -- f",
      "git switch -c a main",
      "git switch main",
      "git push x main",
      "git submodule",
      "git submodule update",
      "git submodule status",
      "git init sub",
    ];
    assert.deepEqual(rewriting.filter((src) => !writesConfig(src)), []);
    assert.deepEqual(leaving.filter(writesConfig), []);
    const added = derive("git submodule add ../lib lib", dir).effects;
    assert.ok(added.some((e) => e.kind === "fs_write" && e.paths.includes(`${dir}/.gitmodules`)));
  });
});

Deno.test("K-EFF-3a: git read subcommands that read outside the tree or take dynamic options are opaque", () => {
  for (
    const src of [
      "git diff --no-index /etc/shadow x",
      "git blame --contents /etc/passwd a",
      "git blame --conte=/etc/passwd a",
      "git log --output=/tmp/x",
      'git log "$range"',
    ]
  ) {
    assert.deepEqual(kinds(src), ["proc_spawn", "opaque"], src);
  }
  assert.deepEqual(kinds("git log --oneline --color"), ["fs_read", "proc_spawn"]);
});

Deno.test("K-EFF-3a: --files0-from and file -f read files named inside a file: opaque", () => {
  for (
    const src of [
      "wc --files0-from=list",
      "sort --files0-from list",
      "du --files0=l",
      "file -f names",
    ]
  ) {
    assert.deepEqual(derive(src).effects.at(-1), {
      kind: "opaque",
      reason: "reads the files a file names",
    }, src);
  }
  assert.deepEqual(kinds("file -m magic f"), ["fs_read", "proc_spawn"]);
});

Deno.test("K-EFF-3a: checksum lists, find -files0-from and curl @file headers are followed or opaque", () => {
  for (const src of ["md5sum -c sums", "sha256sum --check sums", "find -files0-from l -name x"]) {
    assert.equal(derive(src).effects.at(-1)!.kind, "opaque", src);
  }
  assert.deepEqual(derive("curl -H @/etc/secret -d @fmt http://h/").effects, [
    { kind: "fs_read", paths: ["/etc/secret", "/w/fmt"] },
    spawn("curl"),
    { kind: "net_connect", host: "h", port: 80 },
  ]);
});

Deno.test("K-EFF-6 an inherited variable is trusted, a changed one configures the command, and a file an inherited one names still counts", async () => {
  const opaqueOf = (src: string, extra: Partial<EffectState>) =>
    (derive(src, "/w", extra).effects.find((e) => e.kind === "opaque") as
      | { reason: string }
      | undefined)?.reason ?? null;
  const inherited = (env: Record<string, string>) => ({ env, changedEnv: new Set<string>() });
  const env = { XDG_CONFIG_HOME: "/nonexistent/xdg", GIT_SSL_CAINFO: "/etc/ca.crt" };
  assert.equal(opaqueOf("curl http://h.example/", inherited(env)), null);
  assert.equal(opaqueOf("git status", inherited(env)), null);
  assert.equal(
    opaqueOf("curl http://h.example/", { env, changedEnv: new Set(["XDG_CONFIG_HOME"]) }),
    "curl configured by XDG_CONFIG_HOME",
  );
  assert.equal(
    opaqueOf("git status", { env, changedEnv: new Set(["GIT_SSL_CAINFO"]) }),
    "git configured by GIT_SSL_CAINFO",
  );
  // Inherited or not, these move what git reads and writes.
  for (const name of ["GIT_DIR", "GIT_CONFIG_GLOBAL", "GIT_EXEC_PATH", "GIT_CONFIG_COUNT"]) {
    assert.equal(
      opaqueOf("git status", inherited({ [name]: "/x" })),
      `git configured by ${name}`,
    );
  }
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/.curlrc`, 'output = "/etc/x"\n');
    await Deno.writeTextFile(`${dir}/rg.conf`, "--pre=/bin/sh\n");
    for (const name of ["XDG_CONFIG_HOME", "CURL_HOME"]) {
      assert.equal(
        opaqueOf("curl http://h.example/", inherited({ [name]: dir })),
        `curl configured by ${dir}/.curlrc`,
      );
    }
    assert.equal(
      opaqueOf("rg x", inherited({ RIPGREP_CONFIG_PATH: `${dir}/rg.conf` })),
      `rg configured by ${dir}/rg.conf`,
    );
    assert.equal(
      opaqueOf("wget http://h.example/", inherited({ WGETRC: `${dir}/.curlrc` })),
      `wget configured by ${dir}/.curlrc`,
    );
  });
});

Deno.test("K-EFF-3: ${x@P} and test -v of a name from data are opaque; their harmless neighbours stay exact", () => {
  for (const src of ["echo ${x@P}", 'k=1; test -v "$k"', 'k=1; [ -v "$k" ]', "o=1; [ $o ]"]) {
    assert.deepEqual(kinds(src).at(-1), "opaque", src);
  }
  for (
    const src of ['echo "${x@Q}" ${x@E}', "[ $? -eq 0 ]", 'x=1; [ "$x" = y ]', 'x=1; [ -n "$x" ]']
  ) assert.deepEqual(kinds(src), [], src);
});

Deno.test("K-EFF-3a: curl's other file and host options are followed", () => {
  const effects = (src: string) => derive(src, "/w", { env: { HOME: "/home/me" } }).effects;
  assert.deepEqual(
    effects("curl --libcurl /etc/x -E c.pem --proxy-key k https://a.com").slice(0, 2),
    [
      { kind: "fs_read", paths: ["/w/c.pem", "/w/k"] },
      { kind: "fs_write", paths: ["/etc/x"] },
    ],
  );
  assert.deepEqual(
    effects("curl --doh-url https://dns.example/q --proxy1.0 p.example:3 https://a.com")
      .filter((e) => e.kind === "net_connect"),
    [
      { kind: "net_connect", host: "a.com", port: 443 },
      { kind: "net_connect", host: "dns.example", port: 443 },
      { kind: "net_connect", host: "p.example", port: 3 },
    ],
  );
  assert.deepEqual(effects("curl 'https://a.com/{x,y}' -o 'd/#1'").at(-1), {
    kind: "opaque",
    reason: "curl output named by a URL glob",
  });
});

// SPEC decision needed (K-EFF-3a table): `hostname` and `date` are listed as reading only, but run
// as root (a kernel started by root, an unsandboxed agent) `hostname NAME`, `hostname -F FILE`
// and `date -s TIME` change the machine's name and clock; whether those forms are opaque (or a
// new effect) is for the SPEC. Not run through bash: it would change this machine.
Deno.test({
  name: "K-EFF-3a (SPEC decision): hostname NAME and date -s TIME change the machine as root",
  ignore: true,
  fn: () => {
    for (
      const src of ["hostname evil", "hostname -F /etc/x", "date -s 2020-01-01", "date --set=x"]
    ) {
      assert.equal(kinds(src).at(-1), "opaque", src);
    }
  },
});
