/**
 * M-ONB-3, K-PTY-*, M-PROG-*: the rest of an agent's working day, provisioned exactly as a user
 * does it (`shoal-mcp --print-config claude-code --project DIR`, a fresh HOME holding only a
 * .gitconfig) and driven through the real SDK client, facade and sandbox: what
 * `everyday_work_test.ts` leaves out (history edits, odd file names, symlinks, long work as
 * tasks, big outputs read back by slices, editors and REPLs on a PTY) works as in a terminal.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import type { Rec } from "../_support/rec.ts";
import { parsePrinted, shoalMcp } from "../_support/printed_config.ts";
import { sandbox } from "../_support/sandbox.ts";
import { pollUntil } from "../_support/wait.ts";

const DENO_DIR = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;

/** Provisions the agent for a new project as a user does, runs `body` with its client, cleans up. */
async function workday(body: (agent: Client, project: string) => Promise<void>): Promise<void> {
  const box = await sandbox();
  let agent: Client | null = null;
  try {
    const home = `${box.dir}/home`;
    await Deno.writeTextFile(`${home}/.gitconfig`, "[user]\n\tname = Dev\n\temail = d@e.x\n");
    const project = `${box.dir}/proj`;
    await Deno.mkdir(project);
    const user = { PATH: "/usr/bin:/bin", HOME: home, XDG_RUNTIME_DIR: `${box.dir}/run`, DENO_DIR };
    const out = await shoalMcp(["--print-config", "claude-code", "--project", project], user);
    assert.equal(out.code, 0, out.stderr);
    const printed = parsePrinted("claude-code", out.stdout);
    agent = new Client({ name: "dev", version: "0" });
    await agent.connect(
      new StdioClientTransport({
        command: printed.command,
        args: printed.args,
        env: { ...printed.env, DENO_DIR },
        cwd: "/",
        stderr: "pipe",
      }),
    );
    await body(agent, project);
  } finally {
    await agent?.close();
    await box.cleanup();
  }
}

interface Called {
  isError: boolean;
  sc: Rec;
  text: string;
}

async function call(agent: Client, name: string, args: Rec): Promise<Called> {
  const r = await agent.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }) as {
    isError: boolean;
    structuredContent: Rec;
    content: { text?: string }[];
  };
  const text = r.content.map((c) => c.text ?? "").join("\n");
  return { isError: r.isError, sc: r.structuredContent, text };
}

/** Runs each line in order; returns those that were refused or did not exit 0, with what they said. */
async function failing(agent: Client, lines: string[]): Promise<string[]> {
  const failed: string[] = [];
  for (const src of lines) {
    const r = await call(agent, "shoal_exec", { src });
    if (r.isError || (r.sc.value as Rec).ok !== true) {
      failed.push(`${src} → ${r.text.slice(0, 400)}`);
    }
  }
  return failed;
}

/** The screen of `pty` once `done` holds for its rows joined by newlines (10 s at most). */
function screenWhen(agent: Client, pty: string, done: (screen: string) => boolean) {
  return pollUntil(
    async () => (await call(agent, "shoal_pty_read", { pty_id: pty })).sc,
    (read) => done((read.screen as string[]).join("\n")),
  );
}

hostTest(
  "M-ONB-3: the printed agent edits history (amend, rebase -i by GIT_SEQUENCE_EDITOR, autosquash, revert, cherry-pick, format-patch and am, notes), pushes to a bare repository by path, installs its package editable in a venv, builds with make -j, and handles odd file names and symlinks in its project",
  NEEDS_TIER_B,
  () =>
    workday(async (agent) => {
      const failed = await failing(agent, [
        "git init -q -b main && mkdir pkg && printf 'def add(a, b):\\n    return a + b\\n' > pkg/__init__.py && git add . && git commit -qm init",
        "echo '# a' >> pkg/__init__.py && git commit -qam a && echo '# b' >> pkg/__init__.py && git commit -qam b",
        "GIT_SEQUENCE_EDITOR=\"sed -i '2s/^pick/squash/'\" GIT_EDITOR=true git rebase -qi HEAD~2 && test $(git rev-list --count HEAD) = 2",
        "echo '# c' >> pkg/__init__.py && git commit -q --fixup HEAD -a && GIT_SEQUENCE_EDITOR=: git rebase -qi --autosquash HEAD~2 && test $(git rev-list --count HEAD) = 2",
        "EDITOR=true git commit -q --amend && git revert --no-edit HEAD >/dev/null && git cherry-pick HEAD~1 >/dev/null",
        "git format-patch -q -1 -o patches/ && git reset -q --hard HEAD~1 && git am -q patches/*.patch && rm -r patches",
        "git notes add -m reviewed HEAD && git log -1 --notes | grep -q reviewed",
        "git init -q --bare remote.git && git push -q ./remote.git HEAD:refs/heads/main && git ls-remote ./remote.git | grep -q refs/heads/main",
        'printf \'from setuptools import setup\\nsetup(name="pkg", version="0.1", packages=["pkg"])\\n\' > setup.py && python3 -m venv .venv && .venv/bin/pip install -q --no-index --no-build-isolation -e . && .venv/bin/python -c \'import pkg; assert pkg.add(2, 3) == 5\'',
        "mkdir tests && touch tests/__init__.py && printf 'import unittest\\nfrom pkg import add\\nclass T(unittest.TestCase):\\n    def test_add(self):\\n        self.assertEqual(add(2, 3), 5)\\n' > tests/test_add.py && python3 -m unittest -q 2>&1 | grep -q OK",
        "mkdir -p csrc && printf 'int twice(int x){return 2*x;}\\n' > csrc/u.c && printf 'int twice(int);\\nint main(void){return twice(21) != 42;}\\n' > csrc/m.c && printf 'app: m.o u.o\\n\\t$(CC) -o $@ $^\\n' > csrc/Makefile && make -s -j2 -C csrc && csrc/app && rm -rf csrc/*.o csrc/app",
        "mkdir -p 'dir with space/ünï' && echo hi > 'dir with space/ünï/fïlé 1.txt' && find . -name '*ïlé*' -print0 | xargs -0 cat | grep -qx hi",
        "touch -- -n '*' '~' \"q'uote\" '$HOME' && cat -- -n && rm -- -n '*' '~' \"q'uote\" '$HOME' && test ! -e '~'",
        "mkdir -p lib && echo 'v=1' > lib/real.py && ln -s lib/real.py alias.py && echo 'v=2' > alias.py && grep -qx v=2 lib/real.py && ln -s \"$PWD/lib\" abslib && cat abslib/real.py && rm alias.py abslib",
        "rm -rf 'dir with space' lib build .venv *.egg-info && test ! -e .venv",
      ]);
      assert.deepEqual(failed, []);
    }),
);

