/**
 * The session environment as each principal sees it, through the real kernel on its socket with
 * real bash and bubblewrap: an agent's changes to what makes bash or a program run code never
 * reach another principal's exec, PTY or warm shell (SPEC §7.8 P-SBX-7), and only configuration
 * that differs from the session's start makes a known command opaque (§7.1 K-EFF-6).
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { type Sandbox, sandbox } from "../../_support/sandbox.ts";
import { rpcError } from "../../_support/rejection.ts";
import { delay } from "../../_support/wait.ts";
import { exists } from "../../_support/paths.ts";

/** A sandboxed agent that may run anything inside its project. */
const CODER = PROJECT_AGENT;

interface World {
  k: TestKernel;
  box: Sandbox;
  proj: string;
  /** A connection of `principal` attached to session `work`, cwd the project. */
  agent(principal: string): Promise<RpcConnection>;
  /** Each principal's bearer secret. */
  tokens: Record<string, string>;
  human: RpcConnection;
}

async function world(
  principals: Rec,
  env: Record<string, string>,
  body: (w: World) => Promise<void>,
): Promise<void> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  const tokens: Record<string, string> = {};
  for (const p of Object.keys(principals)) tokens[p] = (await createToken(box, p, p)).secret;
  let k: TestKernel | undefined;
  try {
    k = await startKernel(["--policy", await writePolicy(box, principals)], box, env);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    const kernel = k;
    const agent = (p: string) => kernel.attach("work", tokens[p]);
    await body({ k, box, proj, human, tokens, agent });
  } finally {
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

/** The stdout of `src` run in value position; fails with its stderr when it fails. */
async function out(conn: RpcConnection, src: string): Promise<string> {
  const value = (await exec(conn, src, { position: "value" })).value as Rec;
  assert.equal(value.ok, true, JSON.stringify(value.err));
  return (value.out as Rec).v as string;
}

hostTest(
  "P-SBX-7 an agent's BASH_ENV, PROMPT_COMMAND, PS4, PATH, functions and aliases never run in the human's exec, PTY or another agent's exec; its own execs keep them, plain variables and the cwd stay shared",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER, "agent:b": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      await out(human, "greet() { echo human-greet; }; export EDITOR=human-ed");
      const humanPath = await out(human, 'printf %s "$PATH"');
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `printf 'echo ran >> ${pwned}\\n' > evil.sh`,
          "mkdir -p bin sub && printf '#!/bin/sh\\n. " + proj + "/evil.sh\\n' > bin/uname",
          "chmod +x bin/uname",
          `export BASH_ENV=${proj}/evil.sh ENV=${proj}/evil.sh`,
          `export PROMPT_COMMAND='. ${proj}/evil.sh' PS4='$(. ${proj}/evil.sh)+ '`,
          `export PATH=${proj}/bin:$PATH EDITOR=${proj}/evil.sh GIT_PAGER=${proj}/evil.sh`,
          `ls() { . ${proj}/evil.sh; }; greet() { . ${proj}/evil.sh; }`,
          `alias cat='. ${proj}/evil.sh; cat'`,
          `shopt -s extdebug; trap '. ${proj}/evil.sh' DEBUG RETURN`,
          "export SHARED_NOTE=hello; cd sub",
        ].join("\n"),
      );
      // Its DEBUG trap ran its code in its own exec; no trap persists beyond it.
      await Deno.remove(pwned).catch(() => {});
      // The human's next exec: none of the agent's code runs, the human's values hold.
      const seen = await out(
        human,
        [
          "ls >/dev/null; cat </dev/null; uname >/dev/null; greet",
          "set -x; true; set +x",
          'printf "path=%s\\n" "$PATH"',
          'echo "pc=${PROMPT_COMMAND-unset} be=${BASH_ENV-unset} env=${ENV-unset} ed=$EDITOR"',
          'echo "pager=${GIT_PAGER-unset} ls=$(type -t ls) cat=$(type -t cat)"',
          'echo "note=$SHARED_NOTE cwd=$PWD"',
        ].join("\n"),
      );
      assert.equal(exists(pwned), false, `the agent's code ran in the human's exec:\n${seen}`);
      assert.deepEqual(seen.split("\n"), [
        "human-greet",
        `path=${humanPath}`,
        "pc=unset be=unset env=unset ed=human-ed",
        "pager=unset ls=file cat=file",
        `note=hello cwd=${proj}/sub`,
        "",
      ]);
      const env = await human.request("session.env", {}) as Rec;
      assert.equal((env.env as Rec).PATH, humanPath);
      assert.equal((env.env as Rec).PROMPT_COMMAND, undefined);
      // A PTY the human opens: an interactive bash would run PROMPT_COMMAND at each prompt.
      const pty = await human.request("pty.open", {
        cmd: "bash",
        args: ["--norc", "--noprofile", "-i"],
        env: { PS1: "$ " },
      }) as Rec;
      await human.request("pty.send", {
        pty_id: pty.pty_id,
        input: [
          {
            // quoted apart: the typed line, echoed and wrapped at 80 columns, may start a row
            // with what bash prints
            text:
              `[ "$PATH" = '${humanPath}' ] && echo "pty-path"-ok" pc=\${PROMPT_COMMAND-unset}"`,
          },
          { key: "Enter" },
        ],
      });
      let screen = "";
      for (let i = 0; i < 250 && !/^pty-path-ok/m.test(screen); i++) {
        await delay(40);
        const read = await human.request("pty.read", { pty_id: pty.pty_id }) as Rec;
        screen = (read.screen as string[]).join("\n");
      }
      assert.match(screen, /^pty-path-ok pc=unset$/m);
      await human.request("pty.close", { pty_id: pty.pty_id });
      assert.equal(exists(pwned), false, "the agent's PROMPT_COMMAND ran in the human's PTY");
      // So does a task the human starts.
      const task = await exec(human, "ls >/dev/null; cat </dev/null; uname", { async: true });
      const awaited = await human.request("task.await", {
        task: task.task,
        timeout_ms: 30000,
      }) as Rec;
      assert.equal(awaited.state, "completed");
      assert.equal(exists(pwned), false, "the agent's code ran in the human's task");
      // A plan the human makes and applies runs in the human's view as well.
      const plan = await exec(human, "uname >/dev/null; greet", { mode: "plan" });
      const applied = await human.request("plan.apply", {
        plan_ref: plan.plan_ref,
        position: "value",
      }) as Rec;
      assert.equal(((applied.value as Rec).out as Rec).v, "human-greet\n");
      assert.equal(exists(pwned), false, "the agent's code ran in the human's plan.apply");
      // Another agent sees the human's state, not agent a's.
      const b = await w.agent("agent:b");
      assert.equal(
        await out(b, 'echo "$(type -t ls) ${PROMPT_COMMAND-unset} $EDITOR $SHARED_NOTE"; greet'),
        "file unset human-ed hello\nhuman-greet\n",
      );
      assert.equal(exists(pwned), false, "agent a's code ran in agent b's exec");
      // The agent keeps what it set for itself.
      assert.equal(
        await out(a, 'type -t ls; echo "$PROMPT_COMMAND"; printf "%s\\n" "${PATH%%:*}"'),
        `function\n. ${proj}/evil.sh\n${proj}/bin\n`,
      );
    });
  },
);

