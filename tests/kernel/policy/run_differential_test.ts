/**
 * Derived effects against what a run really does (K-EFF-3a): each source is derived, then run by
 * a real bash in a fresh temp tree, and every file the run created, changed or removed must be
 * named by a derived `fs_write`/`fs_delete` path (or below one), unless the derivation gave up
 * (`opaque`). An under-report is what a human approving the plan would not see.
 */
import assert from "node:assert/strict";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { effectVerdict } from "../../../src/kernel/policy/evaluate.ts";
import { principalPolicy } from "../../_support/principals.ts";

const PATH = "/usr/bin:/bin";

/**
 * Runs `body` with a fresh tree outside /tmp, removed afterwards. While a sandboxed exec of a
 * kernel whose agent may write `/tmp/**` runs (tests' agents once could: another worktree's run
 * of older tests, or a user's kernel), that kernel holds a `commondir` and a `config.worktree` placeholder in every git directory up to
 * 5 levels below /tmp (P-SBX-6): one made in a `.git` after the removal had emptied it failed the
 * removal (ENOTEMPTY), and one made during a run is a change no derivation names.
 */
function withTree(body: (root: string) => void | Promise<void>): Promise<void> {
  return withTempDir(body, "/var/tmp");
}

/** The effects derived for `src` in `cwd`, HOME `home`, an unchanged session environment. */
function derive(src: string, cwd: string, home: string): Effect[] {
  const env = { HOME: home, PATH };
  const state = {
    cwd,
    env,
    changedEnv: new Set<string>(),
    home,
    sessionCommands: new Set<string>(),
  };
  return deriveEffects(parseBash(src), src, state).effects;
}

/** Every entry below `root` (not following links) with what tells a change. */
function snapshot(root: string, into = new Map<string, string>()): Map<string, string> {
  for (const entry of Deno.readDirSync(root)) {
    const path = `${root}/${entry.name}`;
    const info = Deno.lstatSync(path);
    // a directory's own times change with its entries, which are compared themselves
    const stamp = info.isDirectory ? "" : `${info.size}:${info.mtime?.getTime()}`;
    into.set(path, `${stamp}:${info.ino}:${info.isSymlink}`);
    if (info.isDirectory) snapshot(path, into);
  }
  return into;
}

/** Runs `src` in a plain bash in `cwd`, as a session would, and waits for it. */
async function run(src: string, cwd: string, home: string): Promise<void> {
  const child = new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-c", src],
    cwd,
    env: { HOME: home, PATH },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await child.status;
}

/** Paths below `root` the run of `src` touched that no derived write or delete names. */
async function unreported(
  src: string,
  root: string,
  seed: (root: string) => void,
  cwd = root,
): Promise<string[]> {
  const home = `${root}/home`;
  Deno.mkdirSync(home);
  seed(root);
  const effects = derive(src, cwd, home);
  if (effects.some((e) => e.kind === "opaque")) return [];
  const named = effects.flatMap((e) =>
    e.kind === "fs_write" || e.kind === "fs_delete" ? e.paths : []
  );
  const before = snapshot(root);
  await run(src, cwd, home);
  const after = snapshot(root);
  const touched = [...new Set([...before.keys(), ...after.keys()])]
    .filter((path) => before.get(path) !== after.get(path));
  return touched.filter((path) => !named.some((p) => path === p || path.startsWith(`${p}/`)));
}

/**
 * {@link unreported} for each of `sources`, each run in a fresh tree seeded by `seed` from the
 * directory `cwd` gives for its root: the paths each source left unnamed, relative to the root,
 * for those that left any.
 */
async function unreportedEach(
  sources: readonly string[],
  seed: (root: string) => void,
  cwd: (root: string) => string = (root) => root,
): Promise<Record<string, string[]>> {
  const failures: Record<string, string[]> = {};
  for (const src of sources) {
    await withTree(async (root) => {
      const missed = await unreported(src, root, seed, cwd(root));
      if (missed.length > 0) failures[src] = missed.map((path) => path.slice(root.length + 1));
    });
  }
  return failures;
}

