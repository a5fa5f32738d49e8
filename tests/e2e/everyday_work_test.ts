/**
 * M-ONB-1..3, P-SBX-*, P-NET-*: a developer's everyday work, run by an agent provisioned exactly
 * as a user does it (`shoal-mcp --print-config claude-code --project DIR` under a bare
 * environment with a fresh HOME holding only a .gitconfig), through the real facade and sandbox.
 * What works is checked to work; what the SPEC leaves open is written down as ignored tests.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { hostTest, NEEDS_TIER_B } from "../_support/host.ts";
import type { Rec } from "../_support/rec.ts";
import { parsePrinted, type Printed, shoalMcp } from "../_support/printed_config.ts";
import { type Sandbox, sandbox } from "../_support/sandbox.ts";
import { hostGit } from "../_support/git.ts";
import { waitUntil } from "../_support/wait.ts";
import { existsSync } from "node:fs";

const DENO_DIR = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;

/** A user's project, the configuration printed for it, and MCP clients on that configuration. */
interface Desk {
  box: Sandbox;
  home: string;
  project: string;
  printed: Printed;
  /** An SDK client on exactly the printed server (with `env` over it), started in `/`. */
  start(env?: Record<string, string>): Promise<Client>;
}

/** Provisions the agent as a user does, runs `body`, then closes every client and cleans up. */
async function atDesk(body: (desk: Desk) => Promise<void>): Promise<void> {
  const box = await sandbox();
  const clients: Client[] = [];
  try {
    const home = `${box.dir}/home`;
    await Deno.writeTextFile(
      `${home}/.gitconfig`,
      "[user]\n\tname = Dev\n\temail = dev@example.com\n",
    );
    const project = `${box.dir}/proj`;
    await Deno.mkdir(project);
    const user = { PATH: "/usr/bin:/bin", HOME: home, XDG_RUNTIME_DIR: `${box.dir}/run`, DENO_DIR };
    const out = await shoalMcp(["--print-config", "claude-code", "--project", project], user);
    assert.equal(out.code, 0, out.stderr);
    const printed = parsePrinted("claude-code", out.stdout);
    const start = async (env: Record<string, string> = {}) => {
      const client = new Client({ name: "dev", version: "0" });
      await client.connect(
        new StdioClientTransport({
          command: printed.command,
          args: printed.args,
          env: { ...printed.env, DENO_DIR, ...env },
          cwd: "/",
          stderr: "pipe",
        }),
      );
      clients.push(client);
      return client;
    };
    await body({ box, home, project, printed, start });
  } finally {
    for (const client of clients) await client.close();
    await box.cleanup();
  }
}

interface Ran {
  /** The exec ran and exited 0. */
  ok: boolean;
  /** The JSON-RPC error code of a refusal, else null. */
  code: number | null;
  text: string;
  value: Rec | undefined;
}

async function run(client: Client, src: string, extra: Rec = {}): Promise<Ran> {
  const r = await client.callTool(
    { name: "shoal_exec", arguments: { src, ...extra } },
    undefined,
    { timeout: 300_000 },
  ) as { isError: boolean; structuredContent: Rec; content: { text?: string }[] };
  const value = r.structuredContent.value as Rec | undefined;
  return {
    ok: !r.isError && value?.ok === true,
    code: r.isError ? Number(r.structuredContent.code) : null,
    text: r.content.map((c) => c.text ?? "").join("\n"),
    value,
  };
}

/** Runs each line in order and returns those that did not run and exit 0, with what they said. */
async function failing(client: Client, lines: string[]): Promise<string[]> {
  const failed: string[] = [];
  for (const src of lines) {
    const ran = await run(client, src);
    if (!ran.ok) failed.push(`${src} → ${ran.text.slice(0, 400)}`);
  }
  return failed;
}

/**
 * A test of a behaviour the SPEC has yet to decide (its name says which rule): ignored until it
 * is; it fails today, and passes once the behaviour its assertions ask for is the decided one.
 */
function undecided(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: true, fn });
}