hostTest(
  "M-PROG-1, K-TASK-5, K-PTY-*: long work as a task (timeout_ms ran out, then cancelled; a background one finishing), a big output read back by slices, and vi and the python REPL on a PTY of the printed agent",
  NEEDS_TIER_B,
  () =>
    workday(async (agent, project) => {
      // a build that outlives its wait budget is a task; cancelled, it stops
      const slow = await call(agent, "shoal_exec", { src: "sleep 30", timeout_ms: 1000 });
      assert.equal(slow.sc.timed_out, true, slow.text);
      const cancel = await call(agent, "shoal_cancel", { task: slow.sc.task as string });
      assert.equal(cancel.sc.cancel_requested, true, cancel.text);
      const bg = await call(agent, "shoal_exec", {
        src: "echo built > build.log",
        background: true,
      });
      assert.match(String(bg.sc.task), /^task:\d+$/);
      await pollUntil(
        () => Deno.readTextFile(`${project}/build.log`).catch(() => ""),
        (t) => t === "built\n",
      );
      // 588895 bytes of stdout and 168894 of stderr: elided, read back by slices
      const big = await call(agent, "shoal_exec", { src: "seq 1 100000; seq 1 30000 >&2; exit 2" });
      const value = big.sc.value as Rec;
      assert.equal(value.status, 2);
      assert.equal((value.out as Rec).n, 588895);
      const ref = big.sc.ref as string;
      const head = await call(agent, "shoal_get", { ref, path: "out", slice: [0, 6] });
      assert.deepEqual(head.sc.value, { $: "str", v: "1\n2\n3\n" });
      const tail = await call(agent, "shoal_get", { ref, path: "err", slice: [168888, 168894] });
      assert.deepEqual(tail.sc.value, { $: "str", v: "30000\n" });
      // vi: wait for its screen, type, write and quit
      const vi = await call(agent, "shoal_pty_open", { cmd: "vi", args: ["notes.txt"] });
      const pty = vi.sc.pty_id as string;
      await screenWhen(agent, pty, (s) => s.includes('"notes.txt"'));
      await call(agent, "shoal_pty_send", {
        pty_id: pty,
        input: ["ihello from vi", { key: "Escape" }, ":wq", { key: "Enter" }],
      });
      await pollUntil(
        async () => (await call(agent, "shoal_pty_read", { pty_id: pty })).sc,
        (read) => read.alive === false,
      );
      assert.equal(await Deno.readTextFile(`${project}/notes.txt`), "hello from vi\n");
      // the REPL: a multi-line definition, then its use
      const py = await call(agent, "shoal_pty_open", { cmd: "python3", args: ["-q"] });
      const repl = py.sc.pty_id as string;
      await screenWhen(agent, repl, (s) => s.includes(">>>"));
      await call(agent, "shoal_pty_send", {
        pty_id: repl,
        input: [
          "def f(x):",
          { key: "Enter" },
          "    return x * 2",
          { key: "Enter" },
          {
            key: "Enter",
          },
          "f(21)",
          { key: "Enter" },
        ],
      });
      await screenWhen(agent, repl, (s) => s.split("\n").includes("42"));
      const closed = await call(agent, "shoal_pty_close", { pty_id: repl });
      assert.equal(closed.sc.closed, true, closed.text);
    }),
);
