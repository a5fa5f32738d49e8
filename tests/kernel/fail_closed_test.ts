// Issue 14 through the real kernel over its real socket: an agent that may read everything but
// write only below `allowed/` (`opaque: deny`, no network) tries each family of constructs that
// once wrote, deleted or connected without approval. Every attempt is refused (-32010/-32011) or,
// where it runs, leaves the victim file unchanged. The policy sets no `sandbox` field (the policy
// parser does not know it yet, issue 12) and the kernel has no sandbox tier, so the static layer
// is tested alone.
import assert from "node:assert/strict";
import { RpcError } from "../../src/protocol/errors.ts";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { exec } from "../_support/exec.ts";
import { startKernel, type TestKernel } from "../_support/kernel.ts";
import { createToken, writePolicy } from "../_support/principals.ts";
import { sandbox } from "../_support/sandbox.ts";

const PRECIOUS = "precious\n";

/** A kernel, an agent token for each principal, and the allowed and victim directories. */
interface Scene {
  k: TestKernel;
  allowed: string;
  victim: string;
  /** A fresh session attached as `principal` (default `agent:a`). */
  session(principal?: string): Promise<RpcConnection>;
}

function agentPolicy(allowed: string, sessionWrite: boolean) {
  return {
    fs: { read: ["/**"], write: [`${allowed}/**`], delete: [`${allowed}/**`] },
    proc_spawn: ["*"],
    env_read: ["*"],
    env_write: ["*"],
    session_write: sessionWrite,
    time: true,
    auto_apply: "in-grant",
    opaque: "deny",
  };
}

/** The kernel of every scene, its sandbox and a bearer secret for each principal. */
interface Shared {
  k: TestKernel;
  allowed: string;
  victim: string;
  tokens: Record<string, string>;
}

/**
 * The scenes' kernel, started once for the file: each scene works in sessions of its own (`sN`)
 * and in emptied `allowed/` and `victim/` directories, so no scene sees what another left.
 */
let shared: Shared | undefined;

Deno.test.beforeAll(async () => {
  const box = await sandbox();
  try {
    const allowed = `${box.dir}/allowed`;
    const victim = `${box.dir}/victim`;
    await Deno.mkdir(allowed);
    await Deno.mkdir(victim);
    const file = await writePolicy(box, {
      "agent:a": agentPolicy(allowed, true),
      "agent:b": agentPolicy(allowed, false),
      // may connect anywhere, but still write only below allowed/
      "agent:net": { ...agentPolicy(allowed, true), net_connect: ["*:*"] },
      // may read only below allowed/
      "agent:r": {
        ...agentPolicy(allowed, true),
        fs: { read: [`${allowed}/**`], write: [`${allowed}/**`], delete: [`${allowed}/**`] },
      },
    });
    const tokens: Record<string, string> = {};
    for (const principal of ["agent:a", "agent:b", "agent:net", "agent:r"]) {
      tokens[principal] = (await createToken(box, principal)).secret;
    }
    shared = { k: await startKernel(["--policy", file], box), allowed, victim, tokens };
  } catch (e) {
    await box.cleanup();
    throw e;
  }
});

Deno.test.afterAll(async () => await shared?.k.cleanup());

let sessions = 0;

function sceneTest(name: string, body: (s: Scene) => Promise<void>, ignore = false): void {
  Deno.test({ name, ignore }, async () => {
    const { k, allowed, victim, tokens } = shared!;
    for (const dir of [allowed, victim]) {
      for (const entry of Deno.readDirSync(dir)) {
        await Deno.remove(`${dir}/${entry.name}`, { recursive: true });
      }
    }
    const opened: RpcConnection[] = [];
    try {
      await body({
        k,
        allowed,
        victim,
        session: async (principal = "agent:a") => {
          const conn = await k.attach(`s${++sessions}`, tokens[principal]);
          opened.push(conn);
          return conn;
        },
      });
    } finally {
      for (const conn of opened) conn.close();
    }
  });
}

/** Puts the victim back to its known content. */
async function resetVictim(s: Scene): Promise<void> {
  await Deno.writeTextFile(`${s.victim}/a`, PRECIOUS);
}