hostTest(
  "M-ONB-3: the printed agent does a developer's everyday work in its project: git (branch, stash, tag, worktree), a venv's python, npm scripts, cc and make, here-docs, mktemp across calls, find/xargs/sed -i, tar/gzip",
  NEEDS_TIER_B,
  () =>
    atDesk(async ({ project, start }) => {
      const agent = await start();
      const failed = await failing(agent, [
        "git init -q && printf 'print(\"hi\")\\n' > main.py && git add . && git commit -qm first",
        "git checkout -q -b topic && echo '# note' >> main.py && git commit -qam second",
        "git log --oneline | wc -l && git diff HEAD~1 --stat",
        "echo '# wip' >> main.py && git stash -q && git stash list | grep -q WIP && git stash pop -q && git checkout -q -- main.py",
        "git tag v1 && git worktree add -q side && git worktree list | grep -q side",
        "git switch -q - && git branch -D topic",
        "python3 -m venv .venv && .venv/bin/python main.py",
        `cat > package.json <<'EOF'\n{"name":"x","version":"1.0.0","scripts":{"test":"node -e \\"console.log(42)\\""}}\nEOF`,
        "npm test --silent | grep -qx 42",
        "printf 'int main(void){return 0;}\\n' > a.c && printf 'a: a.c\\n\\tcc -o a a.c\\n' > Makefile && make -s && ./a",
        't=$(mktemp) && echo kept > "$t" && echo "$t" > tmpname',
        'grep -qx kept "$(cat tmpname)"',
        "find . -name '*.py' -not -path './.venv/*' -not -path './side/*' | xargs sed -i 's/hi/bye/'",
        "grep -q bye main.py && awk 'END {print NR}' main.py",
        "tar czf src.tgz main.py a.c && tar tzf src.tgz | wc -l && gzip -kf a.c && ls a.c.gz",
        "sleep 0.2 & wait && echo waited",
      ]);
      assert.deepEqual(failed, []);
      const task = await run(agent, "sleep 0.2; echo done", { background: true });
      assert.equal(task.code, null, task.text);
      assert.ok(await Deno.stat(`${project}/side/main.py`), "the worktree is in the project");
    }),
);

hostTest(
  "M-ONB-3, K-PTY-1: a terminal the agent may not open names the grants it lacks, as an exec's refusal of the same line does (it said only 'policy denies spawning cat')",
  NEEDS_TIER_B,
  () =>
    atDesk(async ({ home, start }) => {
      await Deno.mkdir(`${home}/.ssh`);
      await Deno.writeTextFile(`${home}/.ssh/id_rsa`, "SECRET\n");
      const agent = await start();
      for (
        const [cmd, args, lacks] of [
          ["cat", [`${home}/.ssh/id_rsa`], `fs.read "${home}/.ssh/id_rsa"`],
          ["curl", ["https://example.com/"], `net_connect "example.com:443"`],
        ] as const
      ) {
        const exec = await run(agent, `${cmd} ${args.join(" ")}`);
        assert.equal(exec.code, -32010, exec.text);
        const pty = await agent.callTool({
          name: "shoal_pty_open",
          arguments: { cmd, args: [...args] },
        }) as { isError: boolean; structuredContent: Rec };
        assert.equal(pty.isError, true);
        const refusal = pty.structuredContent;
        assert.equal(refusal.code, -32010);
        assert.ok(String(refusal.message).includes(`lacks ${lacks}`), String(refusal.message));
        assert.deepEqual((refusal.data as Rec).missing, [lacks]);
        assert.doesNotMatch(JSON.stringify(refusal), /SECRET/);
      }
    }),
);

undecided(
  "[needs SPEC decision M-ONB-2 vs P-SBX-3: should the project profile read the system roots its sandbox shows read-only?] the agent's cat/ls/find/readlink of /usr/include, /usr/share/doc, /etc/os-release, /proc/cpuinfo are denied (fs.read) while python3 in the same sandbox reads them",
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const viaPython = await run(
        agent,
        `python3 -c "print(open('/usr/include/stdio.h').read(9))"`,
      );
      assert.ok(viaPython.ok, "the sandbox shows /usr to an interpreter");
      const failed = await failing(agent, [
        "head -3 /usr/include/stdio.h",
        "find /usr/include -maxdepth 1 -name stdio.h",
        "ls /usr/share/doc | head -1",
        "cat /etc/os-release",
        "grep -c processor /proc/cpuinfo",
        "readlink -f /usr/bin/python3",
      ]);
      assert.deepEqual(failed, []);
    }),
);

