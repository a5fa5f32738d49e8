/**
 * Known-command table entries (K-EFF-3a) against what the real programs do: options of chmod,
 * less and hostname that change files, run programs or set system state the derivation must name
 * (or give up on, `opaque`), beside the everyday forms that stay exact.
 */
import assert from "node:assert/strict";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const PATH = "/usr/bin:/bin";

/** The effects derived for `src` in `cwd` with HOME `home`; `changed` variables of `env` changed since the start. */
function derive(
  src: string,
  cwd: string,
  home: string,
  env: Record<string, string> = {},
  changed: string[] = [],
): Effect[] {
  const state = {
    cwd,
    env: { HOME: home, PATH, ...env },
    changedEnv: new Set(changed),
    home,
    sessionCommands: new Set<string>(),
  };
  return deriveEffects(parseBash(src), src, state).effects;
}

/** Runs `src` in a plain bash in `cwd` with HOME `home`; its exit code. */
async function run(src: string, cwd: string, home: string, env: Record<string, string> = {}) {
  const child = new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-c", src],
    cwd,
    env: { HOME: home, PATH, ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return (await child.status).code;
}

/** Whether `name` is a program on PATH. */
function installed(name: string): boolean {
  return PATH.split(":").some((dir) => {
    try {
      return Deno.statSync(`${dir}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

Deno.test("K-EFF-3a: chmod takes any option word holding a mode letter (-w,u+s, -g+w, -4) as its mode: every operand is written", async () => {
  // GNU chmod reads `-w,u+s f` as mode `-w,u+s` on f (the run sets f's setuid bit); only
  // `-[rwxXst]+` words were taken as modes, so f was taken for the mode and nothing was written.
  for (const mode of ["-w,u+s", "-g+w", "-x+s", "-u=rwx,go=", "-4", "-o+w"]) {
    await withTempDir(async (root) => {
      Deno.writeTextFileSync(`${root}/f`, "f\n");
      Deno.chmodSync(`${root}/f`, 0o644);
      const src = `chmod ${mode} f`;
      const effects = derive(src, root, root);
      assert.equal(await run(src, root, root), 0, src);
      assert.notEqual(Deno.statSync(`${root}/f`).mode! & 0o7777, 0o644, `${src} changed nothing`);
      const writes = effects.flatMap((e) => e.kind === "fs_write" ? e.paths : []);
      const opaque = effects.some((e) => e.kind === "opaque");
      assert.ok(opaque || writes.includes(`${root}/f`), `${src}: ${JSON.stringify(effects)}`);
    });
  }
  await withTempDir((root) => {
    assert.deepEqual(derive("chmod -R -w a b", root, root)[0], {
      kind: "fs_write",
      paths: [`${root}/a`, `${root}/b`],
    });
    // after `--` the first operand is the mode again
    assert.deepEqual(derive("chmod -- -w a", root, root)[0], {
      kind: "fs_write",
      paths: [`${root}/a`],
    });
    assert.deepEqual(derive("chmod -v u+x a", root, root)[0], {
      kind: "fs_write",
      paths: [`${root}/a`],
    });
  });
});

/** A lesskey source whose `#env` section makes less run a preprocessor that touches `marker`. */
function lesskey(marker: string): string {
  return `#env\nLESSOPEN=|touch ${marker}; cat %s\n`;
}

Deno.test("K-EFF-3a: less -k, --lesskey-src, --lesskey-content and --lesskey-file run the LESSOPEN they set: opaque", async () => {
  // less 590 with its output to a pipe still runs the LESSOPEN a lesskey file sets; the options
  // were derived as reads of the file.
  await withTempDir(async (root) => {
    Deno.writeTextFileSync(`${root}/f.txt`, "hi\n");
    Deno.writeTextFileSync(`${root}/k.src`, lesskey(`${root}/ran`));
    const sources = [
      "less --lesskey-src=k.src f.txt",
      "less --lesskey-s k.src f.txt",
      "less -k k.src f.txt",
      "less --lesskey-file=k.src f.txt",
      `less '--lesskey-content=#env\nLESSOPEN=|touch ran; cat %s' f.txt`,
    ];
    for (const src of sources) {
      const kinds = derive(src, root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    if (installed("less")) {
      await run(sources[0], root, root);
      assert.ok(Deno.statSync(`${root}/ran`).isFile, "less ran the LESSOPEN of the lesskey file");
    }
    assert.deepEqual(derive("less -N f.txt", root, root)[0], {
      kind: "fs_read",
      paths: [`${root}/f.txt`],
    });
  });
});

Deno.test("K-EFF-6: LESSKEYIN_SYSTEM, LESSKEY_SYSTEM and XDG_CONFIG_HOME an earlier exec changed configure less", async () => {
  // less 590 reads `$LESSKEYIN_SYSTEM` and `$XDG_CONFIG_HOME/lesskey` (a LESSOPEN in them runs);
  // changed in the session they left `less f` an exact read.
  await withTempDir(async (root) => {
    Deno.writeTextFileSync(`${root}/f.txt`, "hi\n");
    Deno.mkdirSync(`${root}/xdg`);
    Deno.writeTextFileSync(`${root}/xdg/lesskey`, lesskey(`${root}/ran`));
    const env = { XDG_CONFIG_HOME: `${root}/xdg` };
    if (installed("less")) {
      await run("less f.txt", root, root, env);
      assert.ok(Deno.statSync(`${root}/ran`).isFile, "less ran the LESSOPEN of XDG lesskey");
    }
    for (const name of ["LESSKEYIN_SYSTEM", "LESSKEY_SYSTEM"]) {
      const kinds = derive("less f.txt", root, root, { [name]: `${root}/xdg/lesskey` }, [name])
        .map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${name}: ${kinds}`);
    }
    const kinds = derive("less f.txt", root, root, env, ["XDG_CONFIG_HOME"]).map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `XDG_CONFIG_HOME: ${kinds}`);
  });
});

Deno.test("K-EFF-3a: hostname NAME, -F FILE, -b or -y NAME set the host or NIS domain name: opaque, like date -s", async () => {
  // `unshare -u hostname NAME; hostname` prints NAME (sethostname); derived as nothing but the
  // spawn, a principal allowed to run hostname renamed the machine without approval.
  await withTempDir((root) => {
    for (
      const src of [
        "hostname box",
        "hostname -F name",
        "hostname --file=name",
        "hostname -b",
        "hostname -y nis",
      ]
    ) {
      const kinds = derive(src, root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    for (const src of ["hostname", "hostname -f", "hostname -sI", "hostname --fqdn"]) {
      assert.deepEqual(derive(src, root, root), [
        { kind: "proc_spawn", argv0: "hostname", bin_hash: null },
      ]);
    }
  });
});

/** The paths of every `kind` effect in `effects`. */
function pathsOf(effects: Effect[], kind: string): string[] {
  return effects.flatMap((e) => e.kind === kind && "paths" in e ? e.paths : []);
}

Deno.test("K-EFF-3a: sed -i, install and cp --remove-destination replace a link given as the file: the link is written", async () => {
  // With home/rc a link to grant/rc, each run leaves home/rc a regular file and grant/rc as it
  // was; the derivation named only grant/rc written, so an agent that may write grant/** replaced
  // a ~/.bashrc that links into its project without approval.
  const sources = [
    "sed -i s/a/X/ home/rc",
    "sed -i.bak s/a/X/ home/rc",
    "install n home/rc",
    "install -m 644 n home/rc",
    "cp --remove-destination n home/rc",
    "cp --remove n home/rc",
  ];
  for (const src of sources) {
    await withTempDir(async (root) => {
      Deno.mkdirSync(`${root}/grant`);
      Deno.mkdirSync(`${root}/home`);
      Deno.writeTextFileSync(`${root}/grant/rc`, "abc\n");
      Deno.writeTextFileSync(`${root}/n`, "new\n");
      Deno.symlinkSync(`${root}/grant/rc`, `${root}/home/rc`);
      const effects = derive(src, root, `${root}/home`);
      assert.equal(await run(src, root, `${root}/home`), 0, src);
      assert.ok(!Deno.lstatSync(`${root}/home/rc`).isSymlink, `${src} left the link`);
      assert.equal(Deno.readTextFileSync(`${root}/grant/rc`), "abc\n", `${src} wrote through`);
      assert.ok(!effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
      assert.ok(
        pathsOf(effects, "fs_write").includes(`${root}/home/rc`),
        `${src}: ${JSON.stringify(effects)}`,
      );
      // sed copies what the link led to into the new file: that read is named
      if (src.startsWith("sed")) {
        assert.ok(pathsOf(effects, "fs_read").includes(`${root}/grant/rc`));
      }
    });
  }
  // through the link: --follow-symlinks, and cp without --remove-destination
  for (const src of ["sed --follow-symlinks -i s/a/X/ home/rc", "cp n home/rc"]) {
    await withTempDir(async (root) => {
      Deno.mkdirSync(`${root}/grant`);
      Deno.mkdirSync(`${root}/home`);
      Deno.writeTextFileSync(`${root}/grant/rc`, "abc\n");
      Deno.writeTextFileSync(`${root}/n`, "new\n");
      Deno.symlinkSync(`${root}/grant/rc`, `${root}/home/rc`);
      const effects = derive(src, root, `${root}/home`);
      assert.equal(await run(src, root, `${root}/home`), 0, src);
      assert.ok(Deno.lstatSync(`${root}/home/rc`).isSymlink, `${src} replaced the link`);
      assert.notEqual(Deno.readTextFileSync(`${root}/grant/rc`), "abc\n", src);
      assert.ok(pathsOf(effects, "fs_write").includes(`${root}/grant/rc`), src);
    });
  }
  // a plain file stays an exact write; a tree holding links copied into stays opaque
  await withTempDir((root) => {
    assert.deepEqual(derive("sed -i s/a/b/ f", root, root)[0], {
      kind: "fs_write",
      paths: [`${root}/f`],
    });
    Deno.mkdirSync(`${root}/src/sub`, { recursive: true });
    Deno.mkdirSync(`${root}/dst/src/sub`, { recursive: true });
    Deno.writeTextFileSync(`${root}/src/sub/f`, "a\n");
    Deno.symlinkSync(`${root}/n`, `${root}/dst/src/sub/f`);
    const kinds = derive("cp -r --remove-destination src dst", root, root).map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `${kinds}`);
  });
});

Deno.test("K-EFF-3a: tree -R -L N writes a 00Tree.html into every directory at the limit and below: opaque", async () => {
  // tree 2.1 (strace: openat "./a/00Tree.html" O_WRONLY|O_CREAT|O_TRUNC, one per directory);
  // derived as a read of the cwd alone.
  await withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/a/b`, { recursive: true });
    for (const src of ["tree -R -L 1", "tree -RL 1", "tree -L 1 -R ."]) {
      const kinds = derive(src, root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    if (installed("tree")) {
      await run("tree -R -L 1", root, root);
      assert.ok(Deno.statSync(`${root}/a/b/00Tree.html`).isFile, "tree -R wrote no 00Tree.html");
    }
    assert.deepEqual(derive("tree -L 2 a", root, root)[0], {
      kind: "fs_read",
      paths: [`${root}/a`],
    });
  });
});

Deno.test("K-EFF-3a: curl --url-query NAME@FILE reads FILE into the URL it sends", async () => {
  // curl 7.88: `--url-query name@secret` puts secret's text in the query of the request
  // (url_effective shows it), derived as a connection alone: a read outside the grants unseen.
  await withTempDir(async (root) => {
    Deno.writeTextFileSync(`${root}/secret`, "s3cr3t\n");
    for (const query of ["name@secret", "@secret"]) {
      const src =
        `curl -s -o /dev/null -w '%{url_effective}' --url-query ${query} http://127.0.0.1:1/`;
      const effects = derive(src, root, root);
      assert.ok(
        pathsOf(effects, "fs_read").includes(`${root}/secret`),
        `${src}: ${JSON.stringify(effects)}`,
      );
      if (installed("curl")) {
        const { stdout } = await new Deno.Command("bash", {
          args: ["--noprofile", "--norc", "-c", src],
          cwd: root,
          env: { HOME: root, PATH },
          clearEnv: true,
          stdin: "null",
        }).output();
        const sent = new TextDecoder().decode(stdout);
        // curl before 7.87 has no --url-query: nothing is sent then
        if (sent !== "") assert.match(sent, /s3cr3t/, src);
      }
    }
    // `+` sends the rest as it is
    for (const src of ["curl --url-query a=b http://h/", "curl --url-query +a@secret http://h/"]) {
      assert.deepEqual(pathsOf(derive(src, root, root), "fs_read"), [], src);
    }
  });
});

Deno.test("K-EFF-3a: curl -w %output{FILE} writes FILE (curl 8.3); a format from a file or a dynamic one may: opaque", async () => {
  await withTempDir((root) => {
    const effects = derive("curl -w '%output{out}%{http_code}' http://h/", root, root);
    assert.deepEqual(pathsOf(effects, "fs_write"), [`${root}/out`]);
    const appends = derive("curl -w '%output{>>log}x' http://h/", root, root);
    assert.deepEqual(pathsOf(appends, "fs_write"), [`${root}/log`]);
    for (const src of ["curl -w @fmt http://h/", 'curl -w "$(cat f)" http://h/']) {
      const kinds = derive(src, root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    assert.deepEqual(
      derive("curl -s -w '%{http_code}\\n' http://h/", root, root).map((e) => e.kind),
      [
        "proc_spawn",
        "net_connect",
      ],
    );
  });
});

Deno.test("K-EFF-3a: curl -n reads ~/.netrc; --create-dirs makes the directories on the way to its outputs", async () => {
  // curl 7.88 -n opens $HOME/.netrc (strace) to send its credentials, derived as a connection
  // alone; `--create-dirs -o a/b/c` made a and a/b, unnamed.
  await withTempDir(async (root) => {
    await Deno.mkdir(`${root}/home`);
    await Deno.writeTextFile(`${root}/home/.netrc`, "");
    for (
      const src of ["curl -n http://h/", "curl -sn http://h/", "curl --netrc-optional http://h/"]
    ) {
      assert.deepEqual(pathsOf(derive(src, root, `${root}/home`), "fs_read"), [
        `${root}/home/.netrc`,
      ], src);
    }
    assert.deepEqual(pathsOf(derive("curl -n --netrc-file nf http://h/", root, root), "fs_read"), [
      `${root}/nf`,
    ]);
    assert.deepEqual(pathsOf(derive("curl http://h/", root, root), "fs_read"), []);
    const src = "curl -s --create-dirs -o a/b/c file:///etc/hostname";
    const writes = pathsOf(
      derive("curl -s --create-dirs -o a/b/c http://h/", root, root),
      "fs_write",
    );
    if (installed("curl")) {
      await run(src, root, root);
      assert.ok(Deno.statSync(`${root}/a/b`).isDirectory, "curl --create-dirs made no a/b");
    }
    assert.deepEqual(writes, [`${root}/a`, `${root}/a/b`, `${root}/a/b/c`]);
  });
});

Deno.test("K-EFF-3a: install -s runs strip on what it installs: opaque", async () => {
  // coreutils install -s execs `strip FILE` found along PATH (strace), a program the derivation
  // did not name: a principal allowed to spawn install alone ran strip.
  await withTempDir((root) => {
    for (
      const src of [
        "install -s a b",
        "install --strip a b",
        "install --str -m 755 a b",
        "install -Cs a b",
      ]
    ) {
      const kinds = derive(src, root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    assert.deepEqual(derive("install -m 755 a b", root, root).map((e) => e.kind), [
      "fs_read",
      "fs_write",
      "proc_spawn",
    ]);
  });
});

Deno.test("K-EFF-3a: git signing (commit -S, tag -s/-u) and signature checks (--show-signature, %G) run gpg: opaque", async () => {
  // With a commit carrying a gpgsig header, `git log --show-signature` execs gpg --verify, which
  // made ~/.gnupg (strace, real run below); signing uses the user's secret key. Each was derived
  // as a read or write of the work tree.
  await withTempDir(async (root) => {
    const [repo, home] = [`${root}/repo`, `${root}/home`];
    Deno.mkdirSync(repo);
    Deno.mkdirSync(home);
    const signed = [
      "git init -q",
      'printf "tree %s\\nauthor a <a@b> 1700000000 +0000\\ncommitter a <a@b> 1700000000 +0000\\n' +
      'gpgsig -----BEGIN PGP SIGNATURE-----\\n \\n iQEz\\n -----END PGP SIGNATURE-----\\n\\nm\\n"' +
      " $(git write-tree) > c",
      "git update-ref HEAD $(git hash-object -t commit -w c)",
    ].join(" && ");
    assert.equal(await run(signed, repo, home), 0);
    for (
      const src of [
        "git log --show-signature",
        "git show --show-signature HEAD",
        "git log --format=%G?",
        "git log --pretty=format:%GS",
        "git commit -S -m x",
        "git commit -qS -m x",
        "git commit --gpg-sign=KEY -m x",
        "git tag -s v1 -m x",
        "git tag -u KEY v1 -m x",
        "git merge -S x",
        "git merge --verify-signatures x",
      ]
    ) {
      const kinds = derive(src, repo, home).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    if (installed("gpg")) {
      await run("git log --show-signature", repo, home);
      assert.ok(Deno.statSync(`${home}/.gnupg`).isDirectory, "git log --show-signature ran no gpg");
    }
    for (
      const src of [
        "git log -S x --oneline",
        "git log --format=%H",
        "git commit -s -m x",
        "git commit -m -S",
        "git tag -a v1 -m x",
        "git log --no-show-signature",
      ]
    ) {
      const kinds = derive(src, repo, home).map((e) => e.kind);
      assert.ok(!kinds.includes("opaque"), `${src}: ${kinds}`);
    }
  });
});

Deno.test("K-EFF-3a: rg -z/--search-zip runs decompressors found along PATH: opaque", () => {
  // ripgrep's documentation: -z searches compressed files "by shelling out to external
  // processes" (gzip, bzip2, xz, lz4, brotli, zstd, uncompress); they were derived as a read.
  for (const src of ["rg -z foo", "rg --search-zip foo", "rg -iz foo"]) {
    const kinds = derive(src, "/w", "/home/me").map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
  }
  for (const src of ["rg -n foo", "rg --no-search-zip foo", "rg -e z foo"]) {
    const kinds = derive(src, "/w", "/home/me").map((e) => e.kind);
    assert.ok(!kinds.includes("opaque"), `${src}: ${kinds}`);
  }
});

Deno.test({
  name:
    "SPEC decision K-EFF-6/K-EFF-3a: commit.gpgSign (or tag.gpgSign, log.showSignature) set in a config makes every git commit sign with the user's key, derived as a plain write",
  // git commit with commit.gpgSign=true runs gpg with the user's secret key as `commit -S` does
  // (now opaque). The key names no program, so a config holding it leaves `git commit` exact. In
  // the human's ~/.gitconfig K-EFF-6 trusts it; written into the repository's config (after an
  // approved `git config commit.gpgsign true`, whose plan shows only `fs_write .git/config`) it
  // signs every later agent commit. Needs deciding: is signing with the user's key `secret_use`
  // or opaque whatever config asks for it, or only when the repository's config does?
  ignore: true,
  fn: async () => {
    await withTempDir(async (root) => {
      assert.equal(await run("git init -q && git config commit.gpgsign true", root, root), 0);
      const kinds = derive("git commit -m x", root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque") || kinds.includes("secret_use"), `${kinds}`);
    });
  },
});

Deno.test("K-EFF-3a: a curl long option the table does not know (--ssl-sessions FILE, curl 8.12) is opaque", () => {
  // curl 8.12's `--ssl-sessions FILE` saves session tickets into FILE: the parser took any long
  // option it did not know as a flag, so `--ssl-sessions=sess URL` was a connection alone (and
  // `--ssl-sessions sess URL` a connection to host "sess").
  for (const src of ["curl --ssl-sessions=sess http://h/", "curl --ssl-sessions sess http://h/"]) {
    const kinds = derive(src, "/w", "/home/me").map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
  }
  for (
    const src of [
      "curl -fsSL https://h/x",
      "curl --silent --show-error --location --fail https://h/",
      "curl --compressed -H 'Accept: x' --retry 3 --max-time 5 https://h/",
      "curl -X POST --json '{}' --no-progress-meter https://h/",
      "curl --http2 --tlsv1.2 -k https://h/",
    ]
  ) {
    assert.deepEqual(derive(src, "/w", "/home/me").map((e) => e.kind), [
      "proc_spawn",
      "net_connect",
    ], src);
  }
  // a pinned key given as a file is read
  const pinned = derive("curl --pinnedpubkey k.pem https://h/", "/w", "/home/me");
  assert.deepEqual(pathsOf(pinned, "fs_read"), ["/w/k.pem"]);
});

Deno.test("K-EFF-3a: a wget long option the table does not know (wget2's --stats-site=csv:FILE) is opaque", () => {
  // wget2, installed as wget by some systems, writes its statistics into FILE with
  // `--stats-site=csv:FILE`: any long option not known was taken as a flag and passed unseen.
  for (
    const src of ["wget --stats-site=csv:out https://h/x", "wget --stats-dns=out -O o https://h/x"]
  ) {
    const kinds = derive(src, "/w", "/home/me").map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
  }
  for (
    const src of [
      "wget -q -O out https://h/x",
      "wget --no-verbose --tries=3 --timeout=10 -O out https://h/x",
      "wget --no-check-certificate --progress=dot:giga -O o https://h/x",
      "wget --no-clobber --content-disposition -P dl https://h/x",
    ]
  ) {
    const kinds = derive(src, "/w", "/home/me").map((e) => e.kind);
    assert.ok(!kinds.includes("opaque"), `${src}: ${kinds}`);
  }
  assert.deepEqual(
    pathsOf(derive("wget --pinnedpubkey=k.pem -O o https://h/", "/w", "/home/me"), "fs_read"),
    ["/w/k.pem"], // and no ~/.netrc, which /home/me does not hold
  );
});

Deno.test({
  name:
    "SPEC decision K-EFF-3a ln/P-EVAL-1: a hard link made by one exec lets the next read (cat proj/k) a file outside the read grants, as a read of proj/k",
  // `ln ~/secret proj/k` is fs_write [proj/k] (the K-EFF-3a table) and `cat proj/k` a read of
  // proj/k, both in a project agent's grants, while the run prints ~/secret (one inode). A write
  // through a file with several links is opaque already; a read is not. Unsandboxed (or tier D)
  // nothing else stops it; in the sandbox link(2) across its bind mounts fails. Needs deciding:
  // does `ln` (hard) read its target, or is a read of a file with several links opaque too?
  ignore: true,
  fn: async () => {
    await withTempDir(async (root) => {
      const [proj, home] = [`${root}/proj`, `${root}/home`];
      Deno.mkdirSync(proj);
      Deno.mkdirSync(home);
      Deno.writeTextFileSync(`${home}/secret`, "s3cr3t\n");
      const reads = pathsOf(derive(`ln ${home}/secret k`, proj, home), "fs_read");
      assert.equal(await run(`ln ${home}/secret k`, proj, home), 0);
      const effects = derive("cat k", proj, home);
      const named = reads.includes(`${home}/secret`) ||
        pathsOf(effects, "fs_read").includes(`${home}/secret`) ||
        effects.some((e) => e.kind === "opaque");
      assert.ok(named, `ln: ${JSON.stringify(reads)}; cat k: ${JSON.stringify(effects)}`);
    });
  },
});

Deno.test("K-EFF-6: LD_DEBUG_OUTPUT (any LD_*) or GCONV_PATH an earlier exec changed makes every program opaque", async () => {
  // With LD_DEBUG=files LD_DEBUG_OUTPUT=FILE exported by an earlier exec, `ls` makes FILE.<pid>
  // (the loader's log; real run below); only LD_PRELOAD, LD_AUDIT and LD_LIBRARY_PATH counted, so
  // `ls` stayed an exact read. GCONV_PATH makes glibc load iconv modules from where it says.
  await withTempDir(async (root) => {
    const env = { LD_DEBUG: "files", LD_DEBUG_OUTPUT: `${root}/out/log` };
    Deno.mkdirSync(`${root}/out`);
    await run("ls", root, root, env);
    assert.ok([...Deno.readDirSync(`${root}/out`)].length > 0, "the loader wrote no log");
    for (const [name, value] of [...Object.entries(env), ["GCONV_PATH", `${root}/g`]]) {
      const kinds = derive("ls", root, root, { [name]: value }, [name]).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${name}: ${kinds}`);
    }
    const kinds = derive("GCONV_PATH=g cat f", root, root).map((e) => e.kind);
    assert.ok(kinds.includes("opaque"), `GCONV_PATH=g cat f: ${kinds}`);
    // inherited unchanged, they are the human's
    assert.deepEqual(derive("ls", root, root, env).map((e) => e.kind), ["fs_read", "proc_spawn"]);
  });
});

Deno.test("K-EFF-3: a link in /dev/shm is resolved like any other: cat /dev/shm/L names what L leads to", async () => {
  // Every /dev path was taken as a device and named as written, so with /dev/shm/L a link to a
  // secret, `cat /dev/shm/L` (and `echo x >> /dev/shm/L`) named only /dev/shm/L: a principal
  // that may use /dev/shm/** read and wrote any file through a link it put there.
  let shm: string;
  try {
    shm = Deno.makeTempDirSync({ dir: "/dev/shm", prefix: "shoal-test-" });
  } catch {
    return; // no /dev/shm here
  }
  try {
    await withTempDir((root) => {
      Deno.writeTextFileSync(`${root}/secret`, "s3cr3t\n");
      Deno.symlinkSync(`${root}/secret`, `${shm}/L`);
      for (const [src, kind] of [[`cat ${shm}/L`, "fs_read"], [`echo x >> ${shm}/L`, "fs_write"]]) {
        assert.deepEqual(pathsOf(derive(src, root, root), kind), [`${root}/secret`], src);
      }
      assert.deepEqual(pathsOf(derive(`rm ${shm}/L`, root, root), "fs_delete"), [`${shm}/L`]);
      assert.deepEqual(derive("cat /dev/null", root, root), [{
        kind: "proc_spawn",
        argv0: "cat",
        bin_hash: null,
      }]);
    });
  } finally {
    Deno.removeSync(shm, { recursive: true });
  }
});

Deno.test('K-EFF-3: $"…" is translated through a message catalog the environment names: a dynamic word', async () => {
  // With TEXTDOMAINDIR, TEXTDOMAIN and LANGUAGE exported by an earlier exec (env_write), bash
  // prints `$"build"` as what the catalog says (msgfmt-made catalog: /…/victim); it was taken as
  // the text `build`, so `rm -rf $"build"` was a delete of ./build alone.
  await withTempDir(async (root) => {
    for (const src of ['rm -rf $"build"', 'cat $"f"']) {
      const kinds = derive(src, root, root).map((e) => e.kind);
      assert.ok(kinds.includes("opaque"), `${src}: ${kinds}`);
    }
    assert.deepEqual(pathsOf(derive('rm $"a$(touch w)"', root, root), "fs_write"), [`${root}/w`]);
    assert.deepEqual(derive('echo $"hello"', root, root), []);
    if (!installed("msgfmt")) return;
    Deno.mkdirSync(`${root}/mo/en/LC_MESSAGES`, { recursive: true });
    Deno.writeTextFileSync(
      `${root}/mo/x.po`,
      `msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "build"\nmsgstr "${root}/victim"\n`,
    );
    assert.equal(await run("msgfmt -o mo/en/LC_MESSAGES/evil.mo mo/x.po", root, root), 0);
    const env = {
      TEXTDOMAINDIR: `${root}/mo`,
      TEXTDOMAIN: "evil",
      LANGUAGE: "en",
      LC_MESSAGES: "C.UTF-8",
    };
    const { stdout } = await new Deno.Command("bash", {
      args: ["--noprofile", "--norc", "-c", 'echo $"build"'],
      env: { HOME: root, PATH, ...env },
      clearEnv: true,
    }).output();
    // a system without the C.UTF-8 locale translates nothing
    const printed = new TextDecoder().decode(stdout).trim();
    assert.ok(printed === "build" || printed === `${root}/victim`, printed);
  });
});
