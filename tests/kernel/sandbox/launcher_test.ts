/**
 * The launcher inside a resident sandbox (issue 12): a run it starts is a host process that leads
 * its own session and group, with exactly the session's environment, cwd and stdin /dev/null; its
 * exit status and signal come back as a spawn's would; when the launcher dies its runs end and
 * the next run gets a new resident; without a launcher runs enter through nsenter.
 */
import assert from "node:assert/strict";
import type { BashChild } from "../../../src/kernel/bash/bash_child.ts";
import { bashOwnVariables, type ShellState } from "../../../src/kernel/bash/shell_state.ts";
import { type ByteSink, runBash } from "../../../src/kernel/shells/run.ts";
import type { Sandboxing } from "../../../src/kernel/sandbox/command.ts";
import type { Resident } from "../../../src/kernel/sandbox/resident.ts";
import type { Residents } from "../../../src/kernel/sandbox/residents.ts";
import { processLimit } from "../../../src/kernel/sandbox/process_limit.ts";
import { heldElsewhere } from "../../../src/kernel/bash/pipe_holders.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import type { SandboxHost } from "../../../src/kernel/sandbox/probe.ts";
import {
  bytesRead,
  commandLine,
  groupMembers,
  groupSleeps,
  liveChildren,
  parentPid,
  processGroup,
  processLive,
} from "../../_support/proc.ts";
import { delay, waitUntil } from "../../_support/wait.ts";
import { withResidents } from "../../_support/residents.ts";

const BASH = "/bin/bash";

/** A resident for a project directory, the state of runs in it, and a scratch directory. */
interface Setup {
  proj: string;
  sandboxing: Sandboxing;
  residents: Residents;
  resident: Resident;
  state: ShellState;
  dir: string;
}

/** How a resident's runs start: by a launcher users may get, or entering through nsenter. */
interface Launch {
  label: string;
  host: SandboxHost;
  launches: boolean;
  /** The launcher's command line on the host. */
  command: RegExp;
  /** What this host lacks for it, or null. */
  missing: string | null;
  /** Which process reads the requests on the launcher's stdin: each spare, or the launcher. */
  reads: "spare" | "launcher";
}

/** The launcher compiled in C, where the host has a C compiler (`compiled_launcher.ts`). */
const COMPILED: Launch = {
  label: "the C launcher",
  host: HOST_SANDBOX,
  launches: true,
  command: /^\/dev\/shoal\/launcher$/,
  missing: NEEDS_TIER_B ??
    (HOST_SANDBOX.tier === "B" && HOST_SANDBOX.cc === null ? "needs a C compiler (cc)" : null),
  reads: "launcher",
};

/** Perl's launcher, which a host without a C compiler gets. */
const PERL_LAUNCHER: Launch = {
  label: "perl's launcher",
  host: HOST_SANDBOX.tier === "B" ? { ...HOST_SANDBOX, cc: null } : HOST_SANDBOX,
  launches: true,
  command: /^\/usr\/bin\/perl /,
  missing: NEEDS_TIER_B,
  reads: "spare",
};

/** Both launchers. */
const LAUNCHERS = [COMPILED, PERL_LAUNCHER];

/** No launcher: every run enters through nsenter. */
const NSENTER: Launch = { ...PERL_LAUNCHER, label: "nsenter", launches: false, command: /nsenter/ };

/** The ways runs start that this host has: each launcher it can run, and nsenter. */
const AVAILABLE = [...LAUNCHERS.filter((by) => by.missing === null), NSENTER];

/** Runs `body` with a resident started `by` for a fresh project, and a scratch directory of it. */
async function withResident(
  by: Launch,
  body: (s: Setup) => Promise<void>,
): Promise<void> {
  await withResidents(
    async ({ proj, residents, sandboxing: now }) => {
      const sandboxing = now();
      const resident = await residents.get("s", sandboxing);
      const state: ShellState = {
        cwd: proj,
        env: new Map([["PATH", "/usr/bin:/bin"], ["ODD", "a\nb=c d"], ["EMPTY", ""]]),
        vars: new Map(),
        funcs: new Map(),
        aliases: new Map(),
      };
      const dir = resident.pool.acquire();
      await body({ proj, sandboxing, residents, resident, state, dir });
      resident.pool.release(dir);
    },
    by.host,
    by.launches,
  );
}

/** All of a stream's text. */
async function all(stream: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(stream).text();
}