/** Files a, b and c holding a line each. */
function abc(root: string): void {
  for (const name of ["a", "b", "c"]) Deno.writeTextFileSync(`${root}/${name}`, `${name}\n`);
}

Deno.test("K-EFF-3a: cp/mv/ln/install -S SUFFIX and --back… make backups the derivation names", async () => {
  // GNU coreutils: `-S`/`--suffix` implies `--backup`, and `--back` abbreviates `--backup`: the
  // run leaves b.bak (or b~) next to b, which no derived path named before.
  const failures = await unreportedEach(
    [
      "cp -S .bak a b",
      "cp --suffix=.bak a b",
      "cp --su .bak a b",
      "cp --back a b",
      "cp --backu=numbered a b",
      "mv -S .old c b",
      "mv --back c b",
      "ln -S .L a b",
      "ln -f --back a b",
      "install -S .I a b",
      "install --back a b",
    ],
    abc,
  );
  assert.deepEqual(failures, {});
});

/** Runs `src` like {@link run}, with the git identity a commit needs; its output, both streams. */
async function output(src: string, cwd: string, home: string): Promise<string> {
  const identity = { GIT_AUTHOR_NAME: "a", GIT_AUTHOR_EMAIL: "a@b", GIT_COMMITTER_NAME: "a" };
  const { stdout, stderr } = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-c", src],
    cwd,
    env: { HOME: home, PATH, ...identity, GIT_COMMITTER_EMAIL: "a@b" },
    clearEnv: true,
    stdin: "null",
  }).output();
  return new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
}

Deno.test("K-EFF-3a: git read subcommands name the files outside the work tree they read", async () => {
  await withTree(async (root) => {
    const [repo, home, secret] = [`${root}/repo`, `${root}/home`, `${root}/secret`];
    Deno.mkdirSync(home);
    Deno.writeTextFileSync(secret, "s3cr3t\n");
    const init = "git init -q repo && cd repo && echo one > f && git add f && git commit -qm one";
    await output(init, root, home);
    Deno.writeTextFileSync(`${repo}/f`, "two\n");
    const missed: Record<string, string> = {};
    for (
      const [src, leaks] of [
        // `git diff A B` with A or B outside the work tree is `git diff --no-index A B`
        ["git diff ../secret f", true],
        ["git diff --stat ../secret f", false],
        ["git blame -S ../secret f", true],
        ["git blame --ignore-revs-file ../secret f", true],
        ["git blame --ignore-revs-file=../secret f", true],
        ["git diff -O../secret", false],
        ["git log -p --orderfile=../secret", false],
        ["git ls-files -o -X ../secret", false],
        ["git ls-files -o --exclude-from=../secret", false],
      ] as const
    ) {
      const effects = derive(src, repo, home);
      const reads = effects.flatMap((e) => e.kind === "fs_read" ? e.paths : []);
      if (!reads.includes(secret) && !effects.some((e) => e.kind === "opaque")) {
        missed[src] = JSON.stringify(reads);
      }
      // the run shows what it read where it can
      if (leaks) assert.match(await output(src, repo, home), /s3cr3t/, src);
    }
    assert.deepEqual(missed, {});
  });
});