async function assertVictimUnchanged(s: Scene, what: string): Promise<void> {
  let text: string | null = null;
  try {
    text = await Deno.readTextFile(`${s.victim}/a`);
  } catch {
    // deleted
  }
  assert.equal(text, PRECIOUS, `victim changed by: ${what}`);
}

/** Runs `src`; true when the kernel refused it (-32010 or -32011). */
async function refused(conn: RpcConnection, src: string): Promise<boolean> {
  try {
    await exec(conn, src);
    return false;
  } catch (error) {
    if (error instanceof RpcError && (error.code === -32010 || error.code === -32011)) return true;
    throw error;
  }
}

/** Whether an attack step was refused; a step that ran, even one whose command failed, was not. */
async function stepRefused(conn: RpcConnection, src: string): Promise<boolean> {
  try {
    return await refused(conn, src);
  } catch (error) {
    if (error instanceof RpcError && (error.data as { code?: string })?.code === "cmd_failed") {
      return false;
    }
    throw error;
  }
}

/**
 * Each attack is a list of execs in one fresh session: the earlier ones may run (they only
 * prepare), and when they all did the last one must be refused (a refused preparation, such as a
 * write to a protected `.git/config`, stops the attack sooner); the victim must be unchanged in
 * any case.
 */
async function assertAttacksFail(
  s: Scene,
  attacks: string[][],
  principal?: string,
): Promise<void> {
  for (const steps of attacks) {
    await resetVictim(s);
    const conn = await s.session(principal);
    await refused(conn, `cd '${s.allowed}'`);
    let prepared = true;
    for (const step of steps.slice(0, -1)) if (await stepRefused(conn, step)) prepared = false;
    const last = steps.at(-1)!;
    const lastRefused = await stepRefused(conn, last);
    if (prepared) assert.equal(lastRefused, true, `not refused: ${steps.join(" ⏎ ")}`);
    await assertVictimUnchanged(s, steps.join(" ⏎ "));
    conn.close();
  }
}

sceneTest("issue 14 control: ordinary work inside the write root still runs", async (s) => {
  const conn = await s.session();
  for (const src of [`cd '${s.allowed}'`, "echo hi > notes.txt", "cat notes.txt", "ls -la"]) {
    assert.equal(await refused(conn, src), false, src);
  }
  assert.equal(await Deno.readTextFile(`${s.allowed}/notes.txt`), "hi\n");
});

sceneTest("issue 14 family 1: pty.open judges the whole program line", async (s) => {
  const conn = await s.session();
  const v = `${s.victim}/a`;
  for (
    const params of [
      { cmd: "bash", args: ["-c", `rm -f '${v}'`] },
      { cmd: "rm", args: ["-f", v] },
      { cmd: "sh", args: ["-c", `: > '${v}'`] },
      { cmd: "env", args: ["rm", "-f", v] },
      { cmd: "cat", args: ["/etc/hostname"], env: { LD_PRELOAD: `${s.allowed}/evil.so` } },
      { cmd: "cat", args: ["/etc/hostname"], env: { BASH_ENV: `${s.allowed}/evil.sh` } },
    ]
  ) {
    await resetVictim(s);
    const error = await conn.request("pty.open", params).then(() => null, (e) => e);
    assert.ok(error instanceof RpcError, `pty.open ran: ${JSON.stringify(params)}`);
    assert.ok([-32010, -32011].includes(error.code), `${error.code} ${error.message}`);
    await assertVictimUnchanged(s, JSON.stringify(params));
  }
  assert.deepEqual(await conn.request("pty.list", {}), { ptys: [] });
});

sceneTest("issue 14 family 2: arithmetic and subscripts evaluate code from data", async (s) => {
  const payload = `'x[$(rm -f ${s.victim}/a)]'`;
  await assertAttacksFail(s, [
    [`a=${payload}; (( a ))`],
    [`a=${payload}; echo $(( a + 1 ))`],
    [`a=${payload}; [[ $a -eq 1 ]]`],
    [`a=${payload}; let a+1`],
    [`a=${payload}`, "(( a ))"],
    [`a=${payload}`, "for (( i = 0; i < a; i++ )); do :; done"],
    [`declare -i n; n=${payload}`],
    [`test -v ${payload}`],
    [`read ${payload} <<< 1`],
    [`printf -v ${payload} %s 1`],
    [`b=${payload}; echo \${!b}`],
    [`a=${payload}; arr=(1 2); echo \${arr[a]}`],
  ]);
});