hostTest(
  "P-SBX-7 a state dump an agent's exec forges (it can write its own state FIFO) never runs code in the human's exec, nor sets what the agent may not share",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const humanPath = await out(human, 'printf %s "$PATH"');
      const a = await w.agent("agent:a");
      // The dump the exec's own bash then writes follows the forged one, which the kernel reads
      // first (it ends in Z).
      const listing = [
        `declare -- forged_a="1"; touch ${pwned}; #`,
        `declare -- forged_b="$(touch ${pwned})"`,
        `declare -- forged_c="1" PATH="${proj}"`,
      ].join("\\n");
      await out(
        a,
        `exec 7<>"$__shoal_dir/state"; printf 'C\\0%s\\0D\\0${listing}\\0F\\0\\0A\\0\\0Z\\0' "$PWD" >&7`,
      );
      const seen = await out(
        human,
        'echo "a=${forged_a-unset} b=${forged_b-unset} c=${forged_c-unset}"; printf %s "$PATH"',
      );
      assert.equal(exists(pwned), false, `the agent's forged dump ran code as the human:\n${seen}`);
      assert.equal(seen, `a=unset b=unset c=unset\n${humanPath}`);
    });
  },
);

hostTest(
  "P-SBX-7 an agent's TAR_OPTIONS, RSYNC_RSH, JAVA_HOME and AWS_CONFIG_FILE, and its namerefs and integer variables, never reach the human's exec",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `export TAR_OPTIONS='--checkpoint=1 --checkpoint-action=exec=touch\\ ${pwned}'`,
          `export RSYNC_RSH='touch ${pwned}' JAVA_HOME=${proj}/jdk AWS_CONFIG_FILE=${proj}/aws`,
          `declare -n out_dir='a[$(touch ${pwned})]'`,
          "declare -i count=1",
          "export SHARED_NOTE=hello",
        ].join("\n"),
      );
      const seen = await out(
        human,
        [
          "echo x > f && tar cf /dev/null f",
          'echo "dir=$out_dir"',
          "count='b[$(touch " + pwned + ")]'",
          'echo "tar=${TAR_OPTIONS-unset} rsh=${RSYNC_RSH-unset} java=${JAVA_HOME-unset}"',
          'echo "aws=${AWS_CONFIG_FILE-unset} note=$SHARED_NOTE"',
        ].join("\n"),
      );
      assert.equal(exists(pwned), false, `the agent's settings ran code as the human:\n${seen}`);
      assert.equal(seen, "dir=\ntar=unset rsh=unset java=unset\naws=unset note=hello\n");
      // The agent keeps its own.
      assert.equal(
        await out(a, 'echo "$JAVA_HOME"; declare -p count'),
        `${proj}/jdk\ndeclare -i count="1"\n`,
      );
    });
  },
);

hostTest(
  "P-SBX-7 an agent's ZIPOPT (zip runs its -TT command), TEMP and TMP (Python's tempfile writes the human's temporaries there when TMPDIR is unset), TEXTDOMAINDIR, KRB5CCNAME and SSLKEYLOGFILE never reach the human's exec",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `export ZIPOPT='-T -TT=touch\${IFS}${pwned};true' TEMP=${proj} TMP=${proj}`,
          `export TEXTDOMAINDIR=${proj} KRB5CCNAME=FILE:${proj}/cc SSLKEYLOGFILE=${proj}/keys`,
        ].join("\n"),
      );
      const seen = await out(
        human,
        [
          "echo x > f; ! command -v zip >/dev/null || zip -q f.zip f",
          'echo "zip=${ZIPOPT-unset} temp=${TEMP-unset} tmp=${TMP-unset}"',
          'echo "text=${TEXTDOMAINDIR-unset} krb=${KRB5CCNAME-unset} keys=${SSLKEYLOGFILE-unset}"',
        ].join("\n"),
      );
      assert.equal(exists(pwned), false, `the agent's ZIPOPT ran code as the human:\n${seen}`);
      assert.equal(seen, "zip=unset temp=unset tmp=unset\ntext=unset krb=unset keys=unset\n");
      // The agent keeps its own.
      assert.equal(await out(a, 'echo "$TEMP"'), `${proj}\n`);
    });
  },
);