/**
 * Starts `script` in bash inside, held by the resident as a run is, once the launcher has had time
 * to announce its next spare (a run started before goes through nsenter). Each run has a scratch
 * directory of its own, as in the kernel: runs sharing one would share its output FIFOs.
 */
async function start(s: Setup, script: string, state = s.state): Promise<BashChild> {
  await delay(100);
  const dir = s.resident.pool.acquire();
  const child = s.resident.spawn(state, [BASH, "--norc", "-c", script], dir);
  s.resident.hold(child);
  return child;
}

/** What `child` wrote and how it ended. */
async function finish(child: BashChild) {
  const [out, err, status] = await Promise.all([
    all(child.stdout),
    all(child.stderr),
    child.status,
  ]);
  return { out, err, status };
}

for (const by of LAUNCHERS) {
  hostTest(
    `a launched run is a host process that leads its session and group, below the launcher (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        assert.equal(s.resident.launches, true, "the resident runs a launcher");
        const child = await start(s, "echo $$; sleep 300 & sleep 300; wait");
        assert.ok(await waitUntil(() => groupMembers(child.pid).length >= 3, 10000));
        assert.equal(processGroup(child.pid), child.pid, "the pid leads its group");
        const stat = Deno.readTextFileSync(`/proc/${child.pid}/stat`);
        assert.equal(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]), child.pid);
        assert.match(
          commandLine(parentPid(child.pid)) ?? "",
          by.command,
          "the launcher is its parent",
        );
        const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
        const nspid = status.match(/^NSpid:\t(.*)$/m)![1].split("\t");
        assert.equal(Number(nspid[0]), child.pid);
        assert.equal(nspid.length, 2, "it lives in the sandbox's PID namespace");
        assert.match(status, /^NoNewPrivs:\t1$/m, "no new privileges, as bwrap's command");
        assert.match(status, /^CapEff:\t0+$/m, "no capabilities");
        assert.match(status, /^CapPrm:\t0+$/m);
        assert.ok(heldElsewhere(child.pipes!), "its output FIFOs are known by what holds them");
        const members = groupMembers(child.pid);
        Deno.kill(-child.pid, "SIGSTOP");
        assert.ok(
          await waitUntil(
            () => members.every((pid) => ["T", "gone"].includes(procState(pid))),
            10000,
          ),
          "a signal to the host group stops every process",
        );
        Deno.kill(-child.pid, "SIGKILL");
        const { out, status: end } = await finish(child);
        assert.equal(out.trim(), nspid[1], "inside, its pid is the namespace's");
        assert.equal(end.signal, "SIGKILL");
        assert.ok(await waitUntil(() => members.every((pid) => !processLive(pid)), 10000));
        assert.equal(heldElsewhere(child.pipes!), false, "nothing holds them once the run is gone");
      });
    },
  );
}

/** The state letter of `pid` (/proc/PID/stat), or "gone". */
function procState(pid: number): string {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat[stat.lastIndexOf(")") + 2];
  } catch {
    return "gone";
  }
}

/** `env -0`'s output as a map. */
function parseEnv(out: string): Map<string, string> {
  return new Map(
    out.split("\0").filter((e) => e !== "").map((e) => {
      const at = e.indexOf("=");
      return [e.slice(0, at), e.slice(at + 1)] as [string, string];
    }),
  );
}

for (const by of LAUNCHERS) {
  hostTest(
    `a launched run has exactly the session's environment, its cwd, stdin /dev/null and no other file open than its three (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        await delay(100);
        const child = s.resident.spawn(s.state, ["/usr/bin/env", "-0"], s.dir);
        s.resident.hold(child);
        const { out, status } = await finish(child);
        assert.equal(status.success, true);
        assert.deepEqual(parseEnv(out), s.state.env);
        const where = await finish(await start(s, "pwd -P; readlink /proc/$$/fd/0"));
        assert.equal(where.out, `${s.proj}\n/dev/null\n`, where.err);
        await delay(100);
        // its three, and the directory the glob reads (the lowest free number)
        const fds = s.resident.spawn(s.state, [BASH, "-c", "cd /proc/$$/fd && echo *"], s.dir);
        s.resident.hold(fds);
        assert.equal((await finish(fds)).out, "0 1 2 3\n");
      });
    },
  );
}