undecided(
  "[needs SPEC decision P-SBX-3/P-EVAL-1: how does the static layer judge paths in a sandboxed principal's private /tmp?] mktemp and cc -o /tmp/x work there, but echo > /tmp/x, ls /tmp and cat /tmp/x are denied as if they touched the host's /tmp",
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const t = await run(
        agent,
        "t=$(mktemp) && echo x > \"$t\" && cc -x c -o /tmp/a - <<< 'int main(void){return 0;}' && /tmp/a",
      );
      assert.ok(t.ok, t.text);
      const failed = await failing(agent, [
        "echo scratch > /tmp/scratch.txt",
        "cat /tmp/scratch.txt",
        "ls /tmp",
        "touch f.c && cp f.c /tmp/ && rm -f /tmp/scratch.txt",
      ]);
      assert.deepEqual(failed, []);
    }),
);

hostTest(
  "M-ONB-3, P-NET-1: git ls-remote of an https URL and python's urlopen, fetches the static layer cannot see, are refused naming the destination (they failed 'Could not resolve host', naming no destination nor grant, and the outcome had no net_refused)",
  NEEDS_TIER_B,
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const missing: string[] = [];
      for (
        const src of [
          "git ls-remote https://example.com/r.git",
          "python3 -c \"import urllib.request as u; u.urlopen('https://example.com/', timeout=5)\"",
        ]
      ) {
        const ran = await run(agent, src);
        const refused = JSON.stringify(ran.value?.net_refused ?? []);
        if (!refused.includes("example.com:443") && !ran.text.includes("example.com:443")) {
          missing.push(`${src} → ${ran.text.slice(0, 300)}`);
        }
      }
      assert.deepEqual(missing, []);
    }),
);

undecided(
  "[needs SPEC decision P-SBX-3/K-BASH-5: what becomes of a sandboxed cd out of the sandbox?] cd .., cd /tmp, cd ~ report ok and print the new directory, but the next exec runs back in the project without a word",
  () =>
    atDesk(async ({ box, project, start }) => {
      const agent = await start();
      const silent: string[] = [];
      for (
        const [src, dir] of [["cd ..", box.dir], ["cd /tmp", "/tmp"], ["cd ~", `${box.dir}/home`]]
      ) {
        const moved = await run(agent, `${src} && pwd`);
        const after = await run(agent, "pwd");
        // either the cd is refused/fails, or the session really is there afterwards
        if (moved.ok && after.text.trim() === project) silent.push(`${src}: printed ${dir}`);
      }
      assert.deepEqual(silent, []);
    }),
);

undecided(
  "[needs SPEC decision P-SBX-3/P-SBX-7: how does an agent get back once the session's cwd left its sandbox?] the human's cd / in the project's shared session leaves every agent exec, even cd PROJECT, refused with cwd_outside_sandbox, naming no way out",
  () =>
    atDesk(async ({ project, start }) => {
      const agent = await start();
      assert.ok((await run(agent, "pwd")).ok);
      const human = await start({ SHOAL_TOKEN: "" });
      assert.ok((await run(human, "cd /")).ok);
      const back = await run(agent, `cd ${project} && pwd`);
      assert.ok(back.ok, back.text);
    }),
);

hostTest(
  "P-SBX-3, M-ONB-3: a sandboxed agent's tools keep caches and logs in a ~/.cache and ~/.npm of its own (empty tmpfs, as its /tmp): they were read-only (PermissionError, npm 'Log files were not written'); the human's HOME stays unseen and untouched",
  NEEDS_TIER_B,
  () =>
    atDesk(async ({ home, start }) => {
      const agent = await start();
      const names = () => [...Deno.readDirSync(home)].map((e) => e.name).sort();
      const before = names();
      const failed = await failing(agent, [
        `python3 -c "import os; os.makedirs(os.path.expanduser('~/.cache/tool'), exist_ok=True)"`,
        `node -e "require('fs').mkdirSync(require('os').homedir() + '/.npm/_logs', {recursive: true})"`,
        // the human's files in HOME are not shown: only the project and the git identity
        `python3 -c "import os; print(sorted(os.listdir(os.path.expanduser('~'))))" | grep -Fqx "['.cache', '.config', '.gitconfig', '.npm']"`,
        // ~/.config holds only git/, where the sandbox shows git the excludes of its placeholders
        `python3 -c "import os; print([w[0] for w in os.walk(os.path.expanduser('~/.config'))])" | grep -Fqx "['$HOME/.config', '$HOME/.config/git']"`,
      ]);
      assert.deepEqual(failed, []);
      assert.deepEqual(names(), before);
    }),
);