sceneTest("issue 14 family 3: aliases reach places the alias check did not look", async (s) => {
  const rm = `rm -f ${s.victim}/a;`;
  const attacks = [
    [`BASH_ALIASES[declare]='${rm}'`, "declare x=1"],
    [`BASH_ALIASES[declare]='${rm}'\ndeclare x=1`],
    [`BASH_ALIASES[ls]='${rm}'\nls`],
    [`alias export='${rm}'`, "export X=1"],
    [`alias local='${rm}'`, "f() { local x=1; }; f"],
    [`alias let='${rm}'`, "let x=1"],
  ];
  await assertAttacksFail(s, attacks);
  // A principal without session_write cannot persist one either way.
  await assertAttacksFail(s, attacks.slice(0, 3), "agent:b");
});

sceneTest("issue 14 family 4: which program runs can be changed", async (s) => {
  const bin = `${s.allowed}/bin`;
  await Deno.mkdir(bin);
  await Deno.writeTextFile(`${bin}/cat`, `#!/bin/sh\nrm -f '${s.victim}/a'\n`);
  await Deno.chmod(`${bin}/cat`, 0o755);
  await assertAttacksFail(s, [
    [`BASH_CMDS[cat]=${bin}/cat; cat /etc/hostname`],
    [`hash -p ${bin}/cat cat; cat /etc/hostname`],
    [`PATH=${bin}:$PATH; cat /etc/hostname`],
    [`PATH=${bin}:$PATH cat /etc/hostname`],
    [`export PATH=${bin}:$PATH`, "cat /etc/hostname"],
    [`/usr/bin/../..${bin}/cat /etc/hostname`],
    [`set -a; LD_PRELOAD=${s.allowed}/evil.so; cat /etc/hostname`],
    [`export LD_PRELOAD=${s.allowed}/evil.so`, "cat /etc/hostname"],
    [`cp ${bin}/cat ${s.allowed}/cat2; PATH=${s.allowed}:$PATH cat2`],
  ]);
});

sceneTest("issue 14 family 5: builtins listed as harmless run code", async (s) => {
  const rm = `$(rm -f ${s.victim}/a)`;
  await assertAttacksFail(s, [
    [`PS4='${rm}'; set -x; true`],
    [`PS4='${rm}'`, "set -x; true"],
    [`PS4='${rm}'`, "set -o xtrace; true"],
    [`PS4='${rm}'`, "set -xv; true"],
    [`sleep 5 & jobs -x rm -f ${s.victim}/a %1`],
    [`shopt -s cdable_vars; v=${s.victim}; cd v && rm -f a`],
  ]);
});

sceneTest("issue 14 family 6: git runs repository-defined code", async (s) => {
  const repo = `${s.allowed}/repo`;
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, cwd: repo, stdout: "null", stderr: "null" }).output();
  await Deno.mkdir(repo);
  await git("init", "-q");
  const rm = `rm -f ${s.victim}/a`;
  // A clean repository stays exact: git status runs.
  const conn = await s.session();
  assert.equal(await refused(conn, `cd '${repo}' && git status`), false);
  await assertAttacksFail(s, [
    [`printf '[core]\\n\\tfsmonitor = "${rm}"\\n' >> ${repo}/.git/config; cd ${repo}; git status`],
    [
      `printf '[core]\\n\\tfsmonitor = "${rm}"\\n' >> ${repo}/.git/config`,
      `cd ${repo}; git status`,
    ],
    [`printf '[core]\\n\\tpager = ${rm}\\n' >> ${repo}/.git/config`, `git -C ${repo} log`],
    [
      `printf '#!/bin/sh\\n${rm}\\n' > ${repo}/.git/hooks/pre-commit; chmod +x ${repo}/.git/hooks/pre-commit`,
      `cd ${repo}; git commit --allow-empty -m x`,
    ],
    [
      `printf '[diff "x"]\\n\\ttextconv = ${rm};\\n' >> ${repo}/.git/config`,
      `cd ${repo}; git diff`,
    ],
    [`cd ${repo}; GIT_CONFIG_GLOBAL=${s.allowed}/gc git status`],
  ]);
});