for (const by of LAUNCHERS) {
  hostTest(
    `a launched run's exit status and signal come back; a missing program or cwd fails as a spawn (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        assert.deepEqual(await finish(await start(s, "echo out; echo err >&2; exit 7")), {
          out: "out\n",
          err: "err\n",
          status: { success: false, code: 7, signal: null },
        });
        const term = await finish(await start(s, "kill -TERM $$"));
        assert.deepEqual(term.status, { success: false, code: 143, signal: "SIGTERM" });
        const ok = await finish(await start(s, "true"));
        assert.deepEqual(ok.status, { success: true, code: 0, signal: null });
        await delay(100);
        const missing = s.resident.spawn(s.state, [`${s.proj}/no-such-program`], s.dir);
        s.resident.hold(missing);
        const m = await finish(missing);
        assert.equal(m.status.code, 127);
        assert.match(m.err, /no-such-program/);
        // a cwd the view does not show (the checks before a run refuse it: cwd_outside_sandbox)
        const sibling = `${s.proj}/../sibling`;
        await Deno.mkdir(sibling);
        const outside = await finish(await start(s, "true", { ...s.state, cwd: sibling }));
        assert.equal(outside.status.code, 126);
        assert.match(outside.err, /cannot enter/);
        await assert.rejects(start(s, "true", { ...s.state, cwd: `${s.proj}/gone` }));
      });
    },
  );
}

for (const by of LAUNCHERS) {
  hostTest(
    `when the launcher dies its runs end as killed, and the next run gets a new resident (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        const child = await start(s, "echo started; sleep 300");
        const reader = child.stdout.getReader();
        assert.equal(new TextDecoder().decode((await reader.read()).value), "started\n");
        const launcher = parentPid(child.pid);
        // Never a fallback's parent (this test runner): only the launcher is killed.
        assert.ok(launcher !== Deno.pid && by.command.test(commandLine(launcher) ?? ""));
        Deno.kill(launcher, "SIGKILL");
        assert.deepEqual(await child.status, { success: false, code: 137, signal: "SIGKILL" });
        assert.equal((await reader.read()).done, true, "its output ends");
        assert.ok(await waitUntil(() => !processLive(child.pid), 10000));
        await s.resident.ended;
        const fresh = async () => (await s.residents.get("s", s.sandboxing)) !== s.resident;
        assert.ok(await waitUntil(fresh, 5000));
        const next = await s.residents.get("s", s.sandboxing);
        assert.equal(next.launches, true);
        const dir = next.pool.acquire();
        const again = next.spawn(s.state, [BASH, "-c", "echo again"], dir);
        next.hold(again);
        assert.equal((await finish(again)).out, "again\n");
        next.pool.release(dir);
      });
    },
  );
}

hostTest(
  "without a launcher a run enters the resident through nsenter, as before",
  NEEDS_TIER_B,
  async () => {
    await withResident(NSENTER, async (s) => {
      assert.equal(s.resident.launches, false);
      // the run waits for `go` until its command line is read: a run already ended has none
      const child = await start(
        s,
        "echo $$; readlink /proc/$$/fd/0; until [ -e go ]; do sleep 0.01; done",
      );
      assert.match(commandLine(child.pid) ?? "", /nsenter/);
      await Deno.writeTextFile(`${s.proj}/go`, "");
      const { out, status } = await finish(child);
      assert.equal(status.success, true);
      assert.match(out, /^\d+\n\/dev\/null\n$/);
    });
  },
);

hostTest(
  "every run in a resident, started by its launcher or entering through nsenter, has the sandbox's process limit, soft and hard, and cannot raise it",
  NEEDS_TIER_B,
  async () => {
    for (const by of AVAILABLE) {
      await withResident(by, async (s) => {
        assert.equal(s.resident.launches, by.launches);
        const child = await start(
          s,
          "ulimit -Su; ulimit -Hu; ulimit -u unlimited 2>/dev/null; echo $?",
        );
        const { out, status } = await finish(child);
        assert.equal(status.success, true);
        const limit = processLimit();
        assert.equal(out, `${limit}\n${limit}\n1\n`, by.label);
      });
    }
  },
);