undecided(
  "[needs SPEC decision P-EVAL-1/P-NET-1: how is a sandboxed agent's connect to a server it started inside its own network namespace judged?] `python3 -m http.server 8765 &` then `curl http://127.0.0.1:8765/` is denied (lacks net_connect 127.0.0.1:8765), though only the namespace's loopback is reachable; the grant that message asks for would forward 8765 to the host's loopback instead, where the agent's server is not",
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const served = await run(
        agent,
        "python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & sleep 1; " +
          "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8765/; kill %1",
      );
      assert.ok(served.ok && served.text.includes("200"), served.text);
    }),
);

undecided(
  "[needs SPEC decision P-SBX-6 (static layer) vs M-ONB-3: must a git switch or stash pop that leaves every tracked protected file as it is run without approval?] in a repository tracking .vscode/settings.json or a .gitmodules (any with a submodule), git switch between branches and git stash pop ask the human's approval (-32011 'fs.write .../.gitmodules is a protected name'), though neither writes those files; telling would take reading git's objects (the trees of HEAD, the target, the stash)",
  () =>
    atDesk(async ({ project, start }) => {
      await hostGit(project, "init", "-q", "-b", "main");
      await Deno.mkdir(`${project}/.vscode`);
      await Deno.writeTextFile(`${project}/.vscode/settings.json`, "{}\n");
      await Deno.writeTextFile(`${project}/.gitmodules`, "");
      await Deno.writeTextFile(`${project}/main.py`, "print(1)\n");
      await hostGit(project, "add", ".");
      await hostGit(project, "commit", "-qm", "first");
      const agent = await start();
      const failed = await failing(agent, [
        "git switch -q -c topic && echo '# t' >> main.py && git commit -qam second",
        "git switch -q main && git switch -q topic",
        "echo '# wip' >> main.py && git stash -q && git stash pop -q",
      ]);
      assert.deepEqual(failed, []);
    }),
);

undecided(
  "[needs SPEC decision M-ONB-1/M-ONB-3: what does --project DIR grant when DIR is a subdirectory of a repository (a monorepo's package)?] the project profile grants DIR/** only, so git status, git log and git commit in DIR are denied ('lacks fs.read <repository top>'); granting the repository's .git would let the agent stage and commit the whole repository, not only DIR",
  () =>
    atDesk(async ({ box, project, start }) => {
      // the project is a package inside the repository whose top is its parent
      await hostGit(box.dir, "init", "-q", "-b", "main");
      await Deno.writeTextFile(`${project}/main.py`, "print(1)\n");
      await hostGit(box.dir, "add", "proj/main.py");
      await hostGit(box.dir, "commit", "-qm", "first");
      const agent = await start();
      const failed = await failing(agent, [
        "git status --short .",
        "git log --oneline -1",
        "echo '# more' >> main.py && git commit -qm more main.py",
      ]);
      assert.deepEqual(failed, []);
    }),
);

hostTest(
  "P-SBX-6, M-ONB-3: git stash -u and git clean -fd leave the placeholders of absent protected names alone, which the sandbox shows git as ignored (in a repository holding no protected file, both exited 1 on every placeholder, 'failed to remove .bashrc/: Device or resource busy', 18 lines, and git stash -u && git stash pop left the work stashed and in the tree at once)",
  NEEDS_TIER_B,
  () =>
    atDesk(async ({ project, start }) => {
      await hostGit(project, "init", "-q", "-b", "main");
      await Deno.writeTextFile(`${project}/main.py`, "print(1)\n");
      await hostGit(project, "add", ".");
      await hostGit(project, "commit", "-qm", "first");
      const agent = await start();
      const failed = await failing(agent, [
        "echo draft > notes.txt && echo '# wip' >> main.py",
        "git stash -u && git stash pop && test -f notes.txt && git stash list | wc -l | grep -qx 0",
        "mkdir -p build && touch build/a.o && git clean -fdq && test ! -e build",
      ]);
      assert.deepEqual(failed, []);
    }),
);