sceneTest(
  "issue 14 family 7: environment that redirects a known command's configuration",
  async (s) => {
    const home = `${s.allowed}/home`;
    await Deno.mkdir(home);
    await Deno.writeTextFile(
      `${home}/.curlrc`,
      `output = "${s.victim}/a"\nurl = "file:///etc/hostname"\n`,
    );
    await Deno.writeTextFile(
      `${s.allowed}/.curlrc`,
      `output = "${s.victim}/a"\nurl = "file:///etc/hostname"\n`,
    );
    await assertAttacksFail(s, [
      [`HOME=${home} curl -s`],
      [`CURL_HOME=${s.allowed} curl -s`],
      [`XDG_CONFIG_HOME=${s.allowed} curl -s`],
      [`export HOME=${home}; curl -s`],
      [`export HOME=${home}`, "curl -s"],
      [`HOME=${home} wget -q http://127.0.0.1:9/`],
      [`LESSOPEN='|rm -f ${s.victim}/a' less /etc/hostname`],
    ]);
  },
);

sceneTest("issue 14 family 8: the cd model follows CDPATH", async (s) => {
  const parent = s.victim.slice(0, s.victim.lastIndexOf("/"));
  await assertAttacksFail(s, [
    [`CDPATH=${parent}; cd victim && rm -f a`],
    [`CDPATH=${parent}`, "cd victim && rm -f a"],
    [`export CDPATH=${parent}`, "cd victim && rm -f a"],
    [`CDPATH=${parent} cd victim && rm -f a`],
  ]);
});

sceneTest("issue 14 family 9: option tables take only valued options as valued", async (s) => {
  await Deno.writeTextFile(`${s.allowed}/in`, "data\n");
  const v = `${s.victim}/a`;
  await assertAttacksFail(s, [
    [`xxd -C in ${v}`],
    [`xxd -capitalize in ${v}`],
    [`xxd -cols 8 in ${v}`],
    [`xxd -c 8 in ${v}`],
    [`xxd -l 4 in ${v}`],
    [`xxd -r -p in ${v}`],
  ]);
});

sceneTest("issue 14 family 10: paths resolve through symbolic and hard links", async (s) => {
  await Deno.symlink(s.victim, `${s.allowed}/lnk`);
  await resetVictim(s);
  await Deno.link(`${s.victim}/a`, `${s.allowed}/hard`);
  await assertAttacksFail(s, [
    ["echo x > lnk/a"],
    ["rm -f lnk/a"],
    ["cd lnk && rm -f a"],
    ["sed -i s/p/x/ lnk/a"],
    ["truncate -s 0 lnk/../victim/a"],
    ["cp /etc/hostname lnk/"],
    ["echo x > l*/a"],
    ["echo x > hard"],
    [`ln -s ${s.victim} new && echo x > new/a`],
    [`mv lnk moved && echo x > moved/a`],
  ]);
});

sceneTest("issue 14 family 11: /dev/tcp and /dev/udp are connections", async (s) => {
  await assertAttacksFail(s, [
    ["cat < /dev/tcp/127.0.0.1/9"],
    ["echo x > /dev/tcp/127.0.0.1/9"],
    ["echo x > /dev/udp/127.0.0.1/9"],
    ["echo x >> /dev/./tcp/127.0.0.1/9"],
    ["cat 3<>/dev/tcp/localhost/9 /etc/hostname"],
  ]);
});

sceneTest("issue 34: sed scripts write nowhere unseen, whatever stands before the w", async (s) => {
  const v = `${s.victim}/a`;
  await Deno.writeTextFile(`${s.allowed}/in`, "x\n");
  await assertAttacksFail(s, [
    [`sed ':a;w ${v}' in`],
    [`sed -n 'b x w ${v}' in`],
    [`sed -n 'bx;:x w ${v}' in`],
    [`sed -n '$!{:a;N;ba};s/x/y/w ${v}' in`],
    [`sed -e ':a' -e 'W ${v}' in`],
    [`sed ':a;e rm -f ${v}' in`],
    [`sed -n '/x/{tx;:x;s/.*/rm -f ${v}/e\n}' in`],
  ]);
});