hostTest(
  "P-SBX-7 an agent's MAKE, RM and OUTPUT_OPTION (make's built-in variables, which the environment overrides: `make`, `make clean` and an implicit compile ran its program), CONFIG_SITE (./configure sources it), MANLESS (`man ls` in the human's PTY ran its `+!` command in less) and the like never reach the human",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj, box } = w;
      const pwned = `${proj}/pwned`;
      const evil = `${proj}/evil`;
      // the human's own project, which the agent can neither read nor write
      const mine = `${box.dir}/home/mine`;
      await Deno.mkdir(`${mine}/sub`, { recursive: true });
      await Deno.writeTextFile(
        `${mine}/Makefile`,
        "all:\n\t$(MAKE) -C sub\nclean:\n\t$(RM) x.o\n",
      );
      await Deno.writeTextFile(`${mine}/sub/Makefile`, "all:\n\t@echo sub\n");
      await Deno.writeTextFile(`${mine}/x.c`, "int x;\n");
      // what an autoconf-made configure does with CONFIG_SITE
      await Deno.writeTextFile(
        `${mine}/configure`,
        'for f in "${CONFIG_SITE:-/nonexistent}"; do test -r "$f" && . "$f"; done\necho configured\n',
      );
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `printf '#!/bin/sh\\necho "$1" >> ${pwned}\\n' > evil && chmod +x evil`,
          `printf '${evil} configure\\n' > site.sh`,
          `export MAKE='${evil} make' RM='${evil} rm' OUTPUT_OPTION='-o $@; ${evil} cc'`,
          `export CONFIG_SITE=${proj}/site.sh CONFIG_SHELL=${evil}`,
          `export MANLESS=$'x$+!${evil} man\\n' SYSTEMD_LESS=$'FRSXMK+!${evil} systemctl\\n'`,
          "export SYSTEMD_PAGERSECURE=0 PARALLEL=\"--rpl '{} qx(evil)'\"",
          `export PGSYSCONFDIR=${proj} IPYTHONDIR=${proj} MPLCONFIGDIR=${proj}`,
          `export SQLITE_HISTORY=${proj}/h PSQL_HISTORY=${proj}/h MYSQL_HISTFILE=${proj}/h`,
        ].join("\n"),
      );
      const seen = await out(
        human,
        [
          `(cd ${mine} && make -s && make -s clean && make -s x.o && sh configure)`,
          "for v in MAKE RM OUTPUT_OPTION CONFIG_SITE CONFIG_SHELL MANLESS SYSTEMD_LESS \\",
          "  SYSTEMD_PAGERSECURE PARALLEL PGSYSCONFDIR IPYTHONDIR MPLCONFIGDIR SQLITE_HISTORY \\",
          '  PSQL_HISTORY MYSQL_HISTFILE; do [ -z "${!v+x}" ] || echo "$v reached the human"; done',
        ].join("\n"),
      );
      if (exists("/usr/share/man/man1/ls.1.gz")) {
        const man = await human.request("pty.open", {
          cmd: "man",
          args: ["ls"],
          env: { PAGER: "less", MANPAGER: "less" },
        }) as Rec;
        let screen = "";
        for (let i = 0; i < 100 && !/\bls\b/.test(screen); i++) {
          await delay(100);
          screen = ((await human.request("pty.read", { pty_id: man.pty_id }) as Rec)
            .screen as string[]).join("\n");
        }
        await delay(500);
        await human.request("pty.close", { pty_id: man.pty_id });
      }
      const ran = exists(pwned) ? await Deno.readTextFile(pwned) : "";
      assert.equal(ran, "", `the agent's program ran as the human:\n${seen}`);
      assert.equal(seen, "sub\nconfigured\n");
      assert.equal(await out(a, 'echo "$MAKE"'), `${evil} make\n`, "the agent keeps its own");
    });
  },
);

hostTest(
  "P-SBX-7 an agent's DEPENDENCIES_OUTPUT (the human's gcc appended the agent's command to the human's ~/.bashrc) and MANROFFOPT (`man ls` loaded the agent's groff macros, unsafe, and ran their command) never reach the human",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj, box } = w;
      const pwned = `${proj}/pwned`;
      const rc = `${box.dir}/home/.bashrc`;
      await Deno.writeTextFile(rc, "# the human's\n");
      const mine = `${box.dir}/home/mine`;
      await Deno.mkdir(mine);
      await Deno.writeTextFile(`${mine}/x.c`, "int x;\n");
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `export DEPENDENCIES_OUTPUT='${rc} touch ${pwned};#' SUNPRO_DEPENDENCIES='${rc} x'`,
          `mkdir -p tmac && printf '.sy echo man >> ${pwned}\\n' > tmac/evil.tmac`,
          `export MANROFFOPT='-U -M${proj}/tmac -mevil' MAN_DISABLE_SECCOMP=1`,
        ].join("\n"),
      );
      const seen = await out(
        human,
        [
          `(cd ${mine} && cc -c x.c -o x.o)`,
          // a width other than the cached pages' 80 columns, as most terminals have
          "[ ! -e /usr/share/man/man1/ls.1.gz ] || MANWIDTH=100 MANPAGER=cat man ls >/dev/null",
          'echo "${DEPENDENCIES_OUTPUT-unset} ${MANROFFOPT-unset} ${MAN_DISABLE_SECCOMP-unset}"',
        ].join("\n"),
      );
      assert.equal(await Deno.readTextFile(rc), "# the human's\n", "the human's gcc wrote there");
      assert.equal(exists(pwned), false, `the agent's macros ran as the human:\n${seen}`);
      assert.equal(seen, "unset unset unset\n");
    });
  },
);

hostTest(
  "P-SBX-7 an agent's XZ_OPT and XZ_DEFAULTS never reach the human: with `--files=LIST` the human's `xz` (and `tar -J`) also compressed and removed the files the agent listed, outside its grants",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj, box } = w;
      const victim = `${box.dir}/home/keep`;
      await Deno.writeTextFile(victim, "the human's\n");
      const a = await w.agent("agent:a");
      await out(a, `printf '${victim}\\n' > list && export XZ_OPT=--files=${proj}/list`);
      await out(a, "export XZ_DEFAULTS=-T1");
      const seen = await out(
        human,
        'echo x > f && xz f && echo "${XZ_OPT-unset} ${XZ_DEFAULTS-unset}"',
      );
      assert.equal(exists(`${victim}.xz`), false, "the human's xz compressed the agent's list");
      assert.equal(await Deno.readTextFile(victim), "the human's\n");
      assert.equal(seen, "unset unset\n");
    });
  },
);

hostTest(
  "P-SBX-7 an agent's TMOUT never reaches the human: with TMOUT=1 every `read` of the human's gave up after a second (and an idle interactive shell of the human's would exit)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const a = await w.agent("agent:a");
      await out(a, "export TMOUT=1");
      const seen = await out(
        w.human,
        '(sleep 2; echo late) | { read -r line; echo "$line"; }; echo "${TMOUT-unset}"',
      );
      assert.equal(seen, "late\nunset\n");
      assert.equal(await out(a, 'echo "t=$TMOUT"'), "t=1\n", "the agent keeps its own");
    });
  },
);

hostTest(
  "P-SBX-7 an agent's CLOUDSDK_PYTHON (`gcloud`), VALGRIND_LIB (`valgrind`), RUSTDOC (`cargo doc`), PYTEST_ADDOPTS (`pytest`) and GDBHISTFILE never reach the human: each ran the agent's program where installed",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj, box } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `printf '#!/bin/sh\\necho "$0" >> ${pwned}\\n' > evil && chmod +x evil`,
          "mkdir -p vg && cp evil vg/memcheck-amd64-linux",
          `printf 'open("${pwned}", "a").write("pytest")\\n' > plug.py`,
          `printf '[pytest]\\npythonpath = ${proj}\\n' > pytest.ini`,
          `export CLOUDSDK_PYTHON=${proj}/evil VALGRIND_LIB=${proj}/vg RUSTDOC=${proj}/evil`,
          `export PYTEST_ADDOPTS='-c ${proj}/pytest.ini -p plug' GDBHISTFILE=${proj}/h`,
        ].join("\n"),
      );
      const mine = `${box.dir}/home/mine`;
      await Deno.mkdir(`${mine}/src`, { recursive: true });
      await Deno.writeTextFile(
        `${mine}/Cargo.toml`,
        '[package]\nname = "mine"\nversion = "0.1.0"\nedition = "2021"\n',
      );
      await Deno.writeTextFile(`${mine}/src/lib.rs`, "");
      await Deno.writeTextFile(`${mine}/test_a.py`, "def test_a():\n    pass\n");
      const seen = await out(
        human,
        [
          `cd ${mine}`,
          "! command -v gcloud >/dev/null || gcloud --version >/dev/null 2>&1",
          "! command -v valgrind >/dev/null || valgrind true >/dev/null 2>&1",
          "! command -v cargo >/dev/null || cargo doc --offline -q >/dev/null 2>&1",
          "! command -v pytest >/dev/null || pytest -q -p no:cacheprovider >/dev/null 2>&1",
          "cd - >/dev/null",
          "for v in CLOUDSDK_PYTHON VALGRIND_LIB RUSTDOC PYTEST_ADDOPTS GDBHISTFILE; do",
          '  [ -z "${!v+x}" ] || echo "$v reached the human"',
          "done",
        ].join("\n"),
      );
      const ran = exists(pwned) ? await Deno.readTextFile(pwned) : "";
      assert.equal(ran, "", `the agent's program ran as the human:\n${seen}`);
      assert.equal(seen, "");
    });
  },
);