hostTest(
  "M-TOOL-3, V-REF-3: a model with only the tools reads its background run's result: shoal_get {ref:\"task:N\"} gives the task's state while it runs, then its result (path and slice as for out:N), which is not out:N once other execs ran meanwhile",
  null,
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const get = async (args: Rec) => {
        const r = await agent.callTool({ name: "shoal_get", arguments: args }) as {
          isError: boolean;
          structuredContent: Rec;
        };
        return { isError: r.isError, got: r.structuredContent };
      };
      const src = "until [ -e go ]; do sleep 0.05; done; echo finished; echo warned >&2; exit 3";
      const bg = await agent.callTool({
        name: "shoal_exec",
        arguments: { src, background: true },
      }) as { structuredContent: Rec };
      const task = String(bg.structuredContent.task);
      assert.match(task, /^task:\d+$/);
      const running = await get({ ref: task });
      assert.equal(running.isError, false);
      assert.equal(running.got.task, task);
      assert.equal(running.got.state, "running");
      assert.equal(running.got.result_ref, null);
      assert.ok((await run(agent, "echo other")).ok);
      assert.ok((await run(agent, "touch go")).ok);
      let ended = running;
      for (let i = 0; i < 200 && ended.got.state !== undefined; i++) {
        assert.ok((await run(agent, "sleep 0.05")).ok);
        ended = await get({ ref: task, path: "err" });
      }
      assert.equal(ended.isError, false, JSON.stringify(ended.got));
      assert.match(String(ended.got.ref), /^out:\d+$/);
      assert.notEqual(ended.got.ref, "out:1");
      assert.deepEqual(ended.got.value, { $: "str", v: "warned\n" });
      const whole = await get({ ref: task });
      const outcome = whole.got.value as Rec;
      assert.equal(outcome.$, "outcome");
      assert.equal(outcome.status, 3);
      assert.deepEqual(outcome.out, { $: "str", v: "finished\n" });
      const part = await get({ ref: task, path: "out", slice: [0, 3] });
      assert.deepEqual(part.got.value, { $: "str", v: "fin" });
      const unknown = await get({ ref: "task:9999" });
      assert.equal(unknown.isError, true);
    }),
);

undecided(
  "[needs SPEC decision K-BASH-3 vs P-SBX-4: may a sandboxed exec's detached job outlive the exec?] `nohup make > build.log 2>&1 &` (or `( … & )`), an agent's way to keep a long build going while it works on, is killed the moment its exec ends (the resident sandbox sweeps what an ended run left), so build.log stops after its first line; the local human's same job runs on as K-BASH-3 says ('the descendant is not killed')",
  () =>
    atDesk(async ({ project, start }) => {
      const human = await start({ SHOAL_TOKEN: "" });
      const agent = await start();
      const job = (mark: string) =>
        `nohup sh -c 'sleep 1; echo done > ${mark}' > /dev/null 2>&1 & echo started`;
      const finished = (mark: string) => waitUntil(() => existsSync(`${project}/${mark}`), 8000);
      assert.ok((await run(human, job("human.txt"))).ok);
      assert.ok(await finished("human.txt"), "the human's job outlives its exec (K-BASH-3)");
      assert.ok((await run(agent, job("agent.txt"))).ok);
      assert.ok(await finished("agent.txt"), "the agent's job was killed when its exec ended");
    }),
);

undecided(
  "[needs SPEC decision V-RENDER-1/K-BASH-10 for a tool's text: what does the model see of an output with one byte that is not UTF-8?] `ls` in a project holding README.md and one Latin-1 file name (caf\\xe9.txt) answers `<19 bytes>` as its whole text, and its structuredContent only base64: no name of the listing reaches the model (a terminal shows them, the one byte as �)",
  () =>
    atDesk(async ({ project, start }) => {
      await Deno.writeTextFile(`${project}/README.md`, "hi\n");
      const agent = await start();
      const made = await run(agent, "touch $'caf\\xe9.txt' && ls");
      assert.ok(made.ok, made.text);
      assert.match(made.text, /README\.md/);
    }),
);

undecided(
  "[needs SPEC decision P-SBX-6 vs M-ONB-3: may an agent remove a repository it made inside its project?] after `git clone -q . build/clone` (or a test fixture's `git init build/dep`) in one exec, `rm -rf build` in the next exits 1 with ~30 'Read-only file system'/'Device or resource busy' lines and leaves each .git half deleted (its config, hooks/*.sample and the placeholders commondir and config.worktree): the clean-up of a build directory needs the human",
  () =>
    atDesk(async ({ project, start }) => {
      await hostGit(project, "init", "-q", "-b", "main");
      await Deno.writeTextFile(`${project}/main.py`, "print(1)\n");
      await hostGit(project, "add", ".");
      await hostGit(project, "commit", "-qm", "first");
      const agent = await start();
      const made = await run(agent, "mkdir -p build && git clone -q . build/clone && echo made");
      assert.ok(made.ok, made.text);
      const failed = await failing(agent, ["rm -rf build && test ! -e build"]);
      assert.deepEqual(failed, []);
    }),
);

