/**
 * Known-command table entries (K-EFF-3a), second round: jq filters and options, and other tabled
 * commands, against what the real programs do, beside the everyday forms that stay exact.
 */
import assert from "node:assert/strict";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { withTempDir } from "../../_support/temp_dir.ts";

const PATH = "/usr/bin:/bin";

/** The effects derived for `src` in `cwd` with HOME `home`. */
function derive(src: string, cwd: string, home: string): Effect[] {
  const state = {
    cwd,
    env: { HOME: home, PATH },
    changedEnv: new Set<string>(),
    home,
    sessionCommands: new Set<string>(),
  };
  return deriveEffects(parseBash(src), src, state).effects;
}

/** Runs `src` in a plain bash in `cwd` with HOME `home` and `env`; its standard output. */
async function output(src: string, cwd: string, home: string, env: Record<string, string> = {}) {
  const { stdout } = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-c", src],
    cwd,
    env: { HOME: home, PATH, ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(stdout);
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

Deno.test("K-EFF-3a: jq reads the environment through `$ ENV` (space or comment after $) and after --argfile NAME FILE", async () => {
  // jq's grammar takes `$` and the name as two tokens: `$ ENV` and `$ # c⏎ENV` are `$ENV`; and
  // `--argfile v f` takes two words, so the filter is the word after them. Both were derived as
  // reading no variable.
  await withTempDir(async (root) => {
    Deno.writeTextFileSync(`${root}/f`, "1\n");
    for (
      const src of [
        "jq -n '$ ENV.FOO'",
        "jq -n '$ # c\nENV.FOO'",
        "jq -n --argfile v f '$ENV.FOO'",
      ]
    ) {
      if (installed("jq")) {
        assert.match(await output(src, root, root, { FOO: "s3cr3t" }), /s3cr3t/, src);
      }
      const effects = derive(src, root, root);
      const reads = effects.some((e) => e.kind === "env_read" && e.names.includes("*"));
      assert.ok(
        reads || effects.some((e) => e.kind === "opaque"),
        `${src}: ${JSON.stringify(effects)}`,
      );
    }
    // modulemeta loads the module it is given from jq's search path (~/.jq, …), as import does
    const meta = derive(`jq -n '"m" | modulemeta'`, root, root);
    assert.ok(meta.some((e) => e.kind === "opaque"), JSON.stringify(meta));
    // everyday forms stay exact
    assert.deepEqual(derive("jq -r .name f", root, root).map((e) => e.kind), [
      "fs_read",
      "proc_spawn",
    ]);
    assert.deepEqual(derive("jq -n --argfile v f '$v'", root, root)[0], {
      kind: "fs_read",
      paths: [`${root}/f`],
    });
  });
});

Deno.test("K-EFF-3a: file -z/-Z runs the decompressor a file's magic names (zstd, lzip…) found along PATH: opaque", async () => {
  // file 5.44 decompresses gzip, bzip2 and xz itself but forks `zstd -cd`, `lzip -cdq`, … for
  // the rest, searched along PATH: a program the derivation did not name. It was a plain read.
  await withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/bin`);
    Deno.writeTextFileSync(`${root}/bin/zstd`, `#!/bin/sh\ntouch "${root}/ran"\n`);
    Deno.chmodSync(`${root}/bin/zstd`, 0o755);
    Deno.writeFileSync(`${root}/y.zst`, new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5, 6]));
    if (installed("file")) {
      await output("file -z y.zst", root, root, { PATH: `${root}/bin:${PATH}` });
      assert.ok(Deno.statSync(`${root}/ran`).isFile, "file -z ran zstd");
    }
    for (
      const src of ["file -z y.zst", "file -Z y.zst", "file -bz y.zst", "file --uncompress y.zst"]
    ) {
      const effects = derive(src, root, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    assert.deepEqual(derive("file -b y.zst", root, root)[0], {
      kind: "fs_read",
      paths: [`${root}/y.zst`],
    });
  });
});