hostTest(
  "P-SBX-7 an agent's OSH_CUSTOM, ZSH_CUSTOM, ASDF_DATA_DIR, NVM_DIR, SHOAL_SOCKET and the like (what the human's shell frameworks and version managers source or put first on PATH, and shoal's own CLI reads) never reach the human: its interactive bash PTY, whose ~/.bashrc loads oh-my-bash, ran the agent's file as the human",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj, box } = w;
      const pwned = `${box.dir}/pwned`;
      // what oh-my-bash's oh-my-bash.sh (and oh-my-zsh's, with ZSH_CUSTOM) does at the end of a
      // ~/.bashrc that loads it: source every *.sh of $OSH_CUSTOM, by default $OSH/custom
      await Deno.writeTextFile(
        `${box.dir}/home/.bashrc`,
        'for f in "${OSH_CUSTOM:-$HOME/.oh-my-bash/custom}"/*.sh; do [ -f "$f" ] && . "$f"; done\n' +
          "echo rc-done\n",
      );
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `mkdir -p osh && printf 'touch ${pwned}\\n' > osh/x.sh`,
          `export OSH_CUSTOM=${proj}/osh ZSH_CUSTOM=${proj}/osh ASDF_DATA_DIR=${proj}/asdf`,
          `export NVM_DIR=${proj}/nvm SDKMAN_DIR=${proj}/sdk`,
          // the human's shoal CLI in the session would approve through the agent's socket
          `export SHOAL_SOCKET=${proj}/fake.sock SHOAL_KERNEL=${proj}/evil`,
        ].join("\n"),
      );
      const seen = await out(
        human,
        'echo "${OSH_CUSTOM-unset} ${ZSH_CUSTOM-unset} ${ASDF_DATA_DIR-unset} ${NVM_DIR-unset}" ' +
          '"${SHOAL_SOCKET-unset} ${SHOAL_KERNEL-unset}"',
      );
      const shell = await human.request("pty.open", { cmd: "bash", args: ["-i"] }) as Rec;
      let screen = "";
      for (let i = 0; i < 100 && !screen.includes("rc-done"); i++) {
        await delay(100);
        screen = ((await human.request("pty.read", { pty_id: shell.pty_id }) as Rec)
          .screen as string[]).join("\n");
      }
      await human.request("pty.close", { pty_id: shell.pty_id });
      assert.match(screen, /rc-done/);
      assert.equal(exists(pwned), false, "the human's shell sourced the agent's file");
      assert.equal(seen, "unset unset unset unset unset unset\n");
      assert.equal(await out(a, 'echo "$OSH_CUSTOM"'), `${proj}/osh\n`, "the agent keeps its own");
    });
  },
);

hostTest(
  "P-SBX-7 an agent cannot type into, read, resize or close a PTY the human opened in the session (its program runs unconfined); the human reaches the agent's",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const shell = await human.request("pty.open", {
        cmd: "bash",
        args: ["--norc", "--noprofile", "-i"],
      }) as Rec;
      const a = await w.agent("agent:a");
      assert.deepEqual((await a.request("pty.list", {}) as Rec).ptys, []);
      const id = shell.pty_id;
      for (
        const [method, params] of [
          ["pty.send", { pty_id: id, input: `touch ${pwned}\n` }],
          ["pty.read", { pty_id: id }],
          ["pty.resize", { pty_id: id, cols: 10, rows: 10 }],
          ["pty.close", { pty_id: id }],
        ] as const
      ) {
        assert.equal((await rpcError(a.request(method, params))).code, -32022, method);
      }
      const own = await a.request("pty.open", { cmd: "cat" }) as Rec;
      assert.deepEqual(
        ((await a.request("pty.list", {}) as Rec).ptys as Rec[]).map((p) => p.pty_id),
        [own.pty_id],
      );
      await human.request("pty.send", { pty_id: own.pty_id, input: "from-human\n" });
      await human.request("pty.send", { pty_id: id, input: "echo human-ok\n" });
      let screen = "";
      for (let i = 0; i < 100 && !screen.includes("\nhuman-ok"); i++) {
        await delay(50);
        screen = ((await human.request("pty.read", { pty_id: id }) as Rec).screen as string[])
          .join("\n");
      }
      assert.match(screen, /^human-ok$/m);
      assert.equal(exists(pwned), false, "the agent's keystrokes ran in the human's PTY");
      await human.request("pty.close", { pty_id: id });
      await human.request("pty.close", { pty_id: own.pty_id });
    });
  },
);

hostTest(
  "P-SBX-7 an agent's FUNCNEST (shared, as a plain variable) does not stop the human's execs from persisting their state: at 1 the kernel's own state dump failed in every exec of the session, so the human's cd and export were lost",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const a = await w.agent("agent:a");
      // its own dump would fail too: it writes the one the kernel reads first
      await out(
        a,
        `exec 7<>"$__shoal_dir/state"; printf 'C\\0%s\\0D\\0declare -- FUNCNEST="1"\\0F\\0\\0A\\0\\0Z\\0' "$PWD" >&7`,
      );
      await out(human, "mkdir -p sub && cd sub && export HUMAN_NOTE=kept");
      assert.equal(await out(human, 'echo "$PWD $HUMAN_NOTE"'), `${proj}/sub kept\n`);
    });
  },
);