hostTest(
  "P-SBX-3 every run in a resident, started by its launcher or entering through nsenter, carries the socket filter: it cannot create a Unix socket, and its PERL5LIB and PERL5OPT reach its own perl, not the perl that installs the filter",
  NEEDS_TIER_B,
  async () => {
    for (const by of AVAILABLE) {
      await withResident(by, async (s) => {
        assert.equal(s.resident.launches, by.launches);
        // a module that records whether it could open a Unix socket where it was loaded
        await Deno.writeTextFile(
          `${s.proj}/Probe.pm`,
          `package Probe; open(my $f, '>>', '${s.proj}/loaded'); print $f (socket(my $s, 1, 1, 0) ? "free" : "filtered"), "\\n"; 1;\n`,
        );
        const state = {
          ...s.state,
          env: new Map([...s.state.env, ["PERL5LIB", s.proj], ["PERL5OPT", "-MProbe"]]),
        };
        const child = await start(
          s,
          `python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>&1 | tail -1; perl -e 1`,
          state,
        );
        const { out, status } = await finish(child);
        assert.equal(status.success, true);
        const how = by.label;
        assert.equal(out, "PermissionError: [Errno 1] Operation not permitted\n", how);
        assert.equal(await Deno.readTextFile(`${s.proj}/loaded`), "filtered\n", how);
      });
    }
  },
);

hostTest(
  "a run that enters through nsenter has exactly the session's environment, but its loader variables never reach nsenter and setpriv on the host (LD_PRELOAD would run the agent's library there, as the human)",
  NEEDS_TIER_B,
  async () => {
    await withResident(NSENTER, async (s) => {
      // the loader of every program started with LD_DEBUG writes LD_DEBUG_OUTPUT.<pid>, naming
      // the program: the one inside the sandbox must, nsenter and setpriv on the host must not
      const state = {
        ...s.state,
        env: new Map([...s.state.env, ["LD_DEBUG", "files"], ["LD_DEBUG_OUTPUT", `${s.proj}/ld`]]),
      };
      await delay(100);
      const child = s.resident.spawn(state, ["/usr/bin/env", "-0"], s.dir);
      s.resident.hold(child);
      const { out, status } = await finish(child);
      assert.equal(status.success, true);
      assert.deepEqual(parseEnv(out), state.env);
      const programs = [...Deno.readDirSync(s.proj)].filter((e) => e.name.startsWith("ld."))
        .flatMap((e) =>
          [
            ...Deno.readTextFileSync(`${s.proj}/${e.name}`).matchAll(/initialize program: (\S+)/g),
          ].map((m) => m[1].slice(m[1].lastIndexOf("/") + 1))
        );
      assert.ok(programs.includes("env"), `the run inside has the variables: ${programs}`);
      assert.deepEqual(programs.filter((p) => p === "nsenter" || p === "setpriv"), []);
    });
  },
);