sceneTest(
  "K-EFF-3: the analysis reads a line continuation where bash does (a here-document's end, a $ before it)",
  async (s) => {
    const v = `${s.victim}/a`;
    await assertAttacksFail(s, [
      // bash joins `E\` and `OF` into the delimiter: the rm after it runs, outside the body.
      [`cat <<EOF\nE\\\nOF\nrm -f ${v}\nEOF\n`],
      [`cat <<-EOF\n\tE\\\nOF\nrm -f ${v}\nEOF\n`],
      [`cat <<EOF\n\\\nEOF\nrm -f ${v}\nEOF\n`],
      // bash reads `$` and `(` joined as a command substitution.
      [`echo "$\\\n(rm -f ${v})"`],
      [`cat <<EOF\n$\\\n(rm -f ${v})\nEOF\n`],
      [`echo \${x:-$\\\n(rm -f ${v})}`],
    ]);
  },
);

sceneTest(
  "K-EFF-3: a known command bash cannot find runs no command_not_found_handle the session defined",
  async (s) => {
    await assertAttacksFail(s, [
      // The handler's body was judged where it was defined (allowed/a); it runs where bash is.
      [
        "command_not_found_handle() { /bin/rm -f a; }",
        `cd '${s.victim}'`,
        "PATH=/nonexistent",
        "cat",
      ],
      [
        "command_not_found_handle() { /bin/rm -f a; }",
        `cd '${s.victim}'`,
        "PATH=/nonexistent",
        "ls",
      ],
    ]);
  },
);

sceneTest(
  "K-EFF-3: expansions that evaluate data as code (${x@P}, a variable name with a subscript) are not followed",
  async (s) => {
    const v = `${s.victim}/a`;
    await assertAttacksFail(s, [
      // Prompt expansion runs the command substitutions in the value.
      [`x='$(rm -f ${v})'; echo \${x@P}`],
      [`x='$(rm -f ${v})'`, `echo "\${x@P}"`],
      // A builtin given a variable name by data evaluates its subscript.
      [`k='a[$(rm -f ${v})]'; test -v "$k"`],
      [`k='a[$(rm -f ${v})]'; [ -v "$k" ]`],
      [`k='a[$(rm -f ${v})]'; read "$k" <<< 1`],
      [`k='a[$(rm -f ${v})]'; printf -v "$k" 1`],
      [`k='a[$(rm -f ${v})]'; sleep 0 & wait -p "$k" $!`],
    ]);
  },
);

sceneTest("K-EFF-3: cd -- DIR enters DIR", async (s) => {
  await assertAttacksFail(s, [
    [`cd -- '${s.victim}' && rm -f a`],
    [`cd -L -- '${s.victim}'; rm -f a`],
    [`pushd -- '${s.victim}' && rm -f a`],
  ]);
});

sceneTest(
  "K-EFF-3a: git rebase -x runs its command, git init writes where it is told",
  async (s) => {
    const repo = `${s.allowed}/repo`;
    const git = (...args: string[]) =>
      new Deno.Command("git", {
        args,
        cwd: repo,
        stdout: "null",
        stderr: "null",
      }).output();
    await Deno.mkdir(repo);
    await git("init", "-q");
    await git("config", "user.name", "t");
    await git("config", "user.email", "t@t");
    await git("commit", "-q", "--allow-empty", "-m", "one");
    await git("commit", "-q", "--allow-empty", "-m", "two");
    const v = `${s.victim}/a`;
    await assertAttacksFail(s, [
      [`cd repo && git rebase -x 'rm -f ${v}' HEAD~1`],
      [`git -C repo rebase -rx 'rm -f ${v}' HEAD~1`],
    ]);
    for (
      const src of [
        `git init -q '${s.victim}/sub'`,
        `git init -q --separate-git-dir='${s.victim}/sub' in`,
      ]
    ) {
      const conn = await s.session();
      await refused(conn, `cd '${s.allowed}'`);
      const ran = !await stepRefused(conn, src);
      conn.close();
      const made = await Deno.stat(`${s.victim}/sub`).then(() => true, () => false);
      assert.equal(made || ran, false, `${src}: ran ${ran}, made ${made}`);
    }
  },
);