Deno.test("K-EFF-3a: git merge/rebase -s NAME (or pull.twohead NAME in the config) runs git-merge-NAME found along PATH: opaque", async () => {
  // git has ort, recursive, resolve, octopus, ours and subtree in itself; any other strategy is
  // the program `git-merge-NAME`, looked up along PATH. `git merge -s foo b` ran it and was
  // derived as an fs_write of the work tree, as was `git merge b` with pull.twohead=foo.
  await withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/bin`);
    Deno.writeTextFileSync(`${root}/bin/git-merge-foo`, `#!/bin/sh\ntouch "${root}/ran"\nexit 1\n`);
    Deno.chmodSync(`${root}/bin/git-merge-foo`, 0o755);
    const repo = `${root}/r`;
    const git = "git -c user.email=a@b -c user.name=a";
    await output(
      `git init -q r && cd r && ${git} commit -q --allow-empty -m a && git branch b && ` +
        `${git} commit -q --allow-empty -m c && git checkout -q b && ` +
        `${git} commit -q --allow-empty -m d && git checkout -q -`,
      root,
      root,
    );
    await output(`${git} merge -s foo b`, repo, root, { PATH: `${root}/bin:${PATH}` });
    assert.ok(Deno.statSync(`${root}/ran`).isFile, "git merge -s foo ran git-merge-foo");
    for (
      const src of [
        "git merge -s foo b",
        "git merge --strategy=foo b",
        "git merge -nsfoo b",
        "git rebase --strategy foo b",
      ]
    ) {
      const effects = derive(src, repo, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    for (
      const src of [
        "git merge b",
        "git merge -s ort b",
        "git rebase -X theirs b",
        "git merge -m x b",
      ]
    ) {
      const effects = derive(src, repo, root);
      assert.ok(!effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    await output("git merge --abort; git config pull.twohead foo", repo, root);
    const effects = derive("git merge b", repo, root);
    assert.ok(effects.some((e) => e.kind === "opaque"), JSON.stringify(effects));
  });
});

/** A repository in `root`/r whose tag `s` carries a (made up) PGP signature; its git command prefix. */
async function signedTagRepo(root: string): Promise<string> {
  const git = "git -c user.email=a@b -c user.name=a";
  await output(
    `git init -q r && cd r && ${git} commit -q --allow-empty -m a && ` +
      `${git} commit -q --allow-empty -m c && ` +
      `printf 'object %s\\ntype commit\\ntag s\\ntagger a <a@b> 1700000000 +0000\\n\\nm\\n` +
      `-----BEGIN PGP SIGNATURE-----\\n\\niQEzBAABCAAdFiEE\\n=abcd\\n-----END PGP SIGNATURE-----\\n' ` +
      `"$(git rev-parse HEAD)" > ../tag && git update-ref refs/tags/s "$(git hash-object -t tag -w ../tag)"`,
    root,
    root,
  );
  Deno.mkdirSync(`${root}/bin`);
  Deno.writeTextFileSync(`${root}/bin/gpg`, `#!/bin/sh\ntouch "${root}/ran"\nexit 1\n`);
  Deno.chmodSync(`${root}/bin/gpg`, 0o755);
  return git;
}

Deno.test("K-EFF-3a: git tag -v (verify) runs gpg on the tags it names, as --verify does: opaque", async () => {
  // `git tag -v s` ran gpg (along PATH) on the signed tag s; it was derived as an exact write.
  await withTempDir(async (root) => {
    await signedTagRepo(root);
    await output("git tag -v s", `${root}/r`, root, { PATH: `${root}/bin:${PATH}` });
    assert.ok(Deno.statSync(`${root}/ran`).isFile, "git tag -v ran gpg");
    for (const src of ["git tag -v s", "git tag -lv s", "git tag --verify s"]) {
      const effects = derive(src, `${root}/r`, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    for (const src of ["git tag -l", "git tag -n s2", "git tag -d s"]) {
      const effects = derive(src, `${root}/r`, root);
      assert.ok(!effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
  });
});

Deno.test({
  name:
    "SPEC decision K-EFF-3a: git merge TAG runs gpg when TAG is a signed tag (what the repository holds, not the words), derived as a plain write",
  // `git merge --no-edit s`, s a signed tag, ran gpg (along PATH) to verify it for the merge
  // message, even as a fast-forward. Nothing in the words says so: the analysis would have to
  // read refs/tags (and packed-refs) to see that an operand names a tag, as it reads config and
  // hooks. Needs deciding: opaque for any merge operand naming a tag, or verification with the
  // user's keyring left to run (like `log.showSignature` in the ignored test of the first round).
  ignore: true,
  fn: async () => {
    await withTempDir(async (root) => {
      const git = await signedTagRepo(root);
      await output(`git checkout -q -b t2 HEAD~1 && ${git} merge --no-edit s`, `${root}/r`, root, {
        PATH: `${root}/bin:${PATH}`,
      });
      assert.ok(Deno.statSync(`${root}/ran`).isFile, "git merge s ran gpg");
      const effects = derive("git merge --no-edit s", `${root}/r`, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), JSON.stringify(effects));
    });
  },
});

Deno.test("K-EFF-3a: less +CMD runs CMD as typed keys on each file: `+!cmd⏎` runs a shell command, opaque", async () => {
  // On a terminal (a pty exec), `less $'+!touch ran\n' f` ran `touch ran`; the `+!…` word was
  // derived as one more file read. Moving and searching at start (`+G`, `+F`, `+42`,
  // `+/pattern`) stay exact.
  await withTempDir(async (root) => {
    Deno.writeTextFileSync(`${root}/f`, "f\n");
    if (installed("less") && installed("script")) {
      const inner = `timeout 5 less $'+!touch ${root}/ran\\n' f`;
      await output(`script -qc ${JSON.stringify(inner)} /dev/null`, root, root, {
        TERM: "xterm",
        SHELL: "/bin/bash",
      });
      assert.ok(Deno.statSync(`${root}/ran`).isFile, "less +!cmd ran cmd");
    }
    for (
      const src of ["less $'+!touch ran\\n' f", "less '+|.cat' f", "less '++sx' f", "less +v f"]
    ) {
      const effects = derive(src, root, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    for (const src of ["less +G f", "less +F f", "less +42 f", "less '+/foo bar' f", "less -R f"]) {
      assert.deepEqual(derive(src, root, root)[0], { kind: "fs_read", paths: [`${root}/f`] }, src);
    }
  });
});

Deno.test("K-EFF-3a: cp --parents SRC/F DST writes DST/SRC/F, through a link DST/SRC already is", async () => {
  // With dst/src a link to a directory outside, `cp --parents src/x dst` wrote outside/x; it was
  // derived as a write of dst only (plain `cp src/x dst/src/` names outside).
  await withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/w/src`, { recursive: true });
    Deno.mkdirSync(`${root}/w/dst`);
    Deno.mkdirSync(`${root}/outside`);
    Deno.writeTextFileSync(`${root}/w/src/x`, "x\n");
    Deno.symlinkSync(`${root}/outside`, `${root}/w/dst/src`);
    await output("cp --parents src/x dst", `${root}/w`, root);
    assert.ok(Deno.statSync(`${root}/outside/x`).isFile, "cp --parents wrote through dst/src");
    for (
      const src of ["cp --parents src/x dst", "cp --par -t dst src/x", "cp -r --parents src/x dst"]
    ) {
      const effects = derive(src, `${root}/w`, root);
      const writes = effects.flatMap((e) => e.kind === "fs_write" ? e.paths : []);
      const named = writes.some((p) => p === `${root}/outside` || p.startsWith(`${root}/outside/`));
      assert.ok(
        named || effects.some((e) => e.kind === "opaque"),
        `${src}: ${JSON.stringify(effects)}`,
      );
    }
    // no link on the way: exact, and a plain cp keeps its form
    const plain = derive("cp --parents src/x new", `${root}/w`, root);
    assert.ok(!plain.some((e) => e.kind === "opaque"), JSON.stringify(plain));
    assert.ok(
      plain.some((e) =>
        e.kind === "fs_write" && e.paths.some((p) => p.startsWith(`${root}/w/new`))
      ),
    );
    assert.deepEqual(derive("cp src/x new", `${root}/w`, root)[1], {
      kind: "fs_write",
      paths: [`${root}/w/new`],
    });
  });
});

Deno.test("K-EFF-3: /proc/PID/root, /proc/PID/cwd and /proc/self/fd/N/… lead into the file system: the path is resolved or opaque", async () => {
  // `cat /proc/self/root/HOME/secret` printed the secret and was derived as a read of
  // "/proc/self/root/HOME/secret", a path no rule on HOME matches; likewise a write through
  // /proc/self/cwd. Plain /proc and /dev files stay as they are.
  await withTempDir(async (root) => {
    Deno.writeTextFileSync(`${root}/secret`, "s3cr3t\n");
    assert.match(await output(`cat /proc/self/root${root}/secret`, root, root), /s3cr3t/);
    for (
      const src of [
        `cat /proc/self/root${root}/secret`,
        `cat /proc/1/root${root}/secret`,
        `cat /proc/thread-self/root${root}/secret`,
        `cat /proc/self/task/1/root${root}/secret`,
        "tee /proc/self/cwd/secret",
        "rm /proc/self/cwd/secret",
        "cat /dev/fd/3/secret",
        "ls /proc/self/root",
      ]
    ) {
      const effects = derive(src, root, root);
      const named = effects.some((e) =>
        (e.kind === "fs_read" || e.kind === "fs_write" || e.kind === "fs_delete") &&
        e.paths.includes(`${root}/secret`)
      );
      assert.ok(
        named || effects.some((e) => e.kind === "opaque"),
        `${src}: ${JSON.stringify(effects)}`,
      );
    }
    for (const src of ["cat /proc/cpuinfo", "cat /proc/self/status", "head /proc/self/fd/3"]) {
      const effects = derive(src, root, root);
      assert.ok(!effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
  });
});

Deno.test("K-EFF-3: reading /proc/PID/environ reads a process's whole environment: env_read [*]", async () => {
  // `cat /proc/self/environ` printed every variable of the run (a token in the environment
  // too) and was derived as a read of that file alone: env_read grants never saw it.
  await withTempDir(async (root) => {
    assert.match(await output("cat /proc/self/environ", root, root, { TOKEN: "s3cr3t" }), /s3cr3t/);
    for (
      const src of [
        "cat /proc/self/environ",
        "strings < /proc/1/environ",
        "cat /proc/self/task/1/environ",
      ]
    ) {
      const effects = derive(src, root, root);
      const reads = effects.some((e) => e.kind === "env_read" && e.names.includes("*"));
      assert.ok(reads, `${src}: ${JSON.stringify(effects)}`);
    }
  });
});

Deno.test("K-EFF-3a: curl --engine NAME loads an OpenSSL engine, a shared library a path names: opaque", async () => {
  // `curl --engine /tmp/x.so URL` ran the library's constructor (curl 7.88, OpenSSL 3); it was
  // derived as the connection alone.
  await withTempDir(async (root) => {
    if (installed("gcc") && installed("curl")) {
      Deno.writeTextFileSync(
        `${root}/e.c`,
        `#include <stdio.h>\n__attribute__((constructor)) static void init(void) {` +
          ` FILE *f = fopen("${root}/ran", "w"); if (f) fclose(f); }\n`,
      );
      await output("gcc -shared -fPIC -o e.so e.c", root, root);
      await output(
        `timeout 20 curl --engine ${root}/e.so -s -o /dev/null http://127.0.0.1:1/`,
        root,
        root,
      );
      assert.ok(Deno.statSync(`${root}/ran`).isFile, "curl --engine loaded e.so");
    }
    for (
      const src of [
        `curl --engine ${root}/e.so https://a.example`,
        "curl --engine=pkcs11 https://a.example",
      ]
    ) {
      const effects = derive(src, root, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    const plain = derive("curl -s https://a.example", root, root);
    assert.ok(!plain.some((e) => e.kind === "opaque"), JSON.stringify(plain));
  });
});

Deno.test("K-EFF-6: OPENSSL_CONF (OPENSSL_MODULES, OPENSSL_ENGINES) set for curl or changed in the session loads the providers it names: opaque", async () => {
  // OPENSSL_CONF naming a config whose provider section names /tmp/x.so made curl load and run
  // x.so; `OPENSSL_CONF=c curl URL` was the connection alone, and so was a curl after the
  // session's OPENSSL_CONF changed.
  await withTempDir(async (root) => {
    if (installed("gcc") && installed("curl")) {
      Deno.writeTextFileSync(
        `${root}/e.c`,
        `#include <stdio.h>\n__attribute__((constructor)) static void init(void) {` +
          ` FILE *f = fopen("${root}/ran", "w"); if (f) fclose(f); }\n`,
      );
      await output("gcc -shared -fPIC -o e.so e.c", root, root);
      Deno.writeTextFileSync(
        `${root}/c.cnf`,
        `openssl_conf = init\n[init]\nproviders = prov\n[prov]\ne = e_sect\n[e_sect]\n` +
          `module = ${root}/e.so\nactivate = 1\n`,
      );
      await output(
        `OPENSSL_CONF=${root}/c.cnf timeout 20 curl -s -o /dev/null http://127.0.0.1:1/`,
        root,
        root,
      );
      assert.ok(Deno.statSync(`${root}/ran`).isFile, "curl loaded the provider");
    }
    for (
      const src of [
        "OPENSSL_CONF=c.cnf curl https://a.example",
        "export OPENSSL_MODULES=m; curl https://a.example",
        "OPENSSL_ENGINES=e wget https://a.example",
      ]
    ) {
      const effects = derive(src, root, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    const state = {
      cwd: root,
      env: { HOME: root, PATH, OPENSSL_CONF: `${root}/c.cnf` },
      changedEnv: new Set(["OPENSSL_CONF"]),
      home: root,
      sessionCommands: new Set<string>(),
    };
    const src = "curl https://a.example";
    const changed = deriveEffects(parseBash(src), src, state).effects;
    assert.ok(changed.some((e) => e.kind === "opaque"), JSON.stringify(changed));
  });
});

Deno.test({
  name:
    "SPEC decision K-EFF-3a: curl -L and wget (which follows redirects by default) connect to whatever host a redirect names, derived as the URL's host alone",
  // A server at 127.0.0.1 answering 302 Location: http://localhost:PORT/ made `curl -L` and
  // `wget` connect to localhost too; the table names only the operand's host:port. Needs
  // deciding: opaque for following redirects (curl -L; wget unless --max-redirect=0), or the
  // operand's host stands for the transfer (redirects being the server's choice, as DNS is).
  ignore: true,
  fn: async () => {
    await withTempDir(async (root) => {
      let hits = 0;
      const target = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
        hits++;
        return new Response("ok");
      });
      const location = `http://localhost:${target.addr.port}/`;
      const origin = Deno.serve(
        { port: 0, hostname: "127.0.0.1", onListen() {} },
        () => new Response(null, { status: 302, headers: { location } }),
      );
      try {
        const url = `http://127.0.0.1:${origin.addr.port}/`;
        await output(`timeout 20 curl -sL -o /dev/null ${url}`, root, root);
        assert.ok(hits > 0, "curl -L followed the redirect to localhost");
        for (const src of [`curl -L ${url}`, `wget -q ${url}`]) {
          const effects = derive(src, root, root);
          assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
        }
      } finally {
        await origin.shutdown();
        await target.shutdown();
      }
    });
  },
});

Deno.test("K-EFF-3a: wget -N/-c rewrites (or appends to) the file named after the URL in place, through a link there", async () => {
  // With L a link to ../out/f, `wget -N http://h/L` wrote the server's L into out/f and
  // `wget -c` appended to it; both were derived as a write of the cwd alone (plain wget makes L.1).
  await withTempDir(async (root) => {
    Deno.mkdirSync(`${root}/w`);
    Deno.mkdirSync(`${root}/out`);
    Deno.mkdirSync(`${root}/srv`);
    Deno.writeTextFileSync(`${root}/srv/L`, "fromserver\n");
    Deno.writeTextFileSync(`${root}/out/f`, "orig\n");
    Deno.utimeSync(`${root}/out/f`, 946684800, 946684800);
    Deno.symlinkSync(`${root}/out/f`, `${root}/w/L`);
    const server = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      () =>
        new Response(Deno.readFileSync(`${root}/srv/L`), {
          headers: { "last-modified": new Date().toUTCString() },
        }),
    );
    try {
      const url = `http://127.0.0.1:${server.addr.port}/L`;
      if (installed("wget")) {
        await output(`timeout 20 wget -q -N ${url}`, `${root}/w`, root);
        assert.equal(
          Deno.readTextFileSync(`${root}/out/f`),
          "fromserver\n",
          "wget -N wrote through L",
        );
      }
      for (const src of [`wget -N ${url}`, `wget -c ${url}`, `wget --timestamping -q ${url}`]) {
        const effects = derive(src, `${root}/w`, root);
        const writes = effects.flatMap((e) => e.kind === "fs_write" ? e.paths : []);
        const named = writes.includes(`${root}/out/f`);
        assert.ok(
          named || effects.some((e) => e.kind === "opaque"),
          `${src}: ${JSON.stringify(effects)}`,
        );
      }
      // no link where the file goes: exact
      const plain = derive(`wget -N http://127.0.0.1:${server.addr.port}/x.tgz`, `${root}/w`, root);
      assert.ok(!plain.some((e) => e.kind === "opaque"), JSON.stringify(plain));
    } finally {
      await server.shutdown();
    }
  });
});

Deno.test("K-EFF-3a: curl -P/--ftp-port and wget --no-passive-ftp listen for the server's data connection: opaque", async () => {
  // Active FTP: `curl -P - ftp://h/f` bound and listened on a port (strace: listen(6, 1)) for the
  // server to connect back, as did `wget --no-passive-ftp`; both were derived as h:21 alone.
  await withTempDir(async (root) => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const url = `ftp://127.0.0.1:${listener.addr.port}/f`;
    const seen: string[] = [];
    const serving = (async () => {
      const conn = await listener.accept();
      const send = (line: string) => conn.write(new TextEncoder().encode(`${line}\r\n`));
      await send("220 hi");
      const buf = new Uint8Array(4096);
      for (let n; (n = await conn.read(buf)) !== null;) {
        for (const line of new TextDecoder().decode(buf.subarray(0, n)).split("\r\n")) {
          const cmd = line.split(" ")[0].toUpperCase();
          if (cmd === "") continue;
          seen.push(cmd);
          const replies: Record<string, string> = {
            USER: "331 ok",
            PASS: "230 ok",
            PWD: '257 "/"',
          };
          await send(cmd === "EPRT" || cmd === "PORT" ? "500 no" : replies[cmd] ?? "200 ok");
          if (cmd === "EPRT" || cmd === "PORT") {
            conn.close();
            return;
          }
        }
      }
      conn.close();
    })();
    try {
      if (installed("curl")) {
        await output(`timeout 20 curl -s -P - ${url}`, root, root);
        await serving;
        // curl names the port it listens on in EPRT (or PORT)
        assert.ok(seen.includes("EPRT") || seen.includes("PORT"), seen.join(","));
      }
    } finally {
      listener.close();
    }
    for (
      const src of [
        `curl -P - ${url}`,
        `curl --ftp-port 127.0.0.1 ${url}`,
        `wget --no-passive-ftp ${url}`,
      ]
    ) {
      const effects = derive(src, root, root);
      assert.ok(effects.some((e) => e.kind === "opaque"), `${src}: ${JSON.stringify(effects)}`);
    }
    const plain = derive(`curl -s ${url}`, root, root);
    assert.ok(!plain.some((e) => e.kind === "opaque"), JSON.stringify(plain));
  });
});

Deno.test("K-EFF-3a: wget reads ~/.netrc by default (not after --no-netrc, nor when there is none) and sends its password to the host that asks", async () => {
  // With HOME/.netrc naming 127.0.0.1, `wget URL` answered a 401 with the password from it; it
  // was derived as no read of ~/.netrc (curl reads it only with -n, which was already named).
  await withTempDir(async (root) => {
    Deno.writeTextFileSync(`${root}/.netrc`, "machine 127.0.0.1 login u password s3cr3t\n");
    Deno.chmodSync(`${root}/.netrc`, 0o600);
    const seen: string[] = [];
    const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
      const auth = request.headers.get("authorization");
      seen.push(auth ?? "");
      return auth === null
        ? new Response(null, { status: 401, headers: { "www-authenticate": 'Basic realm="x"' } })
        : new Response("ok");
    });
    try {
      const url = `http://127.0.0.1:${server.addr.port}/`;
      if (installed("wget")) {
        await output(`timeout 20 wget -q -O /dev/null ${url}`, root, root);
        assert.ok(seen.includes(`Basic ${btoa("u:s3cr3t")}`), seen.join(","));
      }
      for (const src of [`wget -q -O /dev/null ${url}`, `wget ${url}`]) {
        const effects = derive(src, root, root);
        const reads = effects.flatMap((e) => e.kind === "fs_read" ? e.paths : []);
        assert.ok(reads.includes(`${root}/.netrc`), `${src}: ${JSON.stringify(effects)}`);
      }
      const off = derive(`wget --no-netrc -O /dev/null ${url}`, root, root);
      assert.ok(!off.some((e) => e.kind === "fs_read"), JSON.stringify(off));
      // without a ~/.netrc wget reads none: the read named every wget, denied to the project
      // profile (whose grants hold no HOME) even with the destination granted
      Deno.removeSync(`${root}/.netrc`);
      const none = derive(`wget -q -O /dev/null ${url}`, root, root);
      assert.ok(!none.some((e) => e.kind === "fs_read"), JSON.stringify(none));
    } finally {
      await server.shutdown();
    }
  });
});