for (const by of LAUNCHERS) {
  hostTest(
    `a waiting spare that is killed is replaced, a request it left unread is skipped: later runs are launched again (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        const first = await finish(await start(s, "echo one"));
        assert.equal(first.out, "one\n");
        const probe = await start(s, "sleep 300");
        const parent = parentPid(probe.pid);
        const spares = () =>
          Deno.readTextFileSync(`/proc/${parent}/task/${parent}/children`).trim().split(" ")
            .map(Number).filter((pid) => pid !== probe.pid);
        assert.ok(await waitUntil(() => spares().length === 1, 10000), "one spare waits");
        const [spare] = spares();
        Deno.kill(spare, "SIGKILL");
        assert.ok(
          await waitUntil(() => spares().length === 1 && spares()[0] !== spare, 10000),
          "a new spare waits",
        );
        // a spare killed before it read its request: that run ends killed, the next spare skips it
        await new Promise((resolve) => setTimeout(resolve, 200)); // the kernel has heard of it
        const [stopped] = spares();
        Deno.kill(stopped, "SIGSTOP");
        const doomed = await start(s, "echo doomed");
        assert.equal(doomed.pid, stopped, "the run went to the waiting spare");
        Deno.kill(stopped, "SIGKILL");
        assert.equal((await finish(doomed)).status.signal, "SIGKILL");
        // the probe still runs: a resident with nothing running is stopped a second later
        // (residents.ts, IDLE_GRACE_MS), its launcher with it
        let launched = false;
        for (let i = 0; i < 20 && !launched; i++) {
          const child = await start(s, "echo again; sleep 300");
          launched = parentPid(child.pid) === parent;
          // The spare has the run once it made its session and bash its echo: until then there
          // is no group to kill (ESRCH under load), and a kill before the echo loses its output.
          assert.ok(await waitUntil(() => groupSleeps(child.pid), 10000), "the run sleeps");
          Deno.kill(-child.pid, "SIGKILL");
          assert.equal((await finish(child)).out, "again\n");
        }
        assert.ok(launched, "runs are launched by the same launcher again");
        Deno.kill(-probe.pid, "SIGKILL");
        await finish(probe);
      });
    },
  );
}

for (const by of LAUNCHERS) {
  hostTest(
    `20 launched runs waiting silently for output hold up no file operation of the kernel (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        const dirs: string[] = [];
        const children: BashChild[] = [];
        const ends: Promise<unknown>[] = [];
        try {
          for (let i = 0; i < 20; i++) {
            dirs.push(s.resident.pool.acquire());
            await spareHeard(s.resident);
            const child = s.resident.spawn(
              s.state,
              [BASH, "--norc", "-c", "exec sleep 300"],
              dirs[i],
            );
            s.resident.hold(child);
            children.push(child);
            ends.push(finish(child)); // its output is read from now on, as the kernel's pumps do
            assert.match(
              commandLine(parentPid(child.pid)) ?? "",
              by.command,
              `run ${i} was launched`,
            );
          }
          // Deno runs its blocking calls on a few threads: 40 blocking FIFO reads would hold them
          // all, and this read would wait until the runs end (bounded here, they sleep 300 s).
          let timer: ReturnType<typeof setTimeout> | undefined;
          const bound = new Promise((resolve) => timer = setTimeout(resolve, 20_000, "stalled"));
          const read = Deno.readTextFile("/proc/self/stat").then(() => "read");
          assert.equal(await Promise.race([read, bound]), "read");
          clearTimeout(timer);
        } finally {
          // a group already gone must not hide the failure that ended the body early
          for (const child of children) {
            try {
              Deno.kill(-child.pid, "SIGKILL");
            } catch {
              // gone already (ESRCH)
            }
          }
          await Promise.all(ends);
          for (const dir of dirs) s.resident.pool.release(dir);
        }
      });
    },
  );
}

/**
 * Runs `body` with the host pid of the resident's launcher (the parent of a run it starts) while
 * a run of it, `keeper`, sleeps: a resident with nothing running is stopped a second later
 * (residents.ts, IDLE_GRACE_MS), its launcher and spares with it, and a body's steps between
 * runs (process table reads, pauses) may take longer than that on a loaded host.
 */
async function withLauncher(
  s: Setup,
  body: (launcher: number, keeper: number) => Promise<void>,
): Promise<void> {
  const keeper = await start(s, "sleep 300");
  try {
    await body(parentPid(keeper.pid), keeper.pid);
  } finally {
    Deno.kill(-keeper.pid, "SIGKILL");
    await finish(keeper);
  }
}

/** Resolves once the kernel knows `resident`'s launcher has a spare waiting (at most 10 s). */
async function spareHeard(resident: Resident): Promise<void> {
  assert.ok(
    await waitUntil(() => resident.untilSpare() === null, 10000),
    "the kernel heard of a spare",
  );
}

/** Lets the stopped process `pid` go on, unless it is gone (with its sandbox). */
function resume(pid: number): void {
  try {
    Deno.kill(pid, "SIGCONT");
  } catch {
    // gone
  }
}

/** The one spare waiting under `launcher` once it is there (and none of `not`). */
async function spareOf(launcher: number, ...not: number[]): Promise<number> {
  const spares = () => liveChildren(launcher).map((c) => c.pid).filter((pid) => !not.includes(pid));
  assert.ok(await waitUntil(() => spares().length === 1, 10000), "one spare waits");
  return spares()[0];
}

/** What `child` wrote and how it ended, or its group killed after `ms`: null then. */
async function finishWithin(child: BashChild, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ms));
  const finished = finish(child);
  const done = await Promise.race([finished, late]);
  clearTimeout(timer);
  if (done !== null) return done;
  for (const pid of [-child.pid, child.pid]) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // not a group leader yet, or gone
    }
  }
  await finished;
  return null;
}