sceneTest("K-EFF-3a: curl writes no file its options or URL globs name unseen", async (s) => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("pwned\n"),
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    await assertAttacksFail(s, [
      // `#1` in an output name is what the first URL glob matched.
      [`curl -s '${url}/{x,../victim/a}' -o '#1'`],
      [`curl -s '${url}/[1-1]{x,../victim/a}' -o '#2'`],
      // --libcurl writes the C source of the transfer to its file.
      [`curl -s --libcurl '${s.victim}/a' ${url}/ -o /dev/null`],
      // -O saves as the URL's last segment, opened through a link of that name.
      [`ln -s '${s.victim}/a' a`, `curl -s -O ${url}/a`],
    ], "agent:net");
  } finally {
    await server.shutdown();
  }
});

sceneTest(
  "K-EFF-3a: wget runs no program and writes no file its options name unseen",
  async (s) => {
    const evil = `${s.allowed}/askpass.sh`;
    await Deno.writeTextFile(evil, `#!/bin/sh\nrm -f '${s.victim}/a'\n`);
    await Deno.chmod(evil, 0o755);
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("pwned\n"),
    );
    const host = `127.0.0.1:${server.addr.port}`;
    try {
      await assertAttacksFail(s, [
        [`wget -q -O /dev/null --use-askpass='${evil}' http://${host}/`],
        [`wget -q -O /dev/null --use-ask='${evil}' http://${host}/`],
        // It writes a.warc.gz beside victim/a.
        [`wget -q -O /dev/null --warc-file='${s.victim}/a' http://${host}/`],
        // -x saves as HOST:PORT/a, through a link of that name.
        [`ln -s '${s.victim}' '${host}'`, `wget -q -x http://${host}/a`],
      ], "agent:net");
    } finally {
      await server.shutdown();
    }
  },
);

sceneTest("K-EFF-3: a glob reaches through a link inside each directory it matches", async (s) => {
  await Deno.mkdir(`${s.allowed}/d`);
  await Deno.symlink(s.victim, `${s.allowed}/d/x`);
  await assertAttacksFail(s, [
    ["rm -f */x/a"],
    ["echo x > */x/a"],
    ["sed -i s/p/x/ ?/x/a"],
  ]);
});

sceneTest(
  "K-EFF-3a: cp into a directory writes through the links its entries are or hold",
  async (s) => {
    await Deno.mkdir(`${s.allowed}/src`);
    await Deno.mkdir(`${s.allowed}/dst`);
    await Deno.writeTextFile(`${s.allowed}/src/a`, "evil\n");
    await Deno.symlink(`${s.victim}/a`, `${s.allowed}/dst/a`);
    await assertAttacksFail(s, [
      ["cp src/a dst/"],
      ["cp src/a dst"],
      ["cp -t dst src/a"],
      ["cp -r src/. dst/"],
      ["cp -a src/a dst/"],
    ]);
    // A copy into a directory without links stays exact and runs.
    const conn = await s.session();
    assert.equal(await refused(conn, `cd '${s.allowed}' && mkdir -p new && cp src/a new/`), false);
    assert.equal(await Deno.readTextFile(`${s.allowed}/new/a`), "evil\n");
  },
);

sceneTest(
  "K-EFF-3a: a recursive read that follows links reads nothing outside its grant",
  async (s) => {
    await resetVictim(s);
    await Deno.mkdir(`${s.allowed}/sub`);
    await Deno.mkdir(`${s.allowed}/empty`);
    await Deno.symlink(s.victim, `${s.allowed}/sub/lnk`);
    for (
      const src of [
        "grep -R precious sub",
        "grep -R precious",
        "diff -rN sub empty",
        "cp -rL sub copy && cat copy/lnk/a",
      ]
    ) {
      const conn = await s.session("agent:r");
      await refused(conn, `cd '${s.allowed}'`);
      const result = await exec(conn, src).then((r) => JSON.stringify(r), (e) => e);
      conn.close();
      assert.ok(result instanceof RpcError, `${src} ran: ${result}`);
      assert.equal(result.code, -32010, src);
    }
  },
);