undecided(
  "[needs SPEC decision V-RENDER-1/K-BASH-10 vs M-OUT-2: what text does the model get of `cat` of a JSON file?] `cat package.json` answers a render of the parsed value, not the file: nested members on one line cut at 80 scalars, so a script past the cut (`serve`) is in no line of the text, and `echo '[1, 2, 3]'` reads as three lines `1`, `2`, `3`; a client that hands the model the text (M-OUT-2) shows it a file that is not there",
  () =>
    atDesk(async ({ project, start }) => {
      const manifest = {
        name: "web",
        scripts: {
          test: 'echo "Error: no test specified" && exit 1',
          start: "node index.js",
          serve: "node server.js",
        },
      };
      await Deno.writeTextFile(`${project}/package.json`, JSON.stringify(manifest, null, 2));
      const agent = await start();
      const shown = await run(agent, "cat package.json");
      assert.ok(shown.ok, shown.text);
      assert.match(shown.text, /serve/);
      const list = await run(agent, "echo '[1, 2, 3]'");
      assert.match(list.text, /\[1, 2, 3\]/);
    }),
);

undecided(
  "[needs SPEC decision V-RENDER-1 vs V-RENDER-3: which part of a failed outcome's render survives bounding?] a build that fails after 108 KB of stdout (`seq 1 20000; echo 'main.c:3: error: expected ;' >&2; exit 2`) answers the text of stdout's first 12765 lines and a marker: the compiler's error on stderr and `[exit status 2]` are in no line of it, though the error is a few bytes",
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const built = await run(
        agent,
        "seq 1 20000; echo 'main.c:3: error: expected ;' >&2; exit 2",
      );
      assert.equal(built.value?.status, 2);
      // booleans: the text is 64 KiB
      assert.ok(built.text.includes("main.c:3: error"), "the error is in the text");
      assert.ok(built.text.includes("[exit status 2]"), "the status is in the text");
    }),
);

undecided(
  "[needs SPEC decision P-SBX-3: how long does a sandboxed agent's private /tmp live?] a file the agent keeps in /tmp across calls (mktemp, as the first test here does) is gone once the human widens its policy entry (a net_connect grant, as README says to): /tmp is the tmpfs of the session's resident sandbox, and a new confinement starts a new one; undoing the edit does not bring it back",
  () =>
    atDesk(async ({ home, start }) => {
      const agent = await start();
      const made = await run(agent, 't=$(mktemp) && echo kept > "$t" && echo "$t" > tmpname');
      assert.ok(made.ok, made.text);
      assert.ok((await run(agent, 'grep -qx kept "$(cat tmpname)"')).ok, "kept across calls");
      const leash = `${home}/.config/shoal/leash.jsonc`;
      const text = await Deno.readTextFile(leash);
      assert.ok(text.includes('"net_connect": []'), text);
      await Deno.writeTextFile(
        leash,
        text.replace('"net_connect": []', '"net_connect": ["example.com:443"]'),
      );
      const after = await run(agent, 'grep -qx kept "$(cat tmpname)"');
      assert.ok(after.ok, after.text);
    }),
);

undecided(
  "[needs SPEC decision K-BASH-10/V-JSON-1 vs V-RENDER-1: may the text of a command that prints one number differ from what it printed?] `cat VERSION` of a file holding 1.10 answers `1.1`, `echo 12345678901234567890` (an id a script prints) answers `12345678901234567000.0`, `echo 1e5` answers `100000.0`: stdout that is one JSON number becomes an int or float and the text is its render, so a version, an id or a price reads as another",
  () =>
    atDesk(async ({ project, start }) => {
      await Deno.writeTextFile(`${project}/VERSION`, "1.10\n");
      const agent = await start();
      const shown: string[] = [];
      for (const src of ["cat VERSION", "echo 12345678901234567890", "echo 1e5"]) {
        shown.push((await run(agent, src)).text.trim());
      }
      assert.deepEqual(shown, ["1.10", "12345678901234567890", "1e5"]);
    }),
);