hostTest(
  "P-SBX-7 a cwd an agent's exec could not have ended in (a forged dump naming HOME, a symlink out of the project) is not where the human's next exec runs",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const home = proj.slice(0, proj.lastIndexOf("/"));
      const a = await w.agent("agent:a");
      await out(a, `ln -s ${home} out && mkdir -p sub && cd sub`);
      assert.equal(await out(human, "pwd"), `${proj}/sub\n`, "a cwd it could be in is shared");
      for (const forged of [home, `${proj}/out`]) {
        await out(
          a,
          `exec 7<>"$__shoal_dir/state"; printf 'C\\0%s\\0D\\0\\0F\\0\\0A\\0\\0Z\\0' '${forged}' >&7`,
        );
        assert.equal(await out(human, "pwd"), `${proj}/sub\n`, forged);
      }
    });
  },
);

Deno.test({
  name:
    "a sandboxed agent cannot read what the human's execs printed in the session (the sandbox hides HOME, the transcript shows it) [ignored: found by the probe round; G-TRUST-4 shares the transcript and tasks of a session with every principal, so value.get out:N (and task output) of the human's exec answers the agent: needs a SPEC decision]",
  ignore: true,
  fn: async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const printed = await exec(w.human, "echo human-secret", { position: "value" });
      const a = await w.agent("agent:a");
      const read = await rpcError(a.request("value.get", { ref: printed.ref }));
      assert.equal(read.code, -32004);
    });
  },
});

hostTest(
  "P-SBX-7 an agent cannot reach another agent's run in the session, even one confined exactly alike: it neither sees its processes nor writes its state dump (which set the other's PATH, so the other agent's next `ls` ran the first one's program)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER, "agent:b": CODER }, {}, async (w) => {
      const { proj } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      const b = await w.agent("agent:b");
      await out(a, `mkdir -p bin && printf '#!/bin/sh\\necho ran >> ${pwned}\\n' > bin/ls`);
      await out(a, "chmod +x bin/ls");
      // b's run, going on while a acts
      const task = await exec(b, "sleep 3; echo b-done", { async: true });
      await delay(500);
      const listing = `declare -x PATH="${proj}/bin:/usr/bin:/bin"`;
      const seen = await out(
        a,
        [
          "pgrep -x sleep >/dev/null && echo sees-sleep",
          "for f in /dev/shoal/*/state; do",
          '  [ "$f" = "$__shoal_dir/state" ] && continue',
          `  { printf 'C\\0%s\\0D\\0${listing}\\0F\\0\\0A\\0\\0Z\\0' "$PWD" 1<>"$f"; } 2>/dev/null &&`,
          '    echo "wrote $f"',
          "done; true",
        ].join("\n"),
      );
      const awaited = await b.request("task.await", { task: task.task, timeout_ms: 30000 }) as Rec;
      assert.equal(awaited.state, "completed");
      await out(b, "ls >/dev/null");
      assert.equal(exists(pwned), false, `agent a's program ran in agent b's exec:\n${seen}`);
      // what it wrote, if anything, was its own next bash's (a warm shell of its sandbox)
      assert.doesNotMatch(seen, /sees-sleep/, "agent a sees agent b's processes");
    });
  },
);

hostTest(
  "P-SBX-7 a warm shell spawned in one agent's environment never serves another agent, even one confined exactly alike",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER, "agent:b": CODER }, {}, async (w) => {
      const a = await w.agent("agent:a");
      await out(a, "export PYTHONSTARTUP=/marker-of-a");
      // Runs after the change: the session's warm shell is now spawned in a's environment.
      for (let i = 0; i < 3; i++) await out(a, "true");
      const b = await w.agent("agent:b");
      const environ = await out(
        b,
        "echo \"n=$(tr '\\0' '\\n' < /proc/$$/environ | grep -c marker-of-a)\"",
      );
      assert.equal(environ, "n=0\n", "agent b's bash was spawned with agent a's environment");
      assert.equal(await out(b, 'echo "${PYTHONSTARTUP-unset}"'), "unset\n");
    });
  },
);

/** The plan-mode effects of `src` for `conn` (K-EXEC-7): nothing runs. */
async function planned(conn: RpcConnection, src: string): Promise<Rec[]> {
  return (await exec(conn, src, { mode: "plan" })).effects as Rec[];
}

/** The opaque reason among `effects`, or null. */
function opaqueReason(effects: Rec[]): string | null {
  return (effects.find((e) => e.kind === "opaque")?.reason as string | undefined) ?? null;
}

hostTest(
  "an agent's export too large to start a program with (one 200 KB value, or many that pass 1 MiB together), or shell variables past 1 MiB, stay its own: the human's execs and PTYs in the session still start, at their usual pace",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:c": CODER }, {}, async ({ agent: attach, human }) => {
      const agent = await attach("agent:c");
      // builtins only: once its environment is this large, the agent's own programs cannot start
      const many = Array.from({ length: 12 }, (_, i) => `export M${i}="$A"`).join("; ");
      const made = await out(
        agent,
        `printf -v BIG '%*s' 200000 ''; export BIG; printf -v A '%*s' 100000 ''; ${many}; ` +
          "unset A; printf -v HUGE '%*s' 5000000 ''; echo ${#BIG} ${#M11}",
      );
      assert.equal(made, "200000 100000\n");
      // the human's session still starts programs, with what fits shared
      const seen = await out(human, "ls >/dev/null && echo ${#BIG} $(env | grep -c '^M[0-9]*=')");
      const [big, shared] = seen.trim().split(" ").map(Number);
      assert.equal(big, 0, "the 200 KB value reached the human");
      assert.ok(shared >= 1 && shared < 12, `${shared} of the 100 KB exports reached the human`);
      // nor does the shell variable the human's every exec would restore (100 MB: 30 s an exec)
      assert.equal(await out(human, "echo ${#HUGE}"), 0);
      const pty = await human.request("pty.open", { cmd: "true" }) as Rec;
      await human.request("pty.close", { pty_id: pty.pty_id });
    });
  },
);