Deno.test("K-EFF-3a/K-EFF-5: date -s/--set or a MMDDhhmm operand sets the system clock: opaque, not a reversible clock read", async () => {
  // `date -s 2020-01-01` and `date 010100002020` call clock_settime (seen with strace, the call
  // failed by injection): derived as `time` alone, they were a reversible read of the clock.
  await withTree((root) => {
    for (
      const src of [
        "date -s 2020-01-01",
        "date --set=2020-01-01",
        "date --se 2020-01-01",
        "date 010100002020",
      ]
    ) {
      const kinds = derive(src, root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    assert.deepEqual(derive("date -d tomorrow +%s", root, root).map((e) => e.kind), [
      "proc_spawn",
      "time",
    ]);
  });
});

Deno.test("K-EFF-6: SSLKEYLOGFILE (curl, wget) and SYSTEM_WGETRC move what they write: opaque when not the human's", async () => {
  // curl 7.88 and wget against a local TLS server each appended the session's secrets to the file
  // SSLKEYLOGFILE named; the derivation said only net_connect.
  await withTree((root) => {
    const at = (src: string, env: Record<string, string> = {}, changed: string[] = []) => {
      const state = {
        cwd: root,
        env: { HOME: root, PATH, ...env },
        changedEnv: new Set(changed),
        home: root,
        sessionCommands: new Set<string>(),
      };
      return deriveEffects(parseBash(src), src, state).effects.map((e) => e.kind);
    };
    const keys = { SSLKEYLOGFILE: `${root}/keys` };
    for (const command of ["curl -s https://example.com/", "wget -O - https://example.com/"]) {
      for (const src of [`SSLKEYLOGFILE=keys ${command}`, `export SSLKEYLOGFILE=k; ${command}`]) {
        assert.ok(at(src).includes("opaque"), src);
      }
      // set by an earlier exec in the session
      assert.ok(at(command, keys, ["SSLKEYLOGFILE"]).includes("opaque"), command);
      // inherited from the kernel's start: the local human's own (K-EFF-6)
      assert.ok(!at(command, keys).includes("opaque"), command);
    }
    // wget reads SYSTEM_WGETRC's file for the global wgetrc: `output_document = /tmp/p` in it sent
    // `wget http://127.0.0.1:P/i` to /tmp/p, derived as fs_write [cwd]
    const system = { SYSTEM_WGETRC: `${root}/rc` };
    assert.ok(at("wget http://example.com/", system, ["SYSTEM_WGETRC"]).includes("opaque"));
    assert.ok(!at("wget http://example.com/", system).includes("opaque"));
  });
});

Deno.test("K-EFF-3a: jq loads ~/.jq into every program: with one there, jq is opaque", async () => {
  await withTree(async (root) => {
    const home = `${root}/home`;
    Deno.mkdirSync(home);
    Deno.writeTextFileSync(`${root}/f`, "[1]\n");
    const src = "jq -c length f";
    assert.ok(!derive(src, root, home).some((e) => e.kind === "opaque"), "no ~/.jq: exact");
    // jq 1.6 read it and ran `length` as redefined there: the whole environment came out, while
    // the derivation said fs_read [f]
    Deno.writeTextFileSync(`${home}/.jq`, "def length: $ENV;\n");
    const kinds = derive(src, root, home).map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `${kinds}`);
    const jq = new Deno.Command("bash", { args: ["-c", "command -v jq"], stdout: "null" });
    if ((await jq.output()).success) assert.match(await output(src, root, home), /"HOME":/);
  });
});

Deno.test("issue 14: a .curlrc or ~/.jq the same source writes configures the command it runs", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("body\n"),
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}/i`;
    for (
      const src of [
        `echo 'output = "../elsewhere"' > ~/.curlrc; curl -s ${url}`,
        `curl -s ${url}; printf '%s\\n' '-o ../elsewhere' >> ~/.curlrc; curl -s ${url}`,
      ]
    ) {
      await withTree(async (root) => {
        // curl wrote ../elsewhere, which the derivation (fs_write ~/.curlrc, net_connect) missed
        const missed = await unreported(src.replaceAll("../", `${root}/`), root, () => {});
        assert.deepEqual(missed, [], src);
      });
    }
  } finally {
    await server.shutdown();
  }
  await withTree((root) => {
    const kinds = derive("echo 'def length: $ENV;' > ~/.jq; jq length f", root, root)
      .map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `${kinds}`);
  });
});

Deno.test("K-EFF-3a: ls -RL, du -L, tree -l, find -L/-follow list the trees the links below lead to", async () => {
  await withTree(async (root) => {
    const [work, outside] = [`${root}/work`, `${root}/outside`];
    Deno.mkdirSync(work);
    Deno.mkdirSync(outside);
    Deno.writeTextFileSync(`${outside}/private-name`, "x\n");
    Deno.symlinkSync(outside, `${work}/link`);
    const missed: Record<string, string> = {};
    for (
      const src of [
        "ls -RL",
        "ls -R --dereference .",
        "du -aL",
        "du --dereference -a .",
        "tree -l",
        "find -L .",
        "find -L . -name '*'",
        "find . -follow",
      ]
    ) {
      const effects = derive(src, work, root);
      const reads = effects.flatMap((e) => e.kind === "fs_read" ? e.paths : []);
      if (!reads.includes(outside) && !effects.some((e) => e.kind === "opaque")) {
        missed[src] = JSON.stringify(reads);
      }
    }
    // what the run shows of the tree outside (tree may be missing on the machine)
    assert.match(await output("ls -RL; du -aL; find -L .", work, root), /private-name/);
    assert.deepEqual(missed, {});
    // without following, the links are listed as links: exact
    for (const src of ["ls -R", "du -a", "find . -name '*'", "tree"]) {
      assert.ok(!derive(src, work, root).some((e) => e.kind === "opaque"), src);
    }
  });
});

/** A repository in `root/repo` with a committed `top` and `sub/s`, and a user identity. */
function repository(root: string): void {
  Deno.writeTextFileSync(`${root}/home/.gitconfig`, "[user]\n\tname = a\n\temail = a@b\n");
  const src = "git init -q repo && cd repo && mkdir sub && echo 1 > top && echo 2 > sub/s && " +
    "git add . && git commit -qm one && echo 3 > sub/s && git worktree add -q ../linked";
  const env = { HOME: `${root}/home`, PATH };
  const args = ["--noprofile", "--norc", "-c", src];
  const done = new Deno.Command("bash", { args, cwd: root, env, clearEnv: true }).outputSync();
  assert.ok(done.success, new TextDecoder().decode(done.stderr));
}

Deno.test("K-EFF-3a: git run in a subdirectory of the work tree writes the whole repository", async () => {
  // from repo/sub, `git rm ../top` deleted repo/top and `git commit` wrote repo/.git, while the
  // derivation said fs_write [repo/sub] (the cwd), which a grant for repo/sub/** lets through
  const failures = await unreportedEach(
    [
      "git rm -q ../top",
      "git add s && git commit -qm two",
      "git checkout -- ../top s",
      "git stash -q",
      "git tag v1",
      "git mv ../top ../moved",
      "git reset -q --hard",
    ],
    repository,
    (root) => `${root}/repo/sub`,
  );
  // a linked worktree's commit writes the main repository's objects and refs
  await withTree(async (root) => {
    const src = "echo 4 > s && git add s && git commit -qm three";
    const missed = await unreported(src, root, repository, `${root}/linked/sub`);
    if (missed.length > 0) failures.linked = missed.map((path) => path.slice(root.length + 1));
  });
  assert.deepEqual(failures, {});
});

Deno.test("K-EFF-3a: mkdir -p, install -d and install -D name the missing parents they make", async () => {
  // `mkdir -p x/y/z` made x and x/y too, derived as fs_write [x/y/z]; a grant for x/y/z (or a
  // path below a directory that does not exist yet) let the run make directories outside it
  const failures = await unreportedEach(
    [
      "mkdir -p x/y/z",
      "mkdir --parents x/y a/b",
      "mkdir -pm 700 x/y",
      "mkdir -p x/../y/z",
      "mkdir -p a/y",
      "install -d x/y",
      "install -D a x/y/z",
      "install -Dm644 a x/y",
      "install -Dt x/y a",
      "install -D -t x/y a",
    ],
    (root) => Deno.mkdirSync(`${root}/a`),
  );
  assert.deepEqual(failures, {});
  // an existing parent is not named: ordinary work below a granted directory stays in it
  await withTree((root) => {
    Deno.mkdirSync(`${root}/a`);
    const writes = derive("mkdir -p a/b", root, root)
      .flatMap((e) => e.kind === "fs_write" ? e.paths : []);
    assert.deepEqual(writes, [`${root}/a/b`]);
  });
});

Deno.test("K-EFF-3: a link into /proc/self, or `..` after /dev/fd/N, is not resolved in the kernel's own process", async () => {
  // `pc -> /proc/self/cwd`: `echo x > pc/f` wrote the run's cwd/f, derived as the kernel's own
  // cwd/f (a path a grant may hold); `{ echo x > /dev/fd/3/../x; } 3<d` wrote x beside d,
  // derived as /dev/fd/x
  const failures = await unreportedEach(
    [
      "echo x > pc/f",
      "cat a > pc/g",
      "{ echo x > /dev/fd/3/../x; } 3<d",
      "echo x > /proc/self/cwd/../y",
    ],
    (root) => {
      Deno.mkdirSync(`${root}/sub/d`, { recursive: true });
      Deno.writeTextFileSync(`${root}/sub/a`, "a\n");
      Deno.symlinkSync("/proc/self/cwd", `${root}/sub/pc`);
    },
    (root) => `${root}/sub`,
  );
  assert.deepEqual(failures, {});
});

Deno.test("K-EFF-6: an EDITOR or VISUAL an earlier exec set is the program git commit runs", async () => {
  // `git commit` without -m ran $EDITOR (and $VISUAL) with stdin not a terminal; an earlier exec's
  // `export EDITOR=./x` (env_write, reversible) left the next `git commit` derived exact
  await withTree((root) => {
    Deno.mkdirSync(`${root}/home`);
    repository(root);
    const kinds = (src: string, changed: string[]) =>
      deriveEffects(parseBash(src), src, {
        cwd: `${root}/repo`,
        env: { HOME: `${root}/home`, PATH, EDITOR: `${root}/x`, VISUAL: `${root}/x` },
        changedEnv: new Set(changed),
        home: `${root}/home`,
        sessionCommands: new Set<string>(),
      }).effects.map((e) => e.kind);
    for (const src of ["git commit -q", "git tag -a v1", "git merge main"]) {
      assert.ok(kinds(src, ["EDITOR"]).includes("opaque"), src);
      assert.ok(kinds(src, ["VISUAL"]).includes("opaque"), src);
      // inherited from the kernel's start: the local human's editor
      assert.ok(!kinds(src, []).includes("opaque"), src);
    }
  });
});

/** Kinds derived for `src` in `root` with the session environment `env`, `changed` since its start. */
function kindsIn(src: string, root: string, env: Record<string, string>, changed: string[]) {
  return deriveEffects(parseBash(src), src, {
    cwd: root,
    env: { HOME: root, PATH, ...env },
    changedEnv: new Set(changed),
    home: root,
    sessionCommands: new Set<string>(),
  }).effects.map((e) => e.kind);
}

Deno.test("K-EFF-6: a POSIXLY_CORRECT an earlier exec exported stops option parsing at the first operand", async () => {
  // with it exported, `mv a -t b c` moved a and b into the directory c ('-t' is an operand), while
  // the derivation (GNU order) said fs_write [b], fs_delete [a, c]
  await withTree((root) => {
    for (const src of ["mv a -t b c", "cp a -t b c", "rm a -r"]) {
      assert.ok(
        kindsIn(src, root, { POSIXLY_CORRECT: "1" }, ["POSIXLY_CORRECT"]).includes("opaque"),
      );
    }
  });
});

Deno.test({
  name:
    "K-EFF-6 needs deciding: a POSIXLY_CORRECT inherited from the kernel's start changes what mv a -t b c moves, yet K-EFF-6 keeps inherited values exact (parse POSIX-style, or opaque?)",
  ignore: true,
  fn: async () => {
    await withTree((root) => {
      const kinds = kindsIn("mv a -t b c", root, { POSIXLY_CORRECT: "1" }, []);
      assert.ok(kinds.includes("opaque"), `${kinds}`);
    });
  },
});

Deno.test({
  name:
    'P-EVAL-1 needs deciding: a grant\'s ? or […] matches a derived glob\'s * as literal text, so fs.delete ["/w/?"] allows rm /w/* (every entry), and fs.delete ["/w/*/x"] allows rm **/x under shopt -s globstar (any depth)',
  ignore: true,
  fn: () => {
    const only = (fs_delete: string[]) =>
      principalPolicy({
        fs_delete,
        proc_spawn: ["*"],
        session_write: true,
        auto_apply: "in-grant",
      });
    for (
      const [grant, src] of [
        ["/w/?", "rm /w/*"],
        ["/w/[!a]", "rm /w/*"],
        ["/w/*/x", "shopt -s globstar; rm /w/**/x"],
      ]
    ) {
      const effects = deriveEffects(parseBash(src), src, {
        cwd: "/w",
        env: { PATH },
        changedEnv: new Set<string>(),
        home: undefined,
        sessionCommands: new Set<string>(),
      }).effects;
      const verdicts = effects.map((e) => effectVerdict(only([grant]), e, undefined));
      assert.ok(verdicts.includes("deny"), `${grant} / ${src}: ${verdicts}`);
    }
  },
});

Deno.test({
  name:
    "K-EFF-3a needs deciding: wget writes ~/.wget-hsts (O_RDWR|O_CREAT, seen with strace) when an https server sends HSTS, beyond the table's fs_write [cwd]; naming it denies plain wget to agents without a HOME grant",
  ignore: true,
  fn: async () => {
    await withTree((root) => {
      const src = "wget -q https://example.com/";
      const writes = derive(src, root, `${root}/home`)
        .flatMap((e) => e.kind === "fs_write" ? e.paths : []);
      assert.ok(writes.includes(`${root}/home/.wget-hsts`), JSON.stringify(writes));
    });
  },
});

Deno.test("K-EFF-3a: in a partial clone, git log -p fetches the blobs it lacks from the promisor remote", async () => {
  // `git log -p -1` ran `git fetch origin --filter=blob:none` (strace) and wrote a pack into
  // .git/objects, while the derivation said fs_read [repo]: with an https remote, a connection too
  await withTree(async (root) => {
    const seed = (root: string) => {
      repository(root);
      const src =
        "git clone -q --bare repo bare && git -C bare config uploadpack.allowFilter true" +
        " && git clone -q --filter=blob:none --no-checkout file://$PWD/bare partial";
      const env = { HOME: `${root}/home`, PATH };
      const args = ["--noprofile", "--norc", "-c", src];
      const done = new Deno.Command("bash", { args, cwd: root, env, clearEnv: true }).outputSync();
      assert.ok(done.success, new TextDecoder().decode(done.stderr));
    };
    const missed = await unreported("git log -p -1 > /dev/null", root, seed, `${root}/partial`);
    assert.deepEqual(missed.map((path) => path.slice(root.length + 1)), []);
  });
});

Deno.test("issue 14: git status in a superproject runs what its submodules' configs name", async () => {
  // with core.fsmonitor set in .git/modules/mod/config, `git status` in the superproject ran it
  // (it recurses into the submodule), derived as fs_read [repo]
  await withTree(async (root) => {
    const seed = (root: string) => {
      repository(root);
      const src = "git init -q inner && (cd inner && echo i > i && git add i && git commit -qm i)" +
        " && cd repo && git -c protocol.file.allow=always submodule add -q ../inner mod" +
        ` && git commit -qm mod && git -C .git/modules/mod config core.fsmonitor ${root}/ran`;
      const env = { HOME: `${root}/home`, PATH };
      const args = ["--noprofile", "--norc", "-c", src];
      const done = new Deno.Command("bash", { args, cwd: root, env, clearEnv: true }).outputSync();
      assert.ok(done.success, new TextDecoder().decode(done.stderr));
      Deno.writeTextFileSync(`${root}/ran`, '#!/bin/sh\necho ran > "$(dirname "$0")/marker"\n');
      Deno.chmodSync(`${root}/ran`, 0o755);
    };
    const missed = await unreported("git status > /dev/null", root, seed, `${root}/repo`);
    assert.ok(!missed.some((path) => path.endsWith("/marker")), JSON.stringify(missed));
    // a submodule's own config (core.worktree and all) runs nothing: git stays exact
    const config = `${root}/repo/.git/modules/mod/config`;
    Deno.writeTextFileSync(config, Deno.readTextFileSync(config).replace(/.*fsmonitor.*\n/, ""));
    const kinds = derive("git status", `${root}/repo`, `${root}/home`).map((e) => e.kind);
    assert.deepEqual(kinds, ["fs_read", "proc_spawn"]);
  });
});

Deno.test("issue 14: git status runs what a nested repository added as a gitlink configures", async () => {
  // `git init emb && git add emb` (no .gitmodules): with core.fsmonitor in emb/.git/config,
  // `git status` in the outer repository ran it, derived as fs_read [repo]
  await withTree(async (root) => {
    const seed = (root: string) => {
      repository(root);
      const src = "cd repo && git init -q emb && (cd emb && echo e > e && git add e && " +
        "git commit -qm e) && git add emb 2>/dev/null && git commit -qm emb && " +
        `git -C emb config core.fsmonitor ${root}/ran`;
      const env = { HOME: `${root}/home`, PATH };
      const args = ["--noprofile", "--norc", "-c", src];
      const done = new Deno.Command("bash", { args, cwd: root, env, clearEnv: true }).outputSync();
      assert.ok(done.success, new TextDecoder().decode(done.stderr));
      Deno.writeTextFileSync(`${root}/ran`, '#!/bin/sh\necho ran > "$(dirname "$0")/marker"\n');
      Deno.chmodSync(`${root}/ran`, 0o755);
    };
    const missed = await unreported("git status > /dev/null", root, seed, `${root}/repo`);
    assert.ok(!missed.some((path) => path.endsWith("/marker")), JSON.stringify(missed));
    const config = `${root}/repo/emb/.git/config`;
    Deno.writeTextFileSync(config, Deno.readTextFileSync(config).replace(/.*fsmonitor.*\n/, ""));
    const kinds = derive("git status", `${root}/repo`, `${root}/home`).map((e) => e.kind);
    assert.deepEqual(kinds, ["fs_read", "proc_spawn"]);
    // nor may the same source set it before git runs
    const src = `git -C emb config core.fsmonitor ${root}/ran; git status`;
    const written = derive(src, `${root}/repo`, `${root}/home`).map((e) => e.kind);
    assert.ok(written.includes("opaque"), `${written}`);
  });
});

Deno.test("issue 14: git config setting a key that names a program is opaque", async () => {
  // `git config core.fsmonitor ./x` then `git status` (in this source or a later one) ran ./x:
  // derived as fs_write [.git/config] and fs_read [repo]
  await withTree((root) => {
    Deno.mkdirSync(`${root}/home`);
    repository(root);
    const kinds = (src: string) => derive(src, `${root}/repo`, `${root}/home`).map((e) => e.kind);
    for (
      const src of [
        "git config core.fsmonitor ./x; git status",
        "git config core.fsmonitor ./x",
        "git config set core.hooksPath h",
        "git config --add include.path ../x",
        "git config --global diff.tool.textconv cat",
      ]
    ) assert.ok(kinds(src).includes("opaque"), src);
    for (const src of ["git config user.name a", "git config --unset core.fsmonitor"]) {
      assert.ok(!kinds(src).includes("opaque"), src);
    }
  });
});