for (const by of LAUNCHERS) {
  hostTest(
    `a spare killed in the middle of a request leaves the launcher's stream in step: the next runs start (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        await withLauncher(s, async (launcher, keeper) => {
          const stdin = Deno.openSync(`/proc/${launcher}/fd/0`, { write: true });
          try {
            // a request cut short: its length, and the spare killed before the rest comes
            const cut = await spareOf(launcher, keeper);
            const reader = by.reads === "spare" ? cut : launcher;
            const before = bytesRead(reader)!;
            stdin.writeSync(new TextEncoder().encode("00000100"));
            assert.ok(await waitUntil(() => bytesRead(reader)! > before, 10000), "it was read");
            Deno.kill(cut, "SIGKILL");
            // the rest of that request comes next, starting with what looks like a length
            const next = await spareOf(launcher, keeper, cut);
            const nextReader = by.reads === "spare" ? next : launcher;
            const quiet = bytesRead(nextReader)!;
            stdin.writeSync(new TextEncoder().encode("ffffffff" + "x".repeat(248)));
            assert.ok(
              await waitUntil(() => bytesRead(nextReader)! > quiet, 10000),
              "the rest was read",
            );
          } finally {
            stdin.close();
          }
          for (const word of ["two", "three"]) {
            const child = await start(s, `echo ${word}`);
            const done = await finishWithin(child, 10000);
            assert.notEqual(done, null, `the run of echo ${word} started within 10 s`);
            assert.equal(done!.out, `${word}\n`, done!.err);
            assert.equal(done!.status.success, true);
          }
          const last = await start(s, "sleep 300");
          assert.equal(parentPid(last.pid), launcher, "runs are launched by the same launcher");
          assert.ok(await waitUntil(() => groupSleeps(last.pid), 10000), "the run sleeps");
          Deno.kill(-last.pid, "SIGKILL");
          await finish(last);
        });
      });
    },
  );
}

for (const by of LAUNCHERS) {
  hostTest(
    `a session environment longer than one atomic pipe write reaches a launched run exactly, even after a spare was killed as its request was read (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        await withLauncher(s, async (launcher, keeper) => {
          const env = new Map(s.state.env);
          env.set("LONG", "x".repeat(5000));
          // more than a pipe holds (64 KiB) in all
          for (let i = 0; i < 20; i++) env.set(`BIG_${i}`, `${i}\n=`.repeat(1000));
          const big = { ...s.state, env };
          /** Runs `env -0` in `state` by the waiting spare `spare`: what it saw, or null when it hung. */
          const run = async (state: ShellState, spare: number) => {
            await spareHeard(s.resident);
            const child = s.resident.spawn(state, ["/usr/bin/env", "-0"], s.dir);
            s.resident.hold(child);
            assert.equal(child.pid, spare, "the waiting spare started it");
            return await finishWithin(child, 10000);
          };
          const first = await run(big, await spareOf(launcher, keeper));
          assert.equal(first?.status.success, true, first?.err);
          assert.deepEqual(parseEnv(first!.out), env);
          // a spare killed while it reads such a request: what the kernel wrote by then is in the
          // pipe, the rest cannot follow while this test holds the event loop
          const spare = await spareOf(launcher, keeper);
          const reader = by.reads === "spare" ? spare : launcher;
          Deno.kill(reader, "SIGSTOP");
          await delay(100);
          const child = s.resident.spawn(big, ["/usr/bin/env", "-0"], s.dir);
          s.resident.hold(child);
          await delay(200);
          const before = bytesRead(reader)!;
          Deno.kill(reader, "SIGCONT");
          const deadline = Date.now() + 10000;
          while (bytesRead(reader)! < before + 9 && Date.now() < deadline); // busy: no write goes on
          Deno.kill(spare, "SIGKILL");
          assert.ok(Date.now() < deadline, "some of it was read");
          assert.notEqual(await finishWithin(child, 10000), null, "the cut run ended");
          for (const state of [big, s.state, big]) {
            const done = await run(state, await spareOf(launcher, keeper));
            assert.notEqual(done, null, "it ended within 10 s");
            assert.equal(done!.status.success, true, done!.err);
            assert.deepEqual(parseEnv(done!.out), state.env);
            assert.deepEqual([...Deno.readDirSync(s.dir)].map((e) => e.name).sort(), [
              "err",
              "out",
              "state",
            ], "no run file is left");
          }
        });
      });
    },
  );
}