Deno.test("K-EFF-6 configuration the kernel inherited is trusted: git status and curl stay exact; a change in the session by the agent or the human makes them opaque, and attach lists it", async () => {
  const env = { XDG_CONFIG_HOME: "/nonexistent/xdg", GIT_SSL_CAINFO: "/etc/ssl/certs/ca.crt" };
  await world({ "agent:a": { ...CODER, sandbox: false } }, env, async (w) => {
    const { human, proj } = w;
    await out(human, "git init -q . && echo x > f");
    const a = await w.agent("agent:a");
    const changed = async (token: string | null) => {
      const conn = await w.k.connect();
      const r = await conn.request("session.attach", { session: "work", token }) as Rec;
      return (r.caps as Rec).changed_config_env;
    };
    assert.deepEqual([await changed(w.tokens["agent:a"]), await changed(null)], [[], []]);
    const gitStatus = [
      { kind: "fs_read", paths: [proj] },
      { kind: "proc_spawn", argv0: "git", bin_hash: null },
    ];
    assert.deepEqual(await planned(a, "git status"), gitStatus);
    assert.deepEqual(await planned(a, "curl http://127.0.0.1:1/"), [
      { kind: "proc_spawn", argv0: "curl", bin_hash: null },
      { kind: "net_connect", host: "127.0.0.1", port: 1 },
    ]);
    // Set in the source itself, or for the command: opaque as before.
    assert.match(opaqueReason(await planned(a, "export GIT_DIR=x; git status")) ?? "", /GIT_DIR/);
    assert.match(opaqueReason(await planned(a, "CURL_HOME=/x curl http://h/")) ?? "", /CURL_HOME/);
    // The human's change counts for everyone: the kernel cannot tell a deliberate one.
    await out(human, "export CURL_HOME=/nowhere");
    assert.equal(
      opaqueReason(await planned(a, "curl http://127.0.0.1:1/")),
      "curl configured by CURL_HOME",
    );
    assert.deepEqual(await planned(a, "git status"), gitStatus);
    await out(a, `export GIT_DIR=x XDG_CONFIG_HOME=${proj}/conf`);
    assert.equal(opaqueReason(await planned(a, "git status")), "git configured by GIT_DIR");
    assert.deepEqual(await changed(w.tokens["agent:a"]), [
      "CURL_HOME",
      "GIT_DIR",
      "XDG_CONFIG_HOME",
    ]);
    // The agent's changes are its own (P-SBX-7): the human's view still has neither.
    assert.deepEqual(await changed(null), ["CURL_HOME"]);
    assert.deepEqual(await planned(human, "git status"), gitStatus);
  });
});

hostTest(
  "P-SBX-7 a variable an agent shares runs no code in the human's exec that reads it in arithmetic (`$((n))`, `[[ $n -gt 0 ]]`, `(( n ))`): bash evaluates the value as an expression and expands its subscripts, so `x[$(cmd)]` in it ran cmd as the human (so did `x[${t@P}]` with t='\\044(cmd)'); a value with a command substitution or a parameter expansion stays the agent's own",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      await out(a, `retries='x[$(touch ${pwned})]'`);
      await out(a, `export LIMIT='y[\`touch ${pwned}\`]' plain=shared`);
      // no `$(` in either: prompt expansion (@P) makes \044 a `$`, then runs the substitution
      await out(a, `tpl='\\044(touch ${pwned})' depth='z[\${tpl@P}]'`);
      const seen = await out(
        human,
        '[[ $retries -gt 0 ]] || echo none; echo $(( LIMIT + 1 )); (( retries || depth )) || echo "$plain"',
      );
      assert.equal(exists(pwned), false, "the agent's value ran code as the human");
      assert.equal(seen, "none\n1\nshared\n");
      assert.equal(await out(a, 'echo "r=$retries"'), `r=x[$(touch ${pwned})]\n`, "its own");
    });
  },
);

hostTest(
  "P-SBX-7 a variable an agent shares assigns nothing in the human's exec that reads it in arithmetic: with retries='PATH=0' (or x='a[PATH=0]') the human's `[[ $retries -gt 0 ]]` (or `${!x}`) set PATH to the directory 0 the agent made in the shared cwd, and the human's next `ls` ran the agent's 0/ls; a value with an arithmetic assignment stays the agent's own",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      await out(
        a,
        `mkdir 0 && printf '#!/bin/sh\\n/bin/touch ${pwned}\\n' > 0/ls && chmod +x 0/ls`,
      );
      await out(a, "retries='PATH=0' ref='a[PATH=0]' count='i+=1' plain='a == b'");
      await out(a, "declare -a list=([0]='n<<=1' [1]='PATH[0]=0'); export LIMIT=PATH=0");
      for (
        const reads of [
          "[[ $retries -gt 0 ]]",
          '[ -z "$ref" ] || echo "${!ref}" >/dev/null',
          "(( LIMIT ))",
          "(( list[1] ))",
          "(( count ))",
        ]
      ) {
        const seen = await out(human, `${reads}; ls >/dev/null; echo "$plain"`);
        assert.equal(exists(pwned), false, `the agent's value assigned PATH at ${reads}`);
        assert.equal(seen, "a == b\n");
      }
      assert.equal(await out(a, 'echo "r=$retries"'), "r=PATH=0\n", "its own");
    });
  },
);

hostTest(
  "P-SBX-7 a shell variable an agent shares runs no code when the human's exec restores it in a locale whose characters can end in a backslash byte (Big5, GBK, GB18030): dumped in a UTF-8 locale, v=$'\\xef\\xbf\\xbd\";cmd;#' (U+FFFD) is listed as \"\\xef\\xbf\\xbd\\\";cmd;#\", and read in Big5 \\xbd\\x5c is one character, so the quote closed the value and cmd ran as the human; a variable whose listing is not ASCII stays the agent's own",
  NEEDS_TIER_B,
  async () => {
    const locales = await Deno.makeTempDir({ prefix: "shoal-locale-" });
    try {
      // the human's own locale: Big5 (its characters' second byte may be 0x5c)
      const made = await new Deno.Command("localedef", {
        args: ["-i", "C", "-f", "BIG5", `${locales}/big5`],
        stdout: "null",
        stderr: "null",
      }).output();
      assert.ok(made.success || exists(`${locales}/big5/LC_CTYPE`), "localedef failed");
      await world({ "agent:a": CODER }, { LOCPATH: locales, LANG: "big5" }, async (w) => {
        const { human, proj } = w;
        const pwned = `${proj}/pwned`;
        assert.equal(await out(human, "locale charmap 2>/dev/null"), "BIG5\n");
        const a = await w.agent("agent:a");
        await out(a, `LC_ALL=C.UTF-8; v=$'\\xef\\xbf\\xbd";/bin/touch ${pwned};#' plain=shared`);
        const seen = await out(human, 'echo "$plain"');
        assert.equal(exists(pwned), false, "the agent's value ran code as the human");
        assert.equal(seen, "shared\n");
      });
    } finally {
      await Deno.remove(locales, { recursive: true });
    }
  },
);