sceneTest("K-EFF-3a: git reads the message, template and pathspec files it is given", async (s) => {
  await resetVictim(s);
  const repo = `${s.allowed}/repo`;
  await Deno.mkdir(repo);
  for (
    const args of [["init", "-q"], ["config", "user.name", "t"], ["config", "user.email", "t@t"]]
  ) {
    await new Deno.Command("git", { args, cwd: repo, stdout: "null", stderr: "null" }).output();
  }
  for (
    const src of [
      `git commit -q --allow-empty -F '${s.victim}/a' && git log -1 --format=%B`,
      `git commit -q --allow-empty --file='${s.victim}/a' && git log -1 --format=%B`,
      `git tag -F '${s.victim}/a' t && git tag -n9`,
    ]
  ) {
    const conn = await s.session("agent:r");
    await refused(conn, `cd '${repo}'`);
    const result = await exec(conn, src).then((r) => JSON.stringify(r), (e) => e);
    conn.close();
    assert.ok(result instanceof RpcError, `${src} ran: ${result}`);
    assert.equal(result.code, -32010, src);
  }
});

// SPEC decision needed (K-PTY-1, P-EVAL-4): pty.open is judged by its program line (`less FILE`
// reads FILE), but an interactive program runs whatever its user types (less's `!cmd`, `v`, `s
// FILE`; git's pager; vi; man). Whether such programs are opaque in a PTY, or run with
// LESSSECURE=1 and the like, is for the SPEC to say: today an agent allowed to write only in
// allowed/ deletes victim/a this way (this test fails).
sceneTest(
  "K-PTY-1/P-EVAL-4 (SPEC decision): less opened in a PTY runs the shell command typed at its !",
  async (s) => {
    await resetVictim(s);
    const conn = await s.session();
    await refused(conn, `cd '${s.allowed}'`);
    const opened = await conn.request("pty.open", { cmd: "less", args: ["/etc/hostname"] })
      .then((r) => r as { pty_id: string }, () => null);
    if (opened !== null) {
      await new Promise((resolve) => setTimeout(resolve, 800));
      await conn.request("pty.send", { pty_id: opened.pty_id, input: `!rm -f '${s.victim}/a'\n` });
      await new Promise((resolve) => setTimeout(resolve, 800));
      await conn.request("pty.close", { pty_id: opened.pty_id });
    }
    conn.close();
    await assertVictimUnchanged(s, "less, then !rm");
  },
  true,
);

sceneTest(
  "K-EFF-3a: jq -nf FILE reads its program from FILE, whose text an error prints",
  async (s) => {
    await resetVictim(s);
    for (const src of [`jq -nf '${s.victim}/a'`, `jq -rnf '${s.victim}/a'`]) {
      const conn = await s.session("agent:r");
      await refused(conn, `cd '${s.allowed}'`);
      // it runs (and fails, printing the file's first line) unless refused
      assert.equal(await stepRefused(conn, src), true, src);
      conn.close();
    }
  },
);

sceneTest("K-EFF-3a: chown -R -L changes no file a link below leads to", async (s) => {
  await resetVictim(s);
  await Deno.mkdir(`${s.allowed}/dst`);
  await Deno.symlink(s.victim, `${s.allowed}/dst/lnk`);
  const owner = async () => (await Deno.stat(`${s.victim}/a`)).gid;
  const before = await owner();
  // a group the test's user is in, other than the file's, where there is one
  const group = Deno.gid() === before ? 65534 : Deno.gid()!;
  const conn = await s.session();
  await refused(conn, `cd '${s.allowed}'`);
  const ran = !await stepRefused(conn, `chgrp -RL ${group} dst`);
  conn.close();
  const changed = (await owner()) !== before;
  assert.equal(ran || changed, false, `ran ${ran}, victim's group changed ${changed}`);
});