for (const by of LAUNCHERS) {
  hostTest(
    `a resident whose last run ended is not stopped idle under a spawn waiting for its launcher's next spare (${by.label})`,
    by.missing,
    async () => {
      await withResident(by, async (s) => {
        const first = await start(
          s,
          "readlink /proc/self/ns/mnt; until [ -e go ]; do sleep 0.01; done",
        );
        const launcher = parentPid(first.pid);
        assert.ok(launcher !== Deno.pid && by.command.test(commandLine(launcher) ?? ""));
        await Deno.writeTextFile(`${s.proj}/go`, ""); // read its parent before it ends
        const ran = await finish(first);
        assert.equal(ran.status.success, true, ran.err);
        // Nothing runs: the resident is stopped IDLE_GRACE_MS from now unless used. A spawn the
        // kernel does not hold (the probe's) takes the spare, and the launcher, stopped as a
        // descheduled one is, forks no next spare: a spawn now waits for it, as long as the
        // grace lasts (SPARE_WAIT_MS), and its wait began later.
        await spareHeard(s.resident);
        const taking = s.resident.pool.acquire();
        Deno.kill(launcher, "SIGSTOP"); // before: it would fork the next spare at once
        const taker = s.resident.spawn(s.state, [BASH, "--norc", "-c", "true"], taking);
        const dir = s.resident.pool.acquire();
        try {
          const spare = s.resident.untilSpare();
          assert.notEqual(spare, null, "the spawn waits for a spare");
          await spare;
          resume(launcher);
          const next = s.resident.spawn(
            s.state,
            [BASH, "--norc", "-c", "readlink /proc/self/ns/mnt"],
            dir,
          );
          s.resident.hold(next);
          const got = await finish(next);
          assert.equal(got.status.success, true, `the run failed: ${got.err}`);
          assert.equal(got.out, ran.out, "it ran in the same sandbox");
          assert.equal(await s.residents.get("s", s.sandboxing), s.resident, "still the resident");
        } finally {
          resume(launcher);
          await finish(taker);
          s.resident.pool.release(taking);
          s.resident.pool.release(dir);
        }
        let ended = false;
        s.resident.ended.then(() => ended = true);
        assert.ok(await waitUntil(() => ended, 10000), "stopped once idle after all");
      });
    },
  );
}

hostTest(
  "a resident stopped with its session refuses a spawn: nsenter would enter whatever now has its init's pid",
  NEEDS_TIER_B,
  async () => {
    await withResident(AVAILABLE[0], async (s) => {
      s.residents.drop("s");
      await s.resident.ended;
      assert.throws(
        () => s.resident.spawn(s.state, [BASH, "--norc", "-c", "true"], s.dir),
        /its sandbox has stopped/,
      );
    });
  },
);

/** A sink keeping the text written to it. */
class TextSink implements ByteSink {
  text = "";
  write(chunk: Uint8Array): Promise<void> {
    this.text += new TextDecoder().decode(chunk);
    return Promise.resolve();
  }
}

for (const by of LAUNCHERS) {
  hostTest(
    `a run whose resident is stopped while it waits for the launcher's next spare starts in a new one (${by.label})`,
    by.missing,
    async () => {
      const bashVariables = await bashOwnVariables(BASH);
      await withResident(by, async (s) => {
        // a run going on: the resident is never idle here (it is stopped with it, killed)
        const first = await start(s, "sleep 300");
        const ended = finish(first);
        const launcher = parentPid(first.pid);
        assert.ok(launcher !== Deno.pid && by.command.test(commandLine(launcher) ?? ""));
        // the spare taken by a spawn the kernel does not hold, the next one not forked
        await spareHeard(s.resident);
        const taking = s.resident.pool.acquire();
        Deno.kill(launcher, "SIGSTOP"); // before: it would fork the next spare at once
        const taker = s.resident.spawn(s.state, [BASH, "--norc", "-c", "true"], taking);
        try {
          const stdout = new TextSink();
          const stderr = new TextSink();
          const ran = runBash({
            bash: BASH,
            bashVariables,
            src: "echo ok",
            state: s.state,
            scratch: s.resident.pool,
            warm: null,
            stdout,
            stderr,
            sandbox: () => s.residents.get("s", s.sandboxing),
          });
          await delay(0); // it waits for the spare now
          assert.notEqual(s.resident.untilSpare(), null, "no spare waits");
          s.residents.drop("s"); // as when the host removes a protection of it (P-SBX-6)
          const exit = await ran;
          assert.equal(exit.status, 0, stderr.text);
          assert.equal(stdout.text, "ok\n");
          const next = await s.residents.get("s", s.sandboxing);
          assert.notEqual(next, s.resident);
        } finally {
          resume(launcher);
          await finish(taker);
          await ended;
        }
      });
    },
  );
}