hostTest(
  "P-SBX-7 an agent cannot attach with a cwd its sandbox could not be in: `session.attach {cwd: HOME}` with its token moved the session, and the human's next exec ran in HOME; it is refused (-32010), and a cwd inside its project is still taken",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj, k } = w;
      const home = proj.slice(0, proj.lastIndexOf("/"));
      await Deno.mkdir(`${proj}/sub`);
      const attach = async (cwd: string) => {
        const conn = await k.connect();
        return await conn.request("session.attach", {
          session: "work",
          token: w.tokens["agent:a"],
          cwd,
          client: { kind: "test", tty: false },
        });
      };
      const refused = await rpcError(attach(home));
      assert.equal(refused.code, -32010);
      assert.equal(await out(human, "pwd"), `${proj}\n`, "the agent moved the human's exec");
      await attach(`${proj}/sub`);
      assert.equal(await out(human, "pwd"), `${proj}/sub\n`);
    });
  },
);
hostTest(
  "P-SBX-7 the shared cwd an agent left cannot be swapped for a symlink out of the project afterwards: after `cd sub`, its next exec (ending in sub, so no cwd change to check) ran `mv ../sub ../old; ln -s HOME ../sub`, and the human's next exec ran in HOME (its `echo x > note` wrote ~/note); it runs where the human last left the session",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const home = proj.slice(0, proj.lastIndexOf("/"));
      const a = await w.agent("agent:a");
      await out(a, "mkdir -p sub && cd sub");
      await out(a, `mv ../sub ../old && ln -s ${home} ../sub`);
      const seen = await out(human, "pwd -P; echo x > note");
      assert.equal(exists(`${home}/note`), false, `the human's exec wrote in HOME: ${seen}`);
      assert.equal(seen, `${proj}\n`, "the human's exec runs where the human last left it");
      // Once the human moves the session again, that is where it runs.
      assert.equal(await out(human, "cd old && pwd -P"), `${proj}/old\n`);
      assert.equal(await out(human, "pwd -P"), `${proj}/old\n`);
      // So does a directory whose name is not UTF-8 (entered by the restore, after the spawn).
      await out(a, "mkdir -p $'\\377' && cd $'\\377'");
      await out(a, `mv ../$'\\377' ../old2 && ln -s ${home} ../$'\\377'`);
      const raw = await out(human, "pwd -P; echo y > note2");
      assert.equal(exists(`${home}/note2`), false, `the human's exec wrote in HOME: ${raw}`);
      assert.equal(raw, `${proj}/old\n`);
    });
  },
);

hostTest(
  "P-SBX-7 an agent's FUNCNEST (at 1 the human's script stopped at its first nested function call), TZ (every program loads the time zone file TZ=/path names, as TZDIR), GOWORK, GOCACHE and GOMODCACHE (go build compiles the directories a go.work lists, links cached objects and compiles cached module sources unchecked), MAVEN_ARGS and ANT_ARGS (arguments Maven 3.9 and ant add to every run: -f POM, -s SETTINGS, -lib DIR), GOOGLE_APPLICATION_CREDENTIALS (the account Google's tools sign in with) and HOSTFILE never reach the human",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `FUNCNEST=1; export TZ=${proj}/zone GOWORK=${proj}/go.work GOCACHE=${proj}/c`,
          `export GOMODCACHE=${proj}/m MAVEN_ARGS='-f ${proj}/pom.xml' ANT_ARGS='-lib ${proj}'`,
          `export HOSTFILE=${proj}/hosts GOOGLE_APPLICATION_CREDENTIALS=${proj}/key.json`,
        ].join("\n"),
      );
      const seen = await out(
        human,
        [
          "outer() { inner; }; inner() { echo nested; }; outer",
          "for v in FUNCNEST TZ GOWORK GOCACHE GOMODCACHE MAVEN_ARGS ANT_ARGS HOSTFILE \\",
          "  GOOGLE_APPLICATION_CREDENTIALS; do",
          '  [ -z "${!v+x}" ] || echo "$v reached the human"',
          "done",
        ].join("\n"),
      );
      assert.equal(seen, "nested\n");
      assert.equal(await out(a, 'echo "$FUNCNEST $TZ"'), `1 ${proj}/zone\n`, "its own");
    });
  },
);

hostTest(
  "P-SBX-7 an agent's GIO_EXTRA_MODULES never reaches the human: the human's `gio info /` loaded every library in the directory it names, running the agent's code; nor do GStreamer's, GTK's, GDK's, SDL's, EGL's, GLX's, Vulkan's and OpenCL's module settings, nor a `*_FILES` or `*_FILENAMES` list of files to load",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          "mkdir -p mods",
          `printf '#include <stdlib.h>\\n__attribute__((constructor)) static void run(void) { system("touch ${pwned}"); }\\n' > evil.c`,
          "gcc -shared -fPIC -o mods/libevil.so evil.c",
          `export GIO_EXTRA_MODULES=${proj}/mods GST_PLUGIN_SYSTEM_PATH_1_0=${proj}/mods`,
          `export GST_PLUGIN_SCANNER=${proj}/evil GTK3_MODULES=evil GDK_PIXBUF_MODULEDIR=${proj}/mods`,
          `export SDL_DYNAMIC_API=${proj}/mods/libevil.so __EGL_VENDOR_LIBRARY_FILENAMES=${proj}/e.json`,
          `export __GLX_VENDOR_LIBRARY_NAME=evil VK_ICD_FILENAMES=${proj}/v.json GTK2_RC_FILES=${proj}/rc`,
          `export OCL_ICD_FILENAMES=${proj}/mods/libevil.so`,
        ].join("\n"),
      );
      await Deno.remove(pwned).catch(() => {});
      const seen = await out(
        human,
        [
          "! command -v gio >/dev/null || gio info / >/dev/null 2>&1",
          "for v in GIO_EXTRA_MODULES GST_PLUGIN_SYSTEM_PATH_1_0 GST_PLUGIN_SCANNER GTK3_MODULES \\",
          "  GDK_PIXBUF_MODULEDIR SDL_DYNAMIC_API __EGL_VENDOR_LIBRARY_FILENAMES \\",
          "  __GLX_VENDOR_LIBRARY_NAME VK_ICD_FILENAMES GTK2_RC_FILES OCL_ICD_FILENAMES; do",
          '  [ -z "${!v+x}" ] || echo "$v reached the human"',
          "done",
        ].join("\n"),
      );
      assert.equal(exists(pwned), false, `the agent's module ran as the human:\n${seen}`);
      assert.equal(seen, "");
    });
  },
);