hostTest(
  "M-ONB-3, P-NET-1: npm install and pip download of the printed agent are refused naming registry.npmjs.org:443 and pypi.org:443 (npm waited 70 s retrying getaddrinfo EAI_AGAIN and pip 8 s, naming neither destination nor grant, and the outcome had no net_refused)",
  NEEDS_TIER_B,
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const unnamed: string[] = [];
      for (
        const [src, destination] of [
          ["npm install --no-audit --no-fund left-pad", "registry.npmjs.org:443"],
          ["python3 -m pip download --no-deps -d dl six", "pypi.org:443"],
        ]
      ) {
        const ran = await run(agent, src);
        const refused = JSON.stringify(ran.value?.net_refused ?? []);
        if (!refused.includes(destination) && !ran.text.includes(destination)) {
          unnamed.push(`${src} → ${ran.text.slice(0, 300)}`);
        }
      }
      assert.deepEqual(unnamed, []);
    }),
);

undecided(
  "[needs SPEC decision P-SBX-6 vs M-ONB-3: what may hold an absent protected name's place?] in a repository holding no .gitmodules, every git fetch and git pull of the agent (and of the human in a terminal, while the agent's sandbox lives) warns twice `unable to access '<project>/.gitmodules': Is a directory`: the placeholder of the absent name is an empty directory, which git reads as a broken .gitmodules",
  () =>
    atDesk(async ({ project, start }) => {
      await hostGit(project, "init", "-q", "-b", "main");
      await Deno.writeTextFile(`${project}/main.py`, "print(1)\n");
      await hostGit(project, "add", ".");
      await hostGit(project, "commit", "-qm", "first");
      const agent = await start();
      const pushed = await run(
        agent,
        "git init -q --bare up.git && git push -q ./up.git HEAD:refs/heads/main",
      );
      assert.ok(pushed.ok, pushed.text);
      const fetched = await run(agent, "git fetch -q ./up.git main && git pull -q ./up.git main");
      assert.ok(fetched.ok, fetched.text);
      assert.doesNotMatch(fetched.text, /gitmodules/);
    }),
);

hostTest(
  "P-SBX-6: in a project holding two directories of 10,050 files, a nested repository's .git/config and hooks stay read-only (the scan stopped after 10,000 entries, and the agent's python wrote `core.fsmonitor = touch PWNED` into zz/lib/.git/config and a pre-commit hook, which the human's next `git status` there ran unconfined)",
  NEEDS_TIER_B,
  () =>
    atDesk(async ({ project, start }) => {
      for (const dir of ["data1", "data2"]) {
        await Deno.mkdir(`${project}/${dir}`);
        for (let i = 0; i < 10_050; i++) await Deno.writeTextFile(`${project}/${dir}/f${i}`, "");
      }
      await Deno.mkdir(`${project}/zz`);
      await hostGit(`${project}/zz`, "init", "-q", "lib");
      const config = `${project}/zz/lib/.git/config`;
      const before = await Deno.readTextFile(config);
      const agent = await start();
      await run(
        agent,
        `python3 -c "open('zz/lib/.git/config', 'a').write('[core]\\n\\tfsmonitor = touch PWNED\\n')"; ` +
          `python3 -c "open('zz/lib/.git/hooks/pre-commit', 'w').write('#!/bin/sh\\n')"`,
      );
      assert.equal(await Deno.readTextFile(config), before, "the nested repository's config");
      assert.ok(!existsSync(`${project}/zz/lib/.git/hooks/pre-commit`), "its hooks");
    }),
);

undecided(
  "[needs SPEC decision P-SBX-3 (the AF_UNIX socket filter) vs M-ONB-3: may an agent's programs use Unix sockets they make themselves?] the filter that keeps the human's sockets (tmux's, ssh-agent's) out of reach refuses every socket(AF_UNIX): python's multiprocessing.Manager() dies with a bare EOFError, binding ./app.sock from python or node fails with EPERM, and tmux in the agent's PTY says 'error connecting to /tmp/tmux-0/default (Operation not permitted)'",
  () =>
    atDesk(async ({ start }) => {
      const agent = await start();
      const failed = await failing(agent, [
        `python3 -c "from multiprocessing import Manager; d = Manager().dict(); d[1] = 2; print(dict(d))"`,
        `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind('app.sock'); s.listen(); print('bound')"`,
      ]);
      assert.deepEqual(failed, []);
    }),
);