hostTest(
  "P-SBX-7 an agent's MAVEN_BASEDIR never reaches the human: the human's `mvn` in their own project read the JVM options of the agent's .mvn/jvm.config, and -XX:OnOutOfMemoryError ran the agent's program; nor do the like of other build tools, package managers and tools (JAVACMD, GRADLE_*, KUBECTL_EXTERNAL_DIFF, PGSERVICEFILE, TMUX_TMPDIR, COREPACK_*, USE_BAZEL_VERSION, MIX_*, OPAMROOT, GHC_ENVIRONMENT, NUGET_*, PIPENV_*, VAGRANT_*, HELM_*, HF_ENDPOINT, TEXINPUTS, shell_escape, DBUS_SYSTEM_BUS_ADDRESS)",
  NEEDS_TIER_B,
  async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj, box } = w;
      const pwned = `${proj}/pwned`;
      const mine = `${box.dir}/home/mine`;
      await Deno.mkdir(mine);
      await Deno.writeTextFile(
        `${mine}/pom.xml`,
        "<project><modelVersion>4.0.0</modelVersion><groupId>h</groupId>" +
          "<artifactId>mine</artifactId><version>1</version><packaging>pom</packaging></project>\n",
      );
      const a = await w.agent("agent:a");
      const names: Record<string, string> = {
        MAVEN_BASEDIR: `${proj}/mb`,
        JAVACMD: `${proj}/evil`,
        GRADLE_LIBS_REPO_OVERRIDE: "http://127.0.0.1:9/",
        KUBECTL_EXTERNAL_DIFF: `${proj}/evil`,
        PGSERVICEFILE: `${proj}/pg`,
        TMUX_TMPDIR: proj,
        COREPACK_NPM_REGISTRY: "http://127.0.0.1:9",
        USE_BAZEL_VERSION: `${proj}/evil`,
        MIX_ARCHIVES: proj,
        OPAMROOT: proj,
        GHC_ENVIRONMENT: `${proj}/env`,
        NUGET_PACKAGES: proj,
        PIPENV_PYTHON: `${proj}/evil`,
        VAGRANT_CWD: proj,
        HELM_PLUGINS: proj,
        HF_ENDPOINT: "http://127.0.0.1:9",
        TEXINPUTS: `${proj}//:`,
        shell_escape: "t",
        DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${proj}/bus`,
      };
      await out(
        a,
        [
          `printf '#!/bin/sh\\ntouch ${pwned}\\n' > evil && chmod +x evil && mkdir -p mb/.mvn`,
          `printf '%s\\n' '-Xmx3m -XX:OnOutOfMemoryError=${proj}/evil' > mb/.mvn/jvm.config`,
          "export " + Object.entries(names).map(([n, v]) => `${n}='${v}'`).join(" "),
        ].join("\n"),
      );
      const seen = await out(
        human,
        [
          `! command -v mvn >/dev/null || (cd ${mine} && mvn -q -o validate >/dev/null 2>&1)`,
          `for v in ${Object.keys(names).join(" ")}; do`,
          '  [ -z "${!v+x}" ] || echo "$v reached the human"',
          "done",
        ].join("\n"),
      );
      assert.equal(exists(pwned), false, `the agent's program ran as the human:\n${seen}`);
      assert.equal(seen, "");
    });
  },
);

Deno.test({
  name:
    "P-SBX-7 the shared cwd is no channel into the human's git: an agent's exec ran `git init evil && git -C evil config core.fsmonitor PROGRAM && cd evil`, and the human's next `git status` (in the cwd the agent left) ran the agent's program as the human [ignored: found by probe9; P-SBX-6 lets a run write the config of a repository it creates (protected only from the next exec on), and G-TRUST-4 shares the cwd, so the human's git in it runs that config: needs a SPEC decision]",
  ignore: true,
  fn: async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const pwned = `${proj}/pwned`;
      const a = await w.agent("agent:a");
      await out(
        a,
        [
          `printf '#!/bin/sh\\ntouch ${pwned}\\n' > evil.sh && chmod +x evil.sh`,
          `git init -q evil && git -C evil config core.fsmonitor ${proj}/evil.sh && cd evil`,
        ].join("\n"),
      );
      await out(human, "git status >/dev/null 2>&1; true");
      assert.equal(exists(pwned), false, "the agent's fsmonitor ran as the human");
    });
  },
});

hostTest(
  "P-SBX-7 an agent's locale never reaches the human: the human read a file of the agent's into a variable (`note=$(cat note)`, dumped in UTF-8), the agent exported LC_ALL=big5 (a Big5 locale the system has), and the human's next exec restored that variable in Big5, where \\xbd\\x5c is one character: the quote it escaped closed the value and the rest ran as the human",
  NEEDS_TIER_B,
  async () => {
    const locales = await Deno.makeTempDir({ prefix: "shoal-locale-" });
    try {
      await new Deno.Command("localedef", {
        args: ["-i", "C", "-f", "BIG5", `${locales}/big5`],
        stdout: "null",
        stderr: "null",
      }).output();
      assert.ok(exists(`${locales}/big5/LC_CTYPE`), "localedef failed");
      // the human's own: a UTF-8 locale, and a system with a Big5 one
      const env = { LOCPATH: locales, LANG: "C.UTF-8" };
      await world({ "agent:a": CODER }, env, async (w) => {
        const { human, proj } = w;
        const pwned = `${proj}/pwned`;
        const a = await w.agent("agent:a");
        await out(a, `printf '\\357\\277\\275";/bin/touch ${pwned};#' > note`);
        await out(human, "note=$(cat note)");
        await out(a, "export LC_ALL=big5 LANG=big5 LC_CTYPE=big5 LANGUAGE=zh");
        const seen = await out(human, 'echo "${LC_ALL-unset} ${LC_CTYPE-unset} $LANG"');
        assert.equal(exists(pwned), false, "the human's own variable ran code in Big5");
        assert.equal(seen, "unset unset C.UTF-8\n");
      });
    } finally {
      await Deno.remove(locales, { recursive: true });
    }
  },
);

Deno.test({
  name:
    "P-SBX-7 the human's own cwd inside the project is no way out of it for an agent: the human ran `cd sub`; the agent's next exec (starting and ending there) ran `mv ../sub ../old && ln -s HOME ../sub`, and the human's next exec ran in HOME (its `echo x > note` wrote ~/note) [ignored: found by probe9; the session keeps its cwd as a path, in a directory the agent may write, and P-SBX-7 speaks of session state (variables), not of the path the human's cwd names changing under it: whether the human's next exec should follow the path, stay in the directory it was in, or be refused needs a SPEC decision]",
  ignore: true,
  fn: async () => {
    await world({ "agent:a": CODER }, {}, async (w) => {
      const { human, proj } = w;
      const home = proj.slice(0, proj.lastIndexOf("/"));
      await out(human, "mkdir -p sub && cd sub");
      const a = await w.agent("agent:a");
      // its exec starts in the human's sub and ends there: no cwd change
      await out(a, `mv ../sub ../old && ln -s ${home} ../sub`);
      const seen = await out(human, "pwd -P; echo x > note");
      assert.equal(exists(`${home}/note`), false, `the human's exec wrote in HOME: ${seen}`);
    });
  },
});
